package wide

import (
	"context"

	"github.com/tablekit/tablekit/internal/argerr"
)

// Replace writes v over the version of its logical entity that v's ETag
// names — the ETag a Get, Insert, Replace or Modify returned — in one
// entity group transaction (one storage transaction), without reading it
// first: every row is written, and the rows the old version had beyond
// the new number are deleted in the same transaction. Properties v does
// not hold are removed.
//
// If another writer changed the entity since, Replace fails with
// entity.ErrPreconditionFailed and changes nothing; if it was deleted,
// with entity.ErrNotFound. A v without an ETag is refused with
// entity.ErrNoETag, an ETag that is not a logical entity's with
// ErrInvalidETag (use Upsert to write whatever the version). The new ETag
// is stored into v.
func (w *Table[T]) Replace(ctx context.Context, v *T) error {
	if err := w.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	bag, err := w.toBag(ctx, v)
	if err != nil {
		return opError("replace", v, err)
	}
	if bag.ETag == "" {
		return opError("replace", v, errNoETag)
	}
	n, seq, etag, err := parseETag(bag.ETag)
	if err != nil {
		return opError("replace", v, err)
	}
	res, err := w.commit(ctx, bag, &base{etag: etag, seq: seq, n: n})
	if err != nil {
		return opError("replace", v, err)
	}
	return setWritten(v, bag, res)
}
