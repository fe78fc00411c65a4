package indexentity

import (
	"context"
	"errors"
	"slices"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// write is one change of a primary, from old (nil: none) to cur (nil:
// deleted): one entity group transaction of the SamePartition lists'
// index entities and the primary, with the intent of the message that
// keeps the other indexes when their values change.
type write[T any] struct {
	s      *Set[T]
	pk, rk string
	old    *version[T]
	cur    *version[T]
	user   []eventual.Message // the caller's messages (WriteOptions.Messages)

	// A repair of value fix's list in index only: the primary's
	// operation is an empty merge on old's ETag (old == cur), so that the
	// transaction is conditional on the version the repair read, and the
	// one list the finding names is the only one read and written (the
	// primary joins it if it holds fix, else leaves it): a damaged list of
	// the primary's other value is that list's own finding.
	touch bool
	fix   string
	only  *index[T]

	primary *entity.DynamicEntity // the primary's operation, for its new ETag
	offset  int                   // operations before ours (outbox intents)
	rowOps  int                   // index entity operations, before the primary's
}

func (s *Set[T]) newWrite(pk, rk string) *write[T] { return &write[T]{s: s, pk: pk, rk: rk} }

// newWriter is the Writer of the Set's engine (indexset.Core): a write
// carrying the caller's msgs.
func (s *Set[T]) newWriter(pk, rk string, msgs []eventual.Message) indexset.Writer[T] {
	w := s.newWrite(pk, rk)
	w.user = msgs
	return w
}

// Round reads the lists the change from old to cur touches, builds the
// transaction and submits it once. A refused index entity operation is
// errChanged (the driver reads again); a refused primary operation is the
// service's error.
func (w *write[T]) Round(ctx context.Context, old, cur *version[T]) error {
	s := w.s
	w.old, w.cur = old, cur
	msg, err := w.message()
	if err != nil {
		return err
	}
	build := func(b *entity.Batch) error {
		w.offset = b.Len()
		return w.build(ctx, b)
	}
	msgs := w.user
	if msg != nil {
		msgs = append(slices.Clip(msgs), *msg)
	}
	err = s.core.Submit(ctx, w.pk, build, msgs)
	if err == nil {
		return nil
	}
	var te *entity.TransactionError
	if errors.As(err, &te) {
		if i := te.Index - w.offset; i >= 0 && i < w.rowOps {
			return errChanged
		}
		if w.touch && conflict(err) {
			return errChanged // a repair's primary changed, or went, since it was read
		}
	}
	return err
}

// build adds the SamePartition lists' operations, then the primary's.
func (w *write[T]) build(ctx context.Context, b *entity.Batch) error {
	w.rowOps = 0
	if w.touch {
		if err := w.repairOps(ctx, b); err != nil {
			return err
		}
	}
	for _, ix := range w.s.core.Local {
		if w.touch {
			break
		}
		oldV, oldHas := w.oldValue(ix)
		newV, newHas, err := ix.valueOf(w.cur.Entity(), w.pk)
		if err != nil {
			return err
		}
		if oldHas && newHas && oldV == newV {
			continue
		}
		if oldHas {
			if err := w.edit(ctx, ix, oldV, false, b); err != nil {
				return err
			}
		}
		if newHas {
			// An add always writes the entity that holds the member, even
			// when it is there already, so that the transaction is
			// conditional on it: a repair that removes the member on
			// condition of its ETag (the primary gone) cannot then remove
			// it from under this write.
			if err := w.edit(ctx, ix, newV, true, b); err != nil {
				return err
			}
		}
	}
	switch {
	case w.touch && w.old == nil:
		// A repair of a primary that is gone: the lists alone.
	case w.touch:
		// A repair's transaction is conditional on the version it read.
		w.primary = indexset.Fence(w.pk, w.rk, w.old)
		b.Update(w.primary, entity.Merge)
	default:
		w.primary = indexset.PrimaryOp(b, w.pk, w.rk, w.old, w.cur)
	}
	return nil
}

// repairOps adds a repair's operations: the primary into value w.fix's
// list of w.only if it holds that value (a stored value that makes no key
// has no list), else out of it.
func (w *write[T]) repairOps(ctx context.Context, b *entity.Batch) error {
	v, has := w.oldValue(w.only)
	return w.edit(ctx, w.only, w.fix, has && v == w.fix, b)
}

// oldValue is the stored version's value in ix; a value that makes no
// valid key has no list.
func (w *write[T]) oldValue(ix *index[T]) (string, bool) {
	v, has, err := ix.valueOf(w.old.Entity(), w.pk)
	return v, has && err == nil
}

// edit reads value's list in ix and adds the operations that add or
// remove the primary.
func (w *write[T]) edit(ctx context.Context, ix *index[T], value string, add bool, b *entity.Batch) error {
	l, err := w.s.readFor(ctx, ix, w.pk, value, w.rk)
	if err != nil {
		return err
	}
	n := b.Len()
	if _, err := w.s.change(ix, l, w.rk, add, true, b); err != nil {
		return err
	}
	w.rowOps += b.Len() - n
	return nil
}

// message is the message that keeps the OtherPartition and Blob indexes
// whose values the write changes, or nil when it changes none.
func (w *write[T]) message() (*eventual.Message, error) {
	if w.touch {
		return nil, nil
	}
	values := map[string][]string{}
	for _, ix := range w.s.core.Remote {
		oldV, oldHas := w.oldValue(ix)
		newV, newHas, err := ix.valueOf(w.cur.Entity(), w.pk)
		if err != nil {
			return nil, err
		}
		if oldHas == newHas && oldV == newV {
			continue
		}
		if oldHas {
			values[ix.Name] = append(values[ix.Name], oldV)
		}
		if newHas {
			values[ix.Name] = append(values[ix.Name], newV)
		}
	}
	if len(values) == 0 {
		return nil, nil
	}
	m, err := w.s.core.Message(w.pk, w.rk, values)
	return &m, err
}

// Written is the ETag the applied round gave the primary.
func (w *write[T]) Written() string {
	if w.primary == nil {
		return ""
	}
	return w.primary.ETag
}

// End returns the write's error: an index-entity write reserves nothing.
func (w *write[T]) End(_ context.Context, err error) error { return err }

// PrimaryRefused reports a transaction the service refused at the
// primary's operation (after the index entities'), with an error matching
// target.
func (w *write[T]) PrimaryRefused(err, target error) bool {
	var te *entity.TransactionError
	return errors.As(err, &te) && errors.Is(te, target) && te.Index-w.offset == w.rowOps
}

// Insert adds e and its lists: the SamePartition lists in one entity
// group transaction with e, on condition of their ETags (a concurrent
// writer of a list makes it start again from the read), the other lists
// after it. An entity with e's keys is an error matching
// entity.ErrAlreadyExists. e's new ETag is written back into it (cleared
// when the transaction was found applied after a lost reply).
//
// opts (at most one; also on Update, Modify and Delete) commits the
// caller's own messages in the same transaction: see WriteOptions.
func (s *Set[T]) Insert(ctx context.Context, e *T, opts ...WriteOptions) error {
	if err := s.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	return s.core.Insert(ctx, e, opts)
}

// Update replaces the stored entity by e, and moves it between lists
// when its values changed (the guide's rename: the entity, the old
// value's list and the new value's list in one transaction), on condition
// that it is still the version e was read as (e's ETag): a concurrent
// change is an error matching entity.ErrPreconditionFailed, an e without
// an ETag a *StepError naming the keys that matches entity.ErrNoETag,
// before any request. A concurrent writer of a list makes it start
// again from the reads.
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
// writes it back with its lists, on condition that nobody wrote it or its
// SamePartition lists' index entities in between; when somebody did, it
// starts again from a fresh read, at most opts.Retry.Attempts times (the
// zero opts.Retry means Config.Retry), then entity.ErrContention. change
// may return an error to give up (returned as is); it must not change
// the keys. The written entity is returned, with its new ETag.
//
// The primary is written whole, as its lists are computed from all of
// it: opts.Mode 0 means entity.Replace, and Merge (or an unknown mode) is
// a *ModeError matching entity.ErrInvalid, before any request.
//
// With opts.Create a missing primary is created: change gets T's zero
// value with the keys set and no ETag, as entity.Table.Modify gives it,
// and what it leaves is inserted with its lists, as Insert does. A
// creator that loses to another (the insert refused: the primary exists
// now), or whose primary is deleted between its read and its write,
// starts again from the read, so racing creators each apply their change
// once (TestModifyCreate). Without Create a missing primary is an error
// matching entity.ErrNotFound.
//
// Under lost replies Modify is exactly-once: the transaction carries
// entity's write token, and a resent transaction's refusal is settled by
// reading an index entity or the primary back (see
// entity.Table.WithWriteTokens); when that cannot tell, the error
// matches entity.ErrOutcomeUnknown.
func (s *Set[T]) Modify(ctx context.Context, pk, rk string, change func(*T) error, opts entity.ModifyOptions, wopts ...WriteOptions) (T, error) {
	if err := s.ok(); err != nil {
		return *new(T), err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return *new(T), err
	}
	return s.core.Modify(ctx, pk, rk, change, opts, wopts)
}

// Delete removes the entity with keys pk, rk and takes it off its lists,
// if its ETag is still etag (entity.ErrPreconditionFailed otherwise); ""
// or entity.AnyETag deletes whatever its version, retrying from a fresh
// read when a writer changes it meanwhile. A missing entity is an error
// matching entity.ErrNotFound.
//
// A delete whose reply was lost and whose outcome entity could not
// settle is read again: gone, it was applied; the version it deleted
// still there, it was not, and Delete goes on; another version there
// (this delete applied and the entity written again by another process
// inside the retry window, or another process's change before it) is
// entity.ErrOutcomeUnknown: Delete neither reports it refused nor deletes
// the other process's version (TestLostReplyBesideWriter).
func (s *Set[T]) Delete(ctx context.Context, pk, rk, etag string, opts ...WriteOptions) error {
	if err := s.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	return s.core.Delete(ctx, pk, rk, etag, opts...)
}
