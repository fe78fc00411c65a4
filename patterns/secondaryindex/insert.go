package secondaryindex

import (
	"context"

	"github.com/tablekit/tablekit/internal/argerr"
)

// Insert adds e and its entries: its SamePartition entries in one entity
// group transaction with e, its OtherPartition entries after it (their
// unique values reserved first). An entity with e's keys is an error
// matching entity.ErrAlreadyExists; a unique value held by another is a
// *UniqueError. e's new ETag is written back into it (cleared when the
// transaction was found applied after a lost reply). opts may carry the
// caller's messages, committed with the insert (WriteOptions).
func (s *Set[T]) Insert(ctx context.Context, e *T, opts ...WriteOptions) error {
	if err := s.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	return s.core.Insert(ctx, e, opts)
}
