package wide

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/errline"
)

// Upsert writes v whatever the stored version ("last writer wins"):
// it inserts the logical entity, or replaces it, properties v does not hold
// removed. It reads the current version first (to know its rows), so it
// costs one read and one transaction; when another writer commits in
// between it reads again (Config.Retry). The new ETag is stored into v.
func (w *Table[T]) Upsert(ctx context.Context, v *T) error {
	bag, err := toBag(v)
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
		if old == nil && errors.Is(err, entity.ErrAlreadyExists) {
			// Inserted by another writer since the read: replace it.
			return errline.Join(entity.ErrPreconditionFailed, err)
		}
		return err
	})
	if err != nil {
		return opError("upsert", v, err)
	}
	return setWritten(v, bag, res)
}
