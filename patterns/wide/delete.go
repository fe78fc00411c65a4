package wide

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
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
// That is also what a delete retried after a lost reply finds; and when
// the resend finds the entity inserted again by another writer (a new
// life, told by its sequence numbers), the version this Delete targeted
// is gone too: Delete reports success and leaves the new entity alone.
func (w *Table[T]) Delete(ctx context.Context, pk, id, etag string) error {
	if err := w.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
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
		n, seq, headETag, err := parseETag(etag)
		if err != nil {
			return err
		}
		return w.remove(ctx, pk, id, headETag, seq, n)
	}
	return w.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		st, err := w.read(ctx, pk, id)
		if errors.Is(err, entity.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return w.remove(ctx, pk, id, st.head.etag, st.head.seq, len(st.rows))
	})
}

// remove deletes the head, on condition of its ETag (the version with
// sequence number seq), and rows 01 … n.
func (w *Table[T]) remove(ctx context.Context, pk, id, headETag string, seq int64, n int) error {
	b := w.rows.NewBatch().Delete(pk, rowKey(id, 0), headETag)
	for k := 1; k <= n; k++ {
		b.Delete(pk, rowKey(id, k), entity.AnyETag)
	}
	if err := ctx.Err(); err != nil {
		return err // nothing sent: certain, not in doubt
	}
	_, err := w.rows.Submit(ctx, b)
	var te *entity.TransactionError
	var be *entity.BatchError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te):
		// Certain (see settle): the service refused this transaction.
		if te.Index == 0 && errors.Is(err, entity.ErrNotFound) {
			return nil // gone: deleted by another, or by this transaction before its reply was lost
		}
		return err
	case errors.As(err, &be):
		return err
	case ctx.Err() != nil:
		return errline.Join(entity.ErrOutcomeUnknown, err)
	}
	// No certain answer: the head says whether the version is gone, or
	// was followed by another writer's so that this delete can no longer
	// apply.
	h, gerr := w.readHead(ctx, pk, id)
	switch {
	case gerr != nil:
		return errline.Join(entity.ErrOutcomeUnknown, err, gerr)
	case h == nil:
		return nil
	case h.etag == headETag:
		return errline.Join(entity.ErrOutcomeUnknown, err) // it may yet arrive
	case sameLife(h, seq) && h.seq > seq:
		// Another write followed the version in its life, which a
		// delete would have ended: this delete was not applied.
		return fmt.Errorf("%w (found by reading the head after: %v)", entity.ErrPreconditionFailed, err)
	}
	// The entity there is of another life: the version this delete
	// targeted was deleted — by this delete before its reply was lost, or
	// by another — and another writer inserted the entity again.
	return nil
}
