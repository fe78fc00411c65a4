package secondaryindex

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// Update replaces the stored entity by e, with its entries, on condition
// that it is still the version e was read as (e's ETag): a concurrent
// change is an error matching entity.ErrPreconditionFailed, an e without
// an ETag a *StepError naming the keys that matches entity.ErrNoETag,
// before any request. It reads the stored version first, to find
// its entries; Modify does the read and the change in one call. opts may
// carry the caller's messages, committed with the change (WriteOptions).
func (s *Set[T]) Update(ctx context.Context, e *T, opts ...WriteOptions) error {
	if e == nil {
		return indexset.NilEntity()
	}
	sys, err := entity.SystemOf(e)
	if err != nil {
		return err
	}
	pk, rk := sys.PartitionKey, sys.RowKey
	if sys.ETag == "" {
		return indexset.NoETag[pkg](pk, rk, "Get or a lookup with Verify")
	}
	if err := s.validKeys(pk, rk); err != nil {
		return err
	}
	msgs, err := s.writeMessages("Update", opts)
	if err != nil {
		return err
	}
	cur, err := intend(e)
	if err != nil {
		return err
	}
	w := s.newWrite(pk, rk)
	w.cur, w.msgs = &cur, msgs
	err = func() error {
		for n := 0; ; n++ {
			old, found, err := s.read(ctx, pk, rk)
			if err != nil {
				return indexset.ReadPrimary[pkg]("update", pk, rk, err)
			}
			if !found {
				return indexset.NotFound[pkg]("update", pk, rk)
			}
			if old.etag != sys.ETag {
				return indexset.Stale[pkg]("update", pk, rk, old.etag, sys.ETag)
			}
			w.old = &old
			err = w.round(ctx)
			if !errors.Is(err, errAgain) {
				return err
			}
			if n >= s.maxBuilds() {
				return &StepError{Step: "update: submit", PartitionKey: pk, RowKey: rk, Err: entity.ErrContention}
			}
		}
	}()
	if err != nil {
		return w.cleanup(ctx, opError("update", pk, rk, err))
	}
	w.finish(e)
	return nil
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
	var out T
	if err := indexset.CheckMode[pkg]("Modify", opts.Mode); err != nil {
		return out, err
	}
	msgs, err := s.writeMessages("Modify", wopts)
	if err != nil {
		return out, err
	}
	if change == nil {
		return out, indexset.NilChange()
	}
	if err := s.validKeys(pk, rk); err != nil {
		return out, err
	}
	w := s.newWrite(pk, rk)
	w.msgs = msgs
	err = indexset.Retry(opts.Retry, s.cfg.Retry).Retry(ctx, func(ctx context.Context) error {
		for n := 0; ; n++ {
			old, found, err := s.read(ctx, pk, rk)
			if err != nil {
				return indexset.ReadPrimary[pkg]("modify", pk, rk, err)
			}
			if !found && !opts.Create {
				return indexset.NotFound[pkg]("modify", pk, rk)
			}
			// change gets its own copy: old's entries are computed from
			// old.e, which a change of shared slices or maps must not touch.
			var e T
			if found {
				err = entity.Unmarshal(old.raw, &e)
			} else {
				e, err = indexset.Fresh[T](pk, rk)
			}
			if err != nil {
				return err
			}
			if err := change(&e); err != nil {
				return &indexset.Given{Err: err}
			}
			if err := indexset.ChangedKeys(&e, pk, rk); err != nil {
				return err
			}
			cur, err := intend(&e)
			if err != nil {
				return err
			}
			w.old, w.cur = &old, &cur
			if !found {
				w.old = nil // an insert, with its entries
			}
			err = w.round(ctx)
			if err == nil {
				out = e
				return nil
			}
			if opts.Create && (!found && w.primaryRefused(err, entity.ErrAlreadyExists) || found && w.primaryRefused(err, entity.ErrNotFound)) {
				return indexset.ErrLostCreate // another creator won, or a deleter: read again
			}
			if !errors.Is(err, errAgain) {
				return err
			}
			if n >= s.maxBuilds() {
				return &StepError{Step: "modify: submit", PartitionKey: pk, RowKey: rk, Err: entity.ErrContention}
			}
		}
	})
	if err != nil {
		var g *indexset.Given
		if errors.As(err, &g) {
			return out, w.cleanup(ctx, g.Err) // change's own error, as is
		}
		return out, w.cleanup(ctx, opError("modify", pk, rk, err))
	}
	w.finish(&out)
	return out, nil
}
