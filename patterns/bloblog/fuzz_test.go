package bloblog

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

// FuzzRecords decodes arbitrary bytes as a stream of records: it never
// panics, it stops at the first byte that is not a record with a
// *CorruptError, and the records it returns re-encode to exactly the bytes
// they were read from (the format has one spelling per record). The block
// splitter agrees with the stream decoder.
func FuzzRecords(f *testing.F) {
	t0 := time.Date(2014, 7, 31, 18, 0, 0, 123456789, time.UTC)
	f.Add(appendRecord(nil, t0, []byte("hello")))
	f.Add(appendRecord(appendRecord(nil, t0, []byte("two\nlines")), t0.Add(time.Second), nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := newDecoder(bytes.NewReader(data))
		var re []byte
		var times []time.Time
		for {
			rec, err := d.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var ce *CorruptError
				if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error %v is not a *CorruptError", err)
				}
				if ce.Offset != int64(len(re)) {
					t.Fatalf("corrupt at %d, but %d bytes decoded", ce.Offset, len(re))
				}
				break
			}
			re = appendRecord(re, rec.Time, rec.Data)
			times = append(times, rec.Time)
		}
		if !bytes.Equal(re, data[:len(re)]) {
			t.Fatalf("records re-encode to %q, read from %q", re, data[:len(re)])
		}
		// scanRecords walks the same records.
		n := 0
		end, _ := scanRecords(data, func(tm time.Time, _ int) {
			if n >= len(times) || !tm.Equal(times[n]) {
				t.Fatalf("scanRecords record %d differs", n)
			}
			n++
		})
		if end != len(re) || n != len(times) {
			t.Fatalf("scanRecords stopped at %d after %d records; the decoder at %d after %d", end, n, len(re), len(times))
		}
		// A round trip of every decoded record, cut into blocks.
		if len(re) > 0 {
			blk := cutBlock(re, len(re))
			if len(blk.data) != len(re) || blk.n != len(times) {
				t.Fatalf("cutBlock took %d bytes, %d records of %d, %d", len(blk.data), blk.n, len(re), len(times))
			}
		}
	})
}

// FuzzMeta reads arbitrary metadata: never a panic, a range only when both
// ends are valid and in order, and what encode writes reads back.
func FuzzMeta(f *testing.F) {
	f.Add("1", "w", "2014-07-31T18:00:00.000000000Z", "2014-07-31T18:59:59.999999999Z", "Mintime")
	f.Add("", "", "garbage", "2014-07-31T18:00:00Z", "MAXTIME")
	f.Fuzz(func(t *testing.T, format, writer, lo, hi, oddKey string) {
		m := parseMeta(map[string]*string{metaFormat: &format, metaWriter: &writer, metaMin: &lo, metaMax: &hi, oddKey: &lo, "nil": nil})
		if m.hasRange {
			if m.min.After(m.max) {
				t.Fatalf("range %v after %v", m.min, m.max)
			}
			back := parseMeta(m.encode())
			if !back.hasRange || !back.min.Equal(m.min) || !back.max.Equal(m.max) || back.writer != m.writer || back.format != FormatVersion {
				t.Fatalf("metadata %+v read back as %+v", m, back)
			}
		}
		if !m.overlaps(m.min, m.min.Add(time.Nanosecond)) && validTime(m.min) {
			t.Fatalf("metadata %+v does not overlap its own start", m)
		}
	})
}

// FuzzBlobName: names built for any valid service and period parse back,
// names that parse rebuild to themselves, and name order is period order.
func FuzzBlobName(f *testing.F) {
	f.Add("queue", int64(1406829600), int64(1406833200), 1, "queue/2014/07/31/1800/000001.log")
	f.Add("api/frontend", int64(-62135596800), int64(253402300740), 999999, "api/frontend/0001/01/01/0000/000000.log")
	f.Fuzz(func(t *testing.T, service string, a, b int64, seq int, name string) {
		if checkService(service) != "" {
			return
		}
		if start, n, ok := parseName(service, name); ok {
			if back := blobName(service, start, n); back != name {
				t.Fatalf("%q parses to (%v, %d), which names %q", name, start, n, back)
			}
		}
		span := maxUnix - minUnix
		clamp := func(x int64) time.Time {
			x %= span
			if x < 0 {
				x += span
			}
			return time.Unix(minUnix+x, 0).UTC().Truncate(time.Minute)
		}
		seq = 1 + (seq%maxSeq+maxSeq)%maxSeq
		ta, tb := clamp(a), clamp(b)
		na, nb := blobName(service, ta, seq), blobName(service, tb, seq)
		start, n, ok := parseName(service, na)
		if !ok || !start.Equal(ta) || n != seq {
			t.Fatalf("%q parses to (%v, %d, %v), want (%v, %d)", na, start, n, ok, ta, seq)
		}
		if (na < nb) != ta.Before(tb) {
			t.Fatalf("names %q, %q do not sort as %v, %v", na, nb, ta, tb)
		}
	})
}

// The years 0001 to 9999, the names' and records' four-digit years.
var (
	minUnix = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	maxUnix = time.Date(9999, 12, 31, 23, 59, 0, 0, time.UTC).Unix()
)
