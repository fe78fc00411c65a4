package large

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/tablekit/tablekit/internal/argerr"
)

// Stream is a blob field whose value is written from an io.Reader and read
// as an io.ReadCloser, never held in memory whole: for values too large
// to keep in a []byte, or that are passed through (a video to an HTTP
// response).
//
//	type Employee struct {
//		…
//		Video large.Stream `table:",blob"`
//	}
//	e.Video = large.NewStream(file)          // read once, when e is written
//	e, err = emps.Get(ctx, "Sales", "000123") // does not read the video
//	r, err := e.Video.Open(ctx)              // streams it, SHA-256 checked at the end
//
// A Stream read by Get keeps its stored value when the entity is written
// again: only the reference is written, no blob. The zero Stream is no
// value.
type Stream struct {
	r    io.Reader
	ref  Ref
	open func(ctx context.Context) (io.ReadCloser, error)
}

// NewStream returns a Stream whose value is what r yields up to EOF,
// read once by the write of its entity.
func NewStream(r io.Reader) Stream { return Stream{r: r} }

// Ref returns where the stored value is: zero for no value, and for a
// Stream not written yet.
func (s Stream) Ref() Ref { return s.ref }

// Size returns the stored value's size in bytes.
func (s Stream) Size() int64 { return s.ref.Size }

// errNotStored is Open's error for a Stream made by NewStream.
var errNotStored = errors.New("large: the Stream has not been written yet; its value is its reader")

// Open returns a reader of the stored value. It checks the size and
// SHA-256 the entity recorded as the bytes go by: the read that would
// return io.EOF returns a *BlobError matching ErrBlobCorrupt instead when
// they differ, so a caller that reads to EOF never takes bad bytes for
// good ones. A blob that is gone — the entity was replaced or deleted
// since it was read, and Config.DeleteDelay has passed — is a *BlobError
// matching ErrBlobMissing: read the entity again. A Stream of no value
// reads as empty. Close the reader.
func (s Stream) Open(ctx context.Context) (io.ReadCloser, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	switch {
	case s.r != nil:
		return nil, errNotStored
	case s.ref.IsZero():
		return io.NopCloser(strings.NewReader("")), nil
	case s.open == nil:
		return nil, errors.New("large: the Stream's reference was not read by a Table")
	}
	return s.open(ctx)
}
