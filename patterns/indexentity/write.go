package indexentity

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/entityfields"
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

func (v *version[T]) entity() *T {
	if v == nil {
		return nil
	}
	return &v.e
}

// round reads the lists the change touches, builds the transaction and
// submits it once. A refused index entity operation is errChanged (the
// caller's retry loop reads again); a refused primary operation is the
// service's error.
func (w *write[T]) round(ctx context.Context) error {
	s := w.s
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
	if len(msgs) == 0 {
		b := s.bags.NewBatch()
		if err := build(b); err != nil {
			return err
		}
		if b.Len() == 0 {
			return nil
		}
		_, err = s.bags.Submit(ctx, b)
	} else {
		err = s.outbox.Submit(ctx, w.pk, build, msgs...)
	}
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
	for _, ix := range w.s.local {
		if w.touch {
			break
		}
		oldV, oldHas := w.oldValue(ix)
		newV, newHas, err := ix.valueOf(w.cur.entity(), w.pk)
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
	case w.old == nil && w.cur == nil:
		// A repair of a primary that is gone: the lists alone.
	case w.cur == nil:
		b.Delete(w.pk, w.rk, w.old.etag)
	case w.old == nil:
		w.primary = &entity.DynamicEntity{PartitionKey: w.pk, RowKey: w.rk, Properties: w.cur.props}
		b.Insert(w.primary)
	default:
		props := w.cur.props
		if w.touch {
			props = map[string]any{}
		}
		if w.old.chain != nil {
			// The chain read lets entity prove this write's outcome after
			// a lost reply; it replaces it with the write's own.
			props = maps.Clone(props)
			props[propWriteToken] = w.old.chain
		}
		w.primary = &entity.DynamicEntity{PartitionKey: w.pk, RowKey: w.rk, ETag: w.old.etag, Properties: props}
		if w.touch {
			b.Update(w.primary, entity.Merge)
		} else {
			b.Update(w.primary, entity.Replace)
		}
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
	v, has, err := ix.valueOf(w.old.entity(), w.pk)
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
	for _, ix := range w.s.remote {
		oldV, oldHas := w.oldValue(ix)
		newV, newHas, err := ix.valueOf(w.cur.entity(), w.pk)
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
	m, err := w.s.message(w.pk, w.rk, values)
	return &m, err
}

// finish reports the applied write's new ETag into e (none when the
// transaction was found applied after a lost reply: read it again before
// a conditional write).
func (w *write[T]) finish(e *T) {
	if e == nil {
		return
	}
	if w.primary != nil && w.primary.ETag != "" && (w.old == nil || w.primary.ETag != w.old.etag) {
		_ = entityfields.SetWritten(e, w.primary.ETag)
		return
	}
	if sys, err := entity.SystemOf(e); err == nil {
		sys.ETag = ""
		_ = entityfields.SetSystem(e, entityfields.System(sys))
	}
}

func dedupe(vs []string) []string {
	if len(vs) < 2 {
		return vs
	}
	vs = slices.Clone(vs)
	slices.Sort(vs)
	return slices.Compact(vs)
}

// stop carries an error out of entity.RetryPolicy.Retry without another
// round: the caller's condition failed (its ETag is stale), which a fresh
// read cannot fix.
type stop struct{ err error }

func (e *stop) Error() string { return e.err.Error() }

func unstop(err error) error {
	var st *stop
	if errors.As(err, &st) {
		return st.err
	}
	return err
}

// opError names the operation and the primary's keys in an error that
// does not come from this package (entity's answer to the transaction, a
// cancelled context); the Set's own errors (a *CorruptError names its
// index entity) name them already.
func opError(op, pk, rk string, err error) error {
	return indexset.OpError[pkg](op, pk, rk, err, func(err error) bool {
		var ce *CorruptError
		return errors.As(err, &ce)
	})
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
	cur, err := s.intend(e, pk)
	if err != nil {
		return err
	}
	user, err := s.messages("Insert", opts)
	if err != nil {
		return err
	}
	w := s.newWrite(pk, rk)
	w.cur, w.user = &cur, user
	if err := s.cfg.Retry.Retry(ctx, w.round); err != nil {
		return opError("insert", pk, rk, err)
	}
	w.finish(e)
	return nil
}

// intend is the version e would be once written, its values checked.
func (s *Set[T]) intend(e *T, pk string) (version[T], error) {
	for _, ix := range s.indexes {
		if _, _, err := ix.valueOf(e, pk); err != nil {
			return version[T]{}, err
		}
	}
	return intend(e)
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
	if e == nil {
		return indexset.NilEntity()
	}
	sys, err := entity.SystemOf(e)
	if err != nil {
		return err
	}
	pk, rk := sys.PartitionKey, sys.RowKey
	if sys.ETag == "" {
		return indexset.NoETag[pkg](pk, rk, "Get or LookupAll")
	}
	if err := s.validKeys(pk, rk); err != nil {
		return err
	}
	cur, err := s.intend(e, pk)
	if err != nil {
		return err
	}
	user, err := s.messages("Update", opts)
	if err != nil {
		return err
	}
	w := s.newWrite(pk, rk)
	w.cur, w.user = &cur, user
	err = s.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		old, found, err := s.read(ctx, pk, rk)
		if err != nil {
			return indexset.ReadPrimary[pkg]("update", pk, rk, err)
		}
		if !found {
			return &stop{indexset.NotFound[pkg]("update", pk, rk)}
		}
		if old.etag != sys.ETag {
			return &stop{indexset.Stale[pkg]("update", pk, rk, old.etag, sys.ETag)}
		}
		w.old = &old
		err = w.round(ctx)
		if err != nil && !errors.Is(err, errChanged) && errors.Is(err, entity.ErrPreconditionFailed) {
			return &stop{err} // the primary changed since e was read
		}
		return err
	})
	if err != nil {
		return opError("update", pk, rk, unstop(err))
	}
	w.finish(e)
	return nil
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
	var out T
	if err := indexset.CheckMode[pkg]("Modify", opts.Mode); err != nil {
		return out, err
	}
	if change == nil {
		return out, indexset.NilChange()
	}
	if err := s.validKeys(pk, rk); err != nil {
		return out, err
	}
	user, err := s.messages("Modify", wopts)
	if err != nil {
		return out, err
	}
	w := s.newWrite(pk, rk)
	w.user = user
	err = indexset.Retry(opts.Retry, s.cfg.Retry).Retry(ctx, func(ctx context.Context) error {
		old, found, err := s.read(ctx, pk, rk)
		if err != nil {
			return indexset.ReadPrimary[pkg]("modify", pk, rk, err)
		}
		if !found && !opts.Create {
			return &stop{indexset.NotFound[pkg]("modify", pk, rk)}
		}
		// change gets its own copy: old's values are computed from old.e,
		// which a change of shared slices or maps must not touch.
		var e T
		if found {
			e, err = old.copyEntity()
		} else {
			e, err = indexset.Fresh[T](pk, rk)
		}
		if err != nil {
			return err
		}
		if err := change(&e); err != nil {
			return &stop{&indexset.Given{Err: err}}
		}
		if err := indexset.ChangedKeys(&e, pk, rk); err != nil {
			return &stop{err}
		}
		cur, err := s.intend(&e, pk)
		if err != nil {
			return &stop{err}
		}
		w.old, w.cur = &old, &cur
		if !found {
			w.old = nil // an insert, with its lists
		}
		if err := w.round(ctx); err != nil {
			if opts.Create && (!found && w.primaryRefused(err, entity.ErrAlreadyExists) || found && w.primaryRefused(err, entity.ErrNotFound)) {
				return indexset.ErrLostCreate // another creator won, or a deleter: read again
			}
			return err
		}
		out = e
		return nil
	})
	if err != nil {
		err = unstop(err)
		var g *indexset.Given
		if errors.As(err, &g) {
			return out, g.Err // change's own error, as is
		}
		return out, opError("modify", pk, rk, err)
	}
	w.finish(&out)
	return out, nil
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
	if err := s.validKeys(pk, rk); err != nil {
		return err
	}
	user, err := s.messages("Delete", opts)
	if err != nil {
		return err
	}
	anyVersion := etag == "" || etag == entity.AnyETag
	w := s.newWrite(pk, rk)
	w.user = user
	var unknown error // the answer of a delete of version tried whose outcome is unknown
	var tried string
	err = s.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		for {
			old, found, err := s.read(ctx, pk, rk)
			if err != nil {
				return indexset.ReadPrimary[pkg]("delete", pk, rk, err)
			}
			if !found {
				if unknown != nil {
					return nil // the transaction whose outcome was unknown was applied
				}
				return &stop{indexset.NotFound[pkg]("delete", pk, rk)}
			}
			if unknown != nil && old.etag != tried {
				return &stop{unknown} // applied and written again, or overtaken: no read tells
			}
			if !anyVersion && old.etag != etag {
				return &stop{indexset.Stale[pkg]("delete", pk, rk, old.etag, etag)}
			}
			w.old, w.cur = &old, nil
			err = w.round(ctx)
			if errors.Is(err, entity.ErrOutcomeUnknown) && unknown == nil {
				// The next read tells, where entity could not.
				unknown, tried = err, old.etag
				continue
			}
			return err
		}
	})
	return opError("delete", pk, rk, unstop(err))
}

// primaryRefused reports a transaction the service refused at the
// primary's operation (after the index entities'), with an error matching
// target.
func (w *write[T]) primaryRefused(err, target error) bool {
	var te *entity.TransactionError
	return errors.As(err, &te) && errors.Is(te, target) && te.Index-w.offset == w.rowOps
}

// copyEntity decodes a fresh copy of the version read.
func (v *version[T]) copyEntity() (T, error) {
	var e T
	err := entity.Unmarshal(v.raw, &e)
	return e, err
}
