package bloblog

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"time"
)

// Record is one log record: its time and its bytes, which may be anything
// (text with newlines, JSON, binary).
type Record struct {
	Time time.Time
	Data []byte
}

// The record format, version 1. Each record is
//
//	<time> SP <length> SP <data> LF
//
// where <time> is the record's time in UTC with nine fractional digits,
// always 30 bytes ("2014-07-31T18:00:00.123456789Z"), <length> the length of
// <data> in decimal without leading zeros, and <data> the record's bytes as
// given. A text log stays readable in any viewer, and any bytes fit: the
// length, not the line feed, ends the data. Records never span blocks, and
// an append block is atomic, so a blob is always a sequence of whole
// records.
const (
	// FormatVersion is written in each blob's metadata.
	FormatVersion = "1"
	timeLayout    = "2006-01-02T15:04:05.000000000Z"
	timeLen       = len(timeLayout)
	// maxLenDigits bounds <length>: a record fits in one 4 MiB block.
	maxLenDigits = 7
)

// headerLen is the framing added to a record of n data bytes.
func headerLen(n int) int { return timeLen + 1 + len(strconv.Itoa(n)) + 1 + 1 }

// validTime reports whether t can be written: years 0001 to 9999, the
// four-digit years of the format.
func validTime(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 1 && y <= 9999
}

// appendRecord appends the framed record to buf.
func appendRecord(buf []byte, t time.Time, data []byte) []byte {
	buf = t.UTC().AppendFormat(buf, timeLayout)
	buf = append(buf, ' ')
	buf = strconv.AppendInt(buf, int64(len(data)), 10)
	buf = append(buf, ' ')
	buf = append(buf, data...)
	return append(buf, '\n')
}

// errFormat is the cause of every *CorruptError: bytes that are not a
// record.
var errFormat = errors.New("not a record")

// parseHeader reads "<time> <length> " at the start of b. It returns the
// record's time, the data's length and the header's length, or
// io.ErrUnexpectedEOF when b ends inside the header, or errFormat when b
// does not start with a canonical header.
func parseHeader(b []byte) (t time.Time, n, hdr int, err error) {
	if len(b) < timeLen+3 {
		return time.Time{}, 0, 0, io.ErrUnexpectedEOF
	}
	ts := b[:timeLen]
	t, perr := time.Parse(timeLayout, string(ts))
	// Canonical only: the parser accepts forms the writer never makes.
	if perr != nil || string(t.AppendFormat(nil, timeLayout)) != string(ts) {
		return time.Time{}, 0, 0, errFormat
	}
	if b[timeLen] != ' ' {
		return time.Time{}, 0, 0, errFormat
	}
	i := timeLen + 1
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		if i-start == maxLenDigits {
			return time.Time{}, 0, 0, errFormat
		}
		n = n*10 + int(b[i]-'0')
		i++
	}
	if i == len(b) {
		return time.Time{}, 0, 0, io.ErrUnexpectedEOF
	}
	digits := i - start
	if digits == 0 || (digits > 1 && b[start] == '0') || b[i] != ' ' {
		return time.Time{}, 0, 0, errFormat
	}
	return t, n, i + 1, nil
}

// scanRecords walks the whole records at the start of b, calling fn with
// each record's time and end offset, and returns where the walk stopped:
// len(b), or the start of an incomplete or malformed record (err says
// which).
func scanRecords(b []byte, fn func(t time.Time, end int)) (int, error) {
	off := 0
	for off < len(b) {
		t, n, hdr, err := parseHeader(b[off:])
		if err != nil {
			return off, err
		}
		end := off + hdr + n + 1
		if end > len(b) {
			return off, io.ErrUnexpectedEOF
		}
		if b[end-1] != '\n' {
			return off, errFormat
		}
		fn(t, end)
		off = end
	}
	return off, nil
}

// decoder reads records from a stream, such as a blob's body.
type decoder struct {
	r   *bufio.Reader
	off int64 // offset of the next record
}

func newDecoder(r io.Reader) *decoder { return &decoder{r: bufio.NewReaderSize(r, 64<<10)} }

// next returns the next record; io.EOF at the end of the stream after a
// whole record, a *CorruptError (without the blob's name) for bytes that
// are not records.
func (d *decoder) next() (Record, error) {
	head, err := d.r.Peek(timeLen + 1 + maxLenDigits + 1)
	if len(head) == 0 && err == io.EOF {
		return Record{}, io.EOF
	}
	t, n, hdr, herr := parseHeader(head)
	if herr != nil {
		if herr == io.ErrUnexpectedEOF && err != nil && err != io.EOF {
			return Record{}, err // a read error, not a short stream
		}
		return Record{}, &CorruptError{Offset: d.off, Err: herr}
	}
	if _, err := d.r.Discard(hdr); err != nil {
		return Record{}, err
	}
	body := make([]byte, n+1)
	if _, err := io.ReadFull(d.r, body); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return Record{}, &CorruptError{Offset: d.off, Err: io.ErrUnexpectedEOF}
		}
		return Record{}, err
	}
	if body[n] != '\n' {
		return Record{}, &CorruptError{Offset: d.off, Err: errFormat}
	}
	d.off += int64(hdr + n + 1)
	return Record{Time: t, Data: body[:n]}, nil
}
