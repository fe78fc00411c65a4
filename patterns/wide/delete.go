package wide

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/errline"
)

// Delete removes every row of the logical entity in one entity group
// transaction, on condition that its version is still the one etag names
// (the ETag a read or write returned): entity.ErrPreconditionFailed
// otherwise, and nothing is deleted. With entity.AnyETag it deletes
// whatever the version, after a read (Config.Retry bounds the rounds when
// writers keep changing it).
//
// Deleting is idempotent: an entity that is not there is not an error.
// That is also what a delete retried after a lost reply finds.
func (w *Table[T]) Delete(ctx context.Context, pk, id, etag string) error {
	err := w.delete(ctx, pk, id, etag)
	if err != nil {
		return &Error{Op: "delete", PartitionKey: pk, ID: id, Err: err}
	}
	return nil
}

func (w *Table[T]) delete(ctx context.Context, pk, id, etag string) error {
	if err := checkKeys(pk, id); err != nil {
		return err
	}
	if etag != entity.AnyETag {
		n, _, headETag, err := parseETag(etag)
		if err != nil {
			return err
		}
		return w.remove(ctx, pk, id, headETag, n)
	}
	return w.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		st, err := w.read(ctx, pk, id)
		if errors.Is(err, entity.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return w.remove(ctx, pk, id, st.head.etag, len(st.rows))
	})
}

// remove deletes the head, on condition of its ETag, and rows 01 … n.
func (w *Table[T]) remove(ctx context.Context, pk, id, headETag string, n int) error {
	b := w.rows.NewBatch().Delete(pk, rowKey(id, 0), headETag)
	for k := 1; k <= n; k++ {
		b.Delete(pk, rowKey(id, k), entity.AnyETag)
	}
	_, err := w.rows.Submit(ctx, b)
	var te *entity.TransactionError
	var be *entity.BatchError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te):
		if te.Index == 0 && errors.Is(err, entity.ErrNotFound) {
			return nil // gone: deleted by another, or by this transaction before its reply was lost
		}
		return err
	case errors.As(err, &be):
		return err
	case ctx.Err() != nil:
		return errline.Join(entity.ErrOutcomeUnknown, err)
	}
	// No answer: the head says whether the entity is gone, or changed by
	// another writer so that this delete can no longer apply.
	d, gerr := w.rows.Get(ctx, pk, rowKey(id, 0))
	switch {
	case errors.Is(gerr, entity.ErrNotFound):
		return nil
	case gerr == nil && d.ETag != headETag:
		return fmt.Errorf("%w (found by reading the head after: %v)", entity.ErrPreconditionFailed, err)
	}
	return errline.Join(entity.ErrOutcomeUnknown, err, gerr)
}
