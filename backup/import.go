package backup

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// Mode is how Import writes an entity whose keys are already stored.
type Mode int

const (
	// Upsert replaces the stored entity (InsertOrReplace): a repeated import
	// is harmless.
	Upsert Mode = iota
	// Insert writes only entities that are not stored; one stored with the
	// same properties counts as done, one that differs is a conflict,
	// reported and left as it is.
	Insert
)

// ImportOptions tunes Import and ImportCSV.
type ImportOptions struct {
	// Mode is Upsert (0) or Insert.
	Mode Mode
	// SegmentEntities is the most entities written between checkpoints; 0
	// means 1,000.
	SegmentEntities int
	// Concurrency is BulkWrite's partitions at once; 0 means its default.
	Concurrency int
	// ResumeAfter skips that many entities of the input: an
	// ImportCheckpoint's Entities from a run that did not finish.
	ResumeAfter int64
	// Checkpoint, if set, is called after each segment whose every entity
	// is settled (see the package doc); an error from it ends the import.
	Checkpoint func(ImportCheckpoint) error
	// Progress, if set, is called after each segment.
	Progress func(Progress)
}

// ImportCheckpoint is a point an import can resume from.
type ImportCheckpoint struct {
	Entities int64 // ImportOptions.ResumeAfter of the next run
}

// ImportSummary is what an import did.
type ImportSummary struct {
	Entities int64 // entities of the input handled (with ResumeAfter)
	Written  int64 // written by this run
	Existing int64 // Insert mode: already stored with the same properties
	// Conflicts are Insert mode's stored entities whose properties differ
	// from the input's: left as they are.
	Conflicts []EntityError
	// Failed are entities not written for another reason, in input order,
	// each with its line, keys and error: a line that does not decode (a
	// *LineError), an invalid entity, a refusal by the service.
	Failed  []EntityError
	Elapsed time.Duration
}

// ImportError reports an import that finished with entities not written:
// ImportSummary's Failed and Conflicts name them.
type ImportError struct {
	Failed, Conflicts int
	First             error
}

func (e *ImportError) Error() string {
	if e == nil {
		return "backup: import: <nil>"
	}
	return fmt.Sprintf("backup: import: %d entities failed, %d in conflict; first: %s", e.Failed, e.Conflicts, strings.TrimPrefix(fmt.Sprint(e.First), "backup: "))
}

func (e *ImportError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.First
}

// StoppedError reports an import stopped by a failure that another run may
// not meet (a transport error, an unknown outcome, throttling): the segment
// starting at Line was written in part, and no checkpoint counts it, so
// resuming from the last checkpoint writes it again. Err is the first such
// entity's *EntityError.
type StoppedError struct {
	Line int
	Err  error
}

func (e *StoppedError) Error() string {
	if e == nil {
		return "backup: import stopped: <nil>"
	}
	return fmt.Sprintf("backup: import stopped in the segment from line %d (resume from the last checkpoint): %v", e.Line, e.Err)
}

func (e *StoppedError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

func (o ImportOptions) withDefaults() (ImportOptions, error) {
	switch {
	case o.Mode != Upsert && o.Mode != Insert:
		return o, &ConfigError{Field: "ImportOptions.Mode", Reason: fmt.Sprintf("%d is neither Upsert nor Insert", o.Mode)}
	case o.SegmentEntities < 0:
		return o, &ConfigError{Field: "ImportOptions.SegmentEntities", Reason: fmt.Sprintf("%d is negative (0 means 1,000)", o.SegmentEntities)}
	case o.Concurrency < 0:
		return o, &ConfigError{Field: "ImportOptions.Concurrency", Reason: fmt.Sprintf("%d is negative", o.Concurrency)}
	case o.ResumeAfter < 0:
		return o, &ConfigError{Field: "ImportOptions.ResumeAfter", Reason: fmt.Sprintf("%d is negative", o.ResumeAfter)}
	}
	if o.SegmentEntities == 0 {
		o.SegmentEntities = 1000
	}
	return o, nil
}

// line is one entity of the input with its line number; err, when set,
// is why that line alone cannot be written (an undecodable entity), and
// the import goes on with the next.
type line struct {
	n   int
	d   entity.DynamicEntity
	err error
}

// Import reads a backup made by Export from r and writes its entities to
// tbl (see the package doc for the guarantee).
func Import(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], r io.Reader, opts ImportOptions) (ImportSummary, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return ImportSummary{}, err
	}
	if tbl == nil || r == nil {
		return ImportSummary{}, &ConfigError{Field: "table or reader", Reason: ReasonNil}
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return ImportSummary{}, err
	}
	cr := &countingReader{r: r}
	return write(ctx, tbl, readLines(cr), cr, opts)
}

