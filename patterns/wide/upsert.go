package wide

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/errline"
)

// Upsert writes v whatever the stored version ("last writer wins"):
// it inserts the logical entity, or replaces it, properties v does not hold
// removed. It reads the current version first (to know its rows), so it
// costs one read and one transaction; when another writer commits,
// deletes or inserts in between it reads again (Config.Retry). The new
// ETag is stored into v.
//
// An Upsert whose reply was lost while another writer deleted the entity
// writes it again, as a resent upsert of one entity would: whether its
// first try was applied before the delete cannot be told, and its result
// is the same either way.
func (w *Table[T]) Upsert(ctx context.Context, v *T) error {
	if err := w.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	bag, err := w.toBag(ctx, v)
	if err != nil {
		return opError("upsert", v, err)
	}
	var res result
	err = w.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		st, err := w.read(ctx, bag.PartitionKey, bag.RowKey)
		var old *base
		switch {
		case errors.Is(err, entity.ErrNotFound):
		case err != nil:
			return err
		default:
			old = st.base()
		}
		res, err = w.commit(ctx, bag, old)
		var ot *overtakenError
		switch {
		case errors.As(err, &ot):
			// Deleted since, perhaps inserted again: whether this write
			// came before the delete is unknown, and does not matter to
			// a write of this version whatever the stored one — write
			// it over what is there now.
			return errline.Join(entity.ErrPreconditionFailed, err)
		case errors.Is(err, entity.ErrOutcomeUnknown):
			return err
		case old == nil && errors.Is(err, entity.ErrAlreadyExists):
			// Inserted by another writer since the read: replace it.
			return errline.Join(entity.ErrPreconditionFailed, err)
		case old != nil && errors.Is(err, entity.ErrNotFound):
			// Deleted by another writer since the read: insert it.
			return errline.Join(entity.ErrPreconditionFailed, err)
		}
		return err
	})
	if err != nil {
		return opError("upsert", v, err)
	}
	return setWritten(v, bag, res)
}
