package secondaryindex

import (
	"context"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// Update replaces the stored entity by e, with its entries, on condition
// that it is still the version e was read as (e's ETag): a concurrent
// change is an error matching entity.ErrPreconditionFailed, an e without
// an ETag a *StepError naming the keys that matches entity.ErrNoETag,
// before any request. It reads the stored version first, to find
// its entries; Modify does the read and the change in one call. opts may
// carry the caller's messages, committed with the change (WriteOptions).
func (s *Set[T]) Update(ctx context.Context, e *T, opts ...WriteOptions) error {
	if err := s.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	return s.core.Update(ctx, e, opts)
}

// Modify reads the entity with keys pk, rk, lets change edit it, and
// writes it back with its entries, on condition that nobody wrote it in
// between; when somebody did, it starts again from a fresh read, at most
// opts.Retry.Attempts times (the zero opts.Retry means Config.Retry),
// then entity.ErrContention. change may return an error to give up
// (returned as is); it must not change the keys. The written entity is
// returned, with its new ETag.
//
// The primary is written whole, as its entries are computed from all of
// it: opts.Mode 0 means entity.Replace, and Merge (or an unknown mode) is
// a *ModeError matching entity.ErrInvalid, before any request.
//
// With opts.Create a missing primary is created: change gets T's zero
// value with the keys set and no ETag, as entity.Table.Modify gives it,
// and what it leaves is inserted with its entries, as Insert does. A
// creator that loses to another (the insert refused: the primary exists
// now), or whose primary is deleted between its read and its write,
// starts again from the read, so racing creators each apply their change
// once (TestModifyCreate). Without Create a missing primary is an error
// matching entity.ErrNotFound.
//
// Under lost replies Modify is exactly-once: the transaction carries
// entity's write token, and a resent transaction's refusal is settled by
// reading the primary back (see entity.Table.WithWriteTokens).
//
// wopts may carry the caller's messages, committed with the change
// (WriteOptions): the round that commits carries them, so they are sent
// once whatever the rounds lost to other writers.
func (s *Set[T]) Modify(ctx context.Context, pk, rk string, change func(*T) error, opts entity.ModifyOptions, wopts ...WriteOptions) (T, error) {
	if err := s.ok(); err != nil {
		return *new(T), err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return *new(T), err
	}
	return s.core.Modify(ctx, pk, rk, change, opts, wopts)
}
