package secondaryindex

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// maxBuilds bounds the times one write builds its transaction again.
func (s *Set[T]) maxBuilds() int { return 2*len(s.indexes) + 4 }

// run submits w's transaction until it is applied or refused.
func (w *write[T]) run(ctx context.Context) error {
	for n := 0; ; n++ {
		err := w.round(ctx)
		if !errors.Is(err, errAgain) {
			return err
		}
		if n >= w.s.maxBuilds() {
			return &StepError{Step: "insert: submit", PartitionKey: w.pk, RowKey: w.rk, Err: entity.ErrContention}
		}
	}
}

// Insert adds e and its entries: its SamePartition entries in one entity
// group transaction with e, its OtherPartition entries after it (their
// unique values reserved first). An entity with e's keys is an error
// matching entity.ErrAlreadyExists; a unique value held by another is a
// *UniqueError. e's new ETag is written back into it (cleared when the
// transaction was found applied after a lost reply). opts may carry the
// caller's messages, committed with the insert (WriteOptions).
func (s *Set[T]) Insert(ctx context.Context, e *T, opts ...WriteOptions) error {
	if e == nil {
		return indexset.NilEntity()
	}
	pk, rk, err := indexset.KeyOf(e)
	if err != nil {
		return err
	}
	if err := s.validKeys(pk, rk); err != nil {
		return err
	}
	msgs, err := s.writeMessages("Insert", opts)
	if err != nil {
		return err
	}
	cur, err := intend(e)
	if err != nil {
		return err
	}
	w := s.newWrite(pk, rk)
	w.cur, w.msgs = &cur, msgs
	if err := w.run(ctx); err != nil {
		return w.cleanup(ctx, opError("insert", pk, rk, err))
	}
	w.finish(e)
	return nil
}