// readLines yields the entities of a backup's lines after its header. The
// lines of a gzip member are yielded only once the member has been read to
// its end and its checksum verified, so nothing of a damaged or truncated
// member is ever written. A line that does not decode is yielded with its
// error (and the keys it shows); a stream that cannot be read on ends the
// sequence with a *LineError.
func readLines(r io.Reader) iter.Seq2[line, error] {
	return func(yield func(line, error) bool) {
		// br is a ByteReader, so gzip reads no further than each member.
		br := bufio.NewReaderSize(r, 64<<10)
		zr, err := gzip.NewReader(br)
		if err != nil {
			yield(line{}, &LineError{Line: 1, Err: fmt.Errorf("not gzip: %w", err)})
			return
		}
		defer zr.Close()
		zr.Multistream(false)
		lr := bufio.NewReaderSize(zr, 64<<10)
		var (
			n       int    // lines complete so far
			partial []byte // a line begun and not yet ended
			pending []line // decoded lines of the member being read
		)
		for {
			b, err := lr.ReadBytes('\n')
			if len(b) > 0 && b[len(b)-1] == '\n' {
				n++
				if len(partial) > 0 {
					b = append(partial, b...)
					partial = nil
				}
				b = b[:len(b)-1]
				// CR LF ends a line too (a backup that passed through a
				// Windows tool): JSON holds a CR only escaped.
				b = bytes.TrimSuffix(b, []byte{'\r'})
				if n == 1 {
					if string(b) != header {
						yield(line{}, &LineError{Line: 1, Err: fmt.Errorf("header %.40q is not %s", b, header)})
						return
					}
				} else {
					pending = append(pending, decodeLine(n, b))
				}
			} else if len(b) > 0 {
				partial = append(partial, b...)
			}
			if err == nil {
				continue
			}
			if err != io.EOF {
				yield(line{}, &LineError{Line: n + 1, Err: err})
				return
			}
			// The member ended and its checksum matched: its lines stand.
			for _, l := range pending {
				if !yield(l, nil) {
					return
				}
			}
			pending = pending[:0]
			switch err := zr.Reset(br); {
			case err == io.EOF:
				switch {
				case len(partial) > 0:
					yield(line{}, &LineError{Line: n + 1, Err: errors.New("truncated: the last line has no end")})
				case n == 0:
					yield(line{}, &LineError{Line: 1, Err: errors.New("empty input: no header")})
				}
				return
			case err != nil:
				yield(line{}, &LineError{Line: n + 1, Err: fmt.Errorf("after line %d: %w", n, err)})
				return
			}
			zr.Multistream(false)
			lr.Reset(zr)
		}
	}
}

// decodeLine decodes line n of a backup; a line that does not decode
// carries its error, and the keys it shows where they can be read.
func decodeLine(n int, b []byte) line {
	var d entity.DynamicEntity
	err := entity.Unmarshal(b, &d)
	if err == nil {
		err = checkMembers(b)
	}
	if err != nil {
		pk, rk := keysOf(b)
		return line{n: n, d: entity.DynamicEntity{PartitionKey: pk, RowKey: rk}, err: &LineError{Line: n, Err: err}}
	}
	return line{n: n, d: d}
}

// keysOf reads the keys of a line that may not decode as an entity, even
// one cut short: each is the first such member whose string is whole.
func keysOf(b []byte) (pk, rk string) {
	return keyIn(b, pkMember), keyIn(b, rkMember)
}

var (
	pkMember = regexp.MustCompile(`"PartitionKey"\s*:\s*("(?:[^"\\]|\\.)*")`)
	rkMember = regexp.MustCompile(`"RowKey"\s*:\s*("(?:[^"\\]|\\.)*")`)
)

func keyIn(b []byte, re *regexp.Regexp) string {
	m := re.FindSubmatch(b)
	if m == nil {
		return ""
	}
	var s string
	_ = json.Unmarshal(m[1], &s)
	return s
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// write imports the entities of lines in segments.
func write(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], lines iter.Seq2[line, error], cr *countingReader, opts ImportOptions) (ImportSummary, error) {
	start := time.Now()
	sum := ImportSummary{}
	var seg []line
	flush := func() error {
		if len(seg) == 0 {
			return nil
		}
		if err := writeSegment(ctx, tbl, seg, opts, &sum); err != nil {
			return err
		}
		sum.Entities += int64(len(seg))
		seg = seg[:0]
		if opts.Checkpoint != nil {
			if err := opts.Checkpoint(ImportCheckpoint{Entities: sum.Entities}); err != nil {
				return err
			}
		}
		if opts.Progress != nil {
			opts.Progress(progress(sum.Entities, cr.n, opts.ResumeAfter, start))
		}
		return nil
	}
	var skipped int64
	for l, err := range lines {
		if err != nil {
			// Nothing of the unreadable part is written; what came before
			// it is.
			if ferr := flush(); ferr != nil {
				err = errors.Join(err, ferr)
			}
			sum.Elapsed = time.Since(start)
			return sum, err
		}
		if skipped < opts.ResumeAfter {
			skipped++
			sum.Entities++
			continue
		}
		seg = append(seg, l)
		if len(seg) >= opts.SegmentEntities {
			if err := flush(); err != nil {
				sum.Elapsed = time.Since(start)
				return sum, err
			}
		}
	}
	if skipped < opts.ResumeAfter {
		// Nothing was sent: every entity of the input was skipped.
		sum.Elapsed = time.Since(start)
		return sum, &ConfigError{Field: "ImportOptions.ResumeAfter", Reason: fmt.Sprintf("skips %d entities, and the input has only %d: a checkpoint of another input", opts.ResumeAfter, skipped)}
	}
	err := flush()
	sum.Elapsed = time.Since(start)
	if err != nil {
		return sum, err
	}
	if len(sum.Failed)+len(sum.Conflicts) > 0 {
		ie := &ImportError{Failed: len(sum.Failed), Conflicts: len(sum.Conflicts)}
		if len(sum.Failed) > 0 {
			ie.First = &sum.Failed[0]
		} else {
			ie.First = &sum.Conflicts[0]
		}
		return sum, ie
	}
	return sum, nil
}

