package bloblog

import (
	"context"
	"errors"
	"io"
	"iter"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/internal/argerr"
)

// Reader reads the records of a service's log over a time range.
type Reader struct {
	c   *container.Client
	cfg Config
}

// NewReader returns a Reader of the log that Loggers with the same
// Config.Service and Config.Period write to c. Nothing is sent. A Reader
// reads the container its Loggers write and creates nothing: it has no
// Provision (Logger.Provision creates the container).
func NewReader(c *container.Client, cfg Config) (*Reader, error) {
	if c == nil {
		return nil, &ConfigError{Field: "container", Reason: ReasonNil}
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Reader{c: c, cfg: cfg}, nil
}

// Blob is a log blob that may hold records of a range: its name, size and
// the time range its metadata gives (zero when unknown).
type Blob struct {
	Name     string
	Size     int64
	Min, Max time.Time
}

// Blobs lists the blobs of the periods that overlap [from, to), in name
// order (period, then sequence), leaving out those whose metadata says
// they hold no record in the range. It lists one name prefix per day of
// the range, narrowed to the periods of the range.
func (r *Reader) Blobs(ctx context.Context, from, to time.Time) ([]Blob, error) {
	if err := r.ready(ctx); err != nil {
		return nil, err
	}
	if err := checkRange(from, to); err != nil {
		return nil, err
	}
	first, last := r.cfg.periodOf(from), r.cfg.periodOf(to.Add(-1))
	var out []Blob
	for day := first; !day.After(last); {
		// The periods of this day: from day to the last one that starts
		// before the next midnight (or last).
		midnight := time.Date(day.Year(), day.Month(), day.Day()+1, 0, 0, 0, 0, time.UTC)
		dayLast := r.cfg.periodOf(midnight.Add(-1))
		if dayLast.Before(day) {
			dayLast = day // a period longer than the rest of the day
		}
		if dayLast.After(last) {
			dayLast = last
		}
		lo, hi := periodDir(r.cfg.Service, day), periodDir(r.cfg.Service, dayLast)
		prefix := commonPrefix(lo, hi)
		pager := r.c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &prefix, Include: container.ListBlobsInclude{Metadata: true}})
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				return nil, &BlobError{Op: "list", Blob: prefix, Err: err}
			}
			for _, it := range page.Segment.BlobItems {
				name := deref(it.Name)
				start, _, ok := parseName(r.cfg.Service, name)
				if !ok || start.Before(day) || start.After(dayLast) {
					continue
				}
				m := parseMeta(it.Metadata)
				var size int64
				if it.Properties != nil {
					size = deref(it.Properties.ContentLength)
				}
				if size == 0 || !m.overlaps(from, to) {
					continue
				}
				out = append(out, Blob{Name: name, Size: size, Min: m.min, Max: m.max})
			}
		}
		day = dayLast.Add(r.cfg.Period)
	}
	return out, nil
}

// Read yields the records whose time is in [from, to): blob by blob in name
// order, each blob's records in the order they were appended (for one
// Logger, the order of its Append calls). Blobs whose metadata range does
// not meet [from, to) are not read. Records appended after Read listed a
// blob may or may not be included.
func (r *Reader) Read(ctx context.Context, from, to time.Time) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		if err := r.ready(ctx); err != nil {
			yield(Record{}, err)
			return
		}
		blobs, err := r.Blobs(ctx, from, to)
		if err != nil {
			yield(Record{}, err)
			return
		}
		for _, b := range blobs {
			if !r.readBlob(ctx, b.Name, from, to, yield) {
				return
			}
		}
	}
}

// readBlob streams one blob's records in [from, to) to yield; false when
// the sequence must end.
func (r *Reader) readBlob(ctx context.Context, name string, from, to time.Time, yield func(Record, error) bool) bool {
	resp, err := r.c.NewBlobClient(name).DownloadStream(ctx, nil)
	if err != nil {
		yield(Record{}, &BlobError{Op: "read", Blob: name, Err: err})
		return false
	}
	body := resp.NewRetryReader(ctx, nil)
	defer body.Close()
	d := newDecoder(body)
	for {
		rec, err := d.next()
		if err == io.EOF {
			return true
		}
		if err != nil {
			var ce *CorruptError
			if errors.As(err, &ce) {
				ce.Blob = name
			} else {
				err = &BlobError{Op: "read", Blob: name, Err: err}
			}
			yield(Record{}, err)
			return false
		}
		if rec.Time.Before(from) || !rec.Time.Before(to) {
			continue
		}
		if !yield(rec, nil) {
			return false
		}
	}
}

func checkRange(from, to time.Time) error {
	if !validTime(from) || !validTime(to) {
		return &ConfigError{Field: "range", Reason: "times outside the years 0001 to 9999"}
	}
	if !from.Before(to) {
		return &ConfigError{Field: "range", Reason: "from " + from.UTC().Format(time.RFC3339Nano) + " is not before to " + to.UTC().Format(time.RFC3339Nano)}
	}
	return nil
}

// ready refuses a nil or zero Reader, which NewReader never returns, and
// a nil ctx.
func (r *Reader) ready(ctx context.Context) error {
	if r == nil || r.c == nil {
		return &ConfigError{Field: "Reader", Reason: argerr.ZeroValue}
	}
	return argerr.Ctx(ctx, ctxError)
}