func writeSegment(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], seg []line, opts ImportOptions, sum *ImportSummary) error {
	// Failures are reported in input order.
	from := len(sum.Failed)
	defer func() { sortFrom(sum.Failed, from) }()
	ents := make([]entity.DynamicEntity, 0, len(seg))
	at := make([]int, 0, len(seg)) // the seg index of each entity written
	for i := range seg {
		if seg[i].err != nil {
			l := seg[i]
			sum.Failed = append(sum.Failed, EntityError{Line: l.n, PartitionKey: l.d.PartitionKey, RowKey: l.d.RowKey, Err: l.err})
			continue
		}
		ents = append(ents, seg[i].d)
		at = append(at, i)
	}
	if len(ents) == 0 {
		return nil
	}
	mode := entity.OpUpsertReplace
	if opts.Mode == Insert {
		mode = entity.OpInsert
	}
	outs, err := tbl.BulkWrite(ctx, ents, entity.BulkOptions{Mode: mode, Concurrency: opts.Concurrency, KeepWriteTokens: true})
	if err != nil {
		var be *entity.BulkError
		if !errors.As(err, &be) || len(outs) != len(ents) {
			return fmt.Errorf("backup: write lines %d to %d: %w", seg[0].n, seg[len(seg)-1].n, err)
		}
	}
	var unsettled *EntityError
	for i, o := range outs {
		l := seg[at[i]]
		switch {
		case o.Err == nil:
			sum.Written++
		case opts.Mode == Insert && errors.Is(o.Err, entity.ErrAlreadyExists):
			same, gerr := sameAsStored(ctx, tbl, &l.d)
			switch {
			case gerr != nil:
				// Whether the stored entity is the backup's is unknown: a
				// later run may read it.
				ee := EntityError{Line: l.n, PartitionKey: l.d.PartitionKey, RowKey: l.d.RowKey, Err: fmt.Errorf("stored, but reading it back to compare failed: %w", gerr)}
				sum.Failed = append(sum.Failed, ee)
				if !settled(gerr) && unsettled == nil {
					unsettled = &ee
				}
			case same:
				sum.Existing++
			default:
				sum.Conflicts = append(sum.Conflicts, EntityError{Line: l.n, PartitionKey: l.d.PartitionKey, RowKey: l.d.RowKey,
					Err: fmt.Errorf("stored with other properties: %w", o.Err)})
			}
		default:
			ee := EntityError{Line: l.n, PartitionKey: l.d.PartitionKey, RowKey: l.d.RowKey, Err: o.Err}
			sum.Failed = append(sum.Failed, ee)
			if !settled(o.Err) && unsettled == nil {
				unsettled = &ee
			}
		}
	}
	if unsettled != nil {
		return &StoppedError{Line: seg[0].n, Err: unsettled}
	}
	return nil
}

// sortFrom sorts fs[from:] by line.
func sortFrom(fs []EntityError, from int) {
	slices.SortStableFunc(fs[from:], func(a, b EntityError) int { return a.Line - b.Line })
}

// settled reports whether an entity's failure is its own and final — the
// entity is invalid, or the service refused its content — so that the
// import may go on past it; any other failure (a transport error, an
// unknown outcome, throttling, a missing table, a refused credential) may
// be gone on the next run, and stops the import before its checkpoint.
func settled(err error) bool {
	var le *LineError
	if errors.Is(err, entity.ErrInvalid) || errors.As(err, &le) {
		return true
	}
	if errors.Is(err, entity.ErrOutcomeUnknown) {
		return false
	}
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusBadRequest
}

// sameAsStored reports whether the stored entity with d's keys has exactly
// d's properties (entity.DynamicEntity.SameContent).
func sameAsStored(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], d *entity.DynamicEntity) (bool, error) {
	got, err := tbl.Get(ctx, d.PartitionKey, d.RowKey)
	if err != nil {
		return false, err
	}
	return got.SameContent(*d), nil
}
