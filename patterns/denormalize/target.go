package denormalize

import (
	"context"
	"errors"
	"reflect"
	"strconv"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/entityfields"
	"github.com/tablekit/tablekit/internal/errline"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// InsertTarget inserts t with the copies of the sources it refers to,
// read now: the guide's department, created with its manager's name and
// phone. An entity with t's keys is an error matching
// entity.ErrAlreadyExists. t's copied fields and new ETag are written
// back into it.
//
// opts is at most one WriteOptions: its Messages, the caller's own, are
// committed in the write's transaction and sent exactly when it commits.
//
// Steps: one point query per source t refers to, and one transaction
// (t's insert and, per SamePartition source, a write conditional on the
// version read that changes nothing, so that a concurrent change of the
// source fails and starts again rather than leave t behind); for
// OtherPartition sources, a second read of each (see ModifyTarget: when
// it fails, t was inserted and the error matches ErrCopyUnverified).
func (c *Copies[T, S]) InsertTarget(ctx context.Context, t *T, opts ...WriteOptions) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := c.ok(); err != nil {
		return err
	}
	if t == nil {
		return &entity.TypeError{Type: reflect.TypeFor[*T](), Reason: "nil entity"}
	}
	key, err := keyOf(t)
	if err != nil {
		return err
	}
	if err := validKey(key); err != nil {
		return err
	}
	user, err := c.writeOptions("InsertTarget", key, opts)
	if err != nil {
		return err
	}
	var w *targetWrite[S]
	err = c.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		w, err = c.writeTarget(ctx, "InsertTarget", key, nil, t, false, user)
		return err
	})
	if err != nil {
		return err
	}
	if err := w.result(c.tgtBags, t, key); err != nil {
		return err
	}
	return c.settle(ctx, key, w, c.cfg.Retry)
}

// ModifyTarget reads the target with keys pk, rk, lets change edit it, and
// writes it back with its copies, on condition that nobody wrote it in
// between (and, for SamePartition relations, that its sources did not
// change since they were read); when somebody did, it starts again from a
// fresh read, at most opts.Retry.Attempts times (the zero opts.Retry
// means Config.Retry), then entity.ErrContention. change may return an
// error to give up (returned as is); it must not change the keys, and
// whatever it does to the copied fields is overwritten. The written target
// is returned, with its copies and new ETag.
//
// The target is written whole, so that a copy it no longer holds is
// removed: opts.Mode 0 means entity.Replace, and Merge (or an unknown
// mode) is a *ModeError matching entity.ErrInvalid, before any request.
// Properties the stored target holds that T does not model (another
// program's) are kept (TestWritesKeepPropertiesTheTypeDoesNotModel).
//
// When the change makes the target refer to another source (a department's
// new manager), that source is read and copied; when it refers to the same
// sources as before and leaves the copies alone, no source is read: a read
// and a transaction of one operation.
//
// wopts is at most one WriteOptions: its Messages, the caller's own, are
// committed in the write's transaction and sent exactly when it commits.
//
// A missing target is an error matching entity.ErrNotFound, unless
// opts.Create: then change gets T's zero value with the keys set and no
// ETag, and the target is inserted with its copies, as InsertTarget
// inserts it; when another writer creates it first, the round starts
// again and changes theirs, so racing creators each apply their change
// exactly once (TestModifyCreateRacingCreators).
//
// OtherPartition: the source is read and copied, then read again once the
// target is written; if it changed in between, the copy is refreshed
// (Refresh), so that a change the fan-out missed — it read the target
// before this write made it refer to the source — is not lost. When that
// second read or refresh fails, the write stands (the target returned is
// what was written) and the error matches ErrCopyUnverified: do not apply
// the change again; Refresh the target (TestVerifyCopyFails).
func (c *Copies[T, S]) ModifyTarget(ctx context.Context, pk, rk string, change func(*T) error, opts entity.ModifyOptions, wopts ...WriteOptions) (T, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return *new(T), err
	}
	var out T
	key := Key{pk, rk}
	user, err := c.checkModify("ModifyTarget", key, opts, change == nil, wopts)
	if err != nil {
		return out, err
	}
	var w *targetWrite[S]
	err = c.retry(opts.Retry).Retry(ctx, func(ctx context.Context) error {
		old, cur, err := readChanged(ctx, c.tgtRaw, key, "target", opts.Create, change)
		if err != nil {
			return err
		}
		w, err = c.writeTarget(ctx, "ModifyTarget", key, old, &cur, false, user)
		return createdMeanwhile(old == nil, err)
	})
	if err != nil {
		return out, err
	}
	if err := w.result(c.tgtBags, &out, key); err != nil {
		return out, err
	}
	return out, c.settle(ctx, key, w, c.retry(opts.Retry))
}

// Refresh copies again, into the target with keys pk, rk, what its sources
// hold now, and returns it: the repair of a target written without this
// package, or of a copy found stale (its SamePartition copies in one
// transaction fenced on their sources, as ModifyTarget does). A target
// whose copies are current is not written. A missing target is an error
// matching entity.ErrNotFound.
func (c *Copies[T, S]) Refresh(ctx context.Context, pk, rk string) (T, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return *new(T), err
	}
	if err := c.ok(); err != nil {
		var zero T
		return zero, err
	}
	var out T
	key := Key{pk, rk}
	if err := validKey(key); err != nil {
		return out, err
	}
	w, err := c.refresh(ctx, key, true, c.cfg.Retry)
	if err != nil {
		return out, err
	}
	if w == nil {
		return out, &StepError{Step: "read target", Key: key, Err: entity.ErrNotFound}
	}
	return out, w.result(c.tgtBags, &out, key)
}

// targetWrite is what one round of a target's write did.
type targetWrite[S any] struct {
	bag     *entity.DynamicEntity // the target as written (or as read, when unchanged)
	remote  map[Key]*doc[S]       // OtherPartition sources copied, as read (nil: missing)
	order   []Key                 // remote's keys, in the order read
	written bool                  // the target was written
}

func (w *targetWrite[S]) result(conv *entity.Table[entity.DynamicEntity], v any, key Key) error {
	if err := conv.FromDynamic(w.bag, v); err != nil {
		return err
	}
	if w.bag.ETag == "" {
		return entityfields.SetSystem(v, entityfields.System{PartitionKey: key.PartitionKey, RowKey: key.RowKey})
	}
	return entityfields.SetWritten(v, w.bag.ETag)
}

// writeTarget runs one round of op, a write of target key from old (nil:
// insert) to cur (nil: old as it is, its copies refreshed), committing
// the caller's messages user with it. force reads every source even when
// the reference and the copy did not change.
func (c *Copies[T, S]) writeTarget(ctx context.Context, op string, key Key, old *doc[T], cur *T, force bool, user []eventual.Message) (*targetWrite[S], error) {
	var nb *entity.DynamicEntity
	if cur == nil {
		nb = clone(&old.bag)
	} else {
		var err error
		if nb, err = bagOf(c.tgtBags, cur, old, c.tgtProps); err != nil {
			return nil, err
		}
	}
	now := &doc[T]{key: key, bag: *nb}
	if cur != nil {
		now.val = *cur
	} else {
		now.val = old.val
	}
	w := &targetWrite[S]{bag: nb, remote: map[Key]*doc[S]{}}
	sources := map[Key]*doc[S]{}
	fenced := map[Key]bool{}
	var fences []*entity.DynamicEntity
	for _, r := range c.rels {
		k, ok := r.sourceOf(now)
		if !ok {
			r.put(nb, nil)
			continue
		}
		if r.Placement == SamePartition && k.PartitionKey != key.PartitionKey {
			return nil, &StepError{Step: "read source", Relation: r.Name, Key: k, Err: ErrPlacement}
		}
		if !force && old != nil {
			if k0, ok0 := r.sourceOf(old); ok0 && k0 == k && r.holds(nb, r.copyIn(&old.bag)) {
				continue // same source, copy untouched: it is current (or, OtherPartition, catching up)
			}
		}
		src, seen := sources[k]
		if !seen {
			if err := validKey(k); err != nil {
				if cur != nil {
					// A change that makes the target refer to a key no
					// entity can have: refused before anything is written.
					return nil, &StepError{Step: "read source", Relation: r.Name, Key: k, Err: err}
				}
				// Refresh of a target another program made refer to
				// one: it names no source, so the target holds no copy.
			} else if src, err = read[S](ctx, c.srcRaw, k); err != nil {
				return nil, &StepError{Step: "read source", Relation: r.Name, Key: k, Err: err}
			}
			sources[k] = src
		}
		var sb *entity.DynamicEntity
		if src != nil {
			sb = &src.bag
		}
		r.put(nb, r.project(sb))
		switch {
		case r.Placement == OtherPartition:
			if _, ok := w.remote[k]; !ok {
				w.remote[k] = src
				w.order = append(w.order, k)
			}
		case src != nil && !fenced[k]:
			fenced[k] = true
			fences = append(fences, fence(src))
		}
	}
	if old != nil && cur == nil && sameBag(nb, &old.bag) {
		return w, nil // nothing to write
	}
	if own := 1 + len(fences); len(user) > 0 && own <= entity.MaxBatchOperations && own+len(user) > entity.MaxBatchOperations {
		room := entity.MaxBatchOperations - own
		return nil, &StepError{Step: "submit", Key: key, Err: &MessageError{Op: op, Key: key, Index: room, Kind: user[room].Kind, ID: user[room].ID, Err: eventual.ErrTooLarge,
			Reason: "the write takes " + strconv.Itoa(own) + " operations of its transaction (the target and the fences of its sources), which leaves room for " + strconv.Itoa(room) + " of the " + strconv.Itoa(len(user)) + " messages"}}
	}
	write := func(b *entity.Batch) error {
		if old == nil {
			b.Insert(nb)
		} else {
			b.Update(nb, entity.Replace)
		}
		for _, f := range fences {
			b.Update(f, entity.Merge)
		}
		return nil
	}
	var err error
	if len(user) > 0 {
		err = c.tgtOutbox.Submit(ctx, key.PartitionKey, write, user...)
	} else {
		b := c.tgtBags.NewBatch()
		_ = write(b)
		_, err = c.tgtBags.Submit(ctx, b)
	}
	if err != nil {
		return nil, submitError("submit", key, err)
	}
	w.written = true
	return w, nil
}

// settle makes sure that the OtherPartition sources a target write copied
// did not change before the target was written: otherwise the fan-out of
// that change may have missed the target, and the copy is refreshed
// (under the write's retry policy).
//
// The target's write was applied: a failure here is reported as
// ErrCopyUnverified (with its cause), never as the write's.
func (c *Copies[T, S]) settle(ctx context.Context, key Key, w *targetWrite[S], retry entity.RetryPolicy) error {
	if len(w.remote) == 0 {
		return nil
	}
	ok, err := c.unchanged(ctx, w)
	if err == nil && !ok {
		_, err = c.refresh(ctx, key, true, retry)
	}
	if err != nil {
		return &StepError{Step: "verify copy", Key: key, Err: errline.Join(ErrCopyUnverified, err)}
	}
	return nil
}

// unchanged reads the OtherPartition sources w copied again and reports
// whether each is still the version copied.
func (c *Copies[T, S]) unchanged(ctx context.Context, w *targetWrite[S]) (bool, error) {
	for _, k := range w.order {
		if validKey(k) != nil {
			continue // no entity can have k: still none
		}
		now, err := read[S](ctx, c.srcRaw, k)
		if err != nil {
			return false, &StepError{Step: "read source again", Key: k, Err: err}
		}
		if !sameVersion(w.remote[k], now) {
			return false, nil
		}
	}
	return true, nil
}

// refresh copies the sources into target key until a second read of its
// OtherPartition sources shows them unchanged. It returns nil for a
// missing target. retry bounds the ETag rounds of each write.
func (c *Copies[T, S]) refresh(ctx context.Context, key Key, force bool, retry entity.RetryPolicy) (*targetWrite[S], error) {
	for range maxRounds {
		var w *targetWrite[S]
		err := retry.Retry(ctx, func(ctx context.Context) error {
			old, err := read[T](ctx, c.tgtRaw, key)
			if err != nil {
				return &StepError{Step: "read target", Key: key, Err: err}
			}
			if old == nil {
				w = nil
				return nil
			}
			w, err = c.writeTarget(ctx, "Refresh", key, old, nil, force, nil)
			return err
		})
		if err != nil || w == nil {
			return w, err
		}
		ok, err := c.unchanged(ctx, w)
		if err != nil {
			return w, err
		}
		if ok {
			return w, nil
		}
	}
	return nil, &StepError{Step: "refresh", Key: key, Err: errline.Join(errors.New("denormalize: sources kept changing"), entity.ErrContention)}
}

// copyIn is the copy of r that bag t holds.
func (r *relation[T, S]) copyIn(t *entity.DynamicEntity) map[string]any {
	got := make(map[string]any, len(r.Fields))
	for _, f := range r.Fields {
		if v, ok := t.Properties[f.To]; ok {
			got[f.To] = v
		}
	}
	return got
}

// sameVersion reports whether two reads of one entity found the same
// version (or both found none).
func sameVersion[V any](a, b *doc[V]) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.etag == b.etag
}

// sameBag reports whether two bags hold the same properties, the write
// token aside.
func sameBag(a, b *entity.DynamicEntity) bool {
	n := 0
	for k, v := range a.Properties {
		if k == propWriteToken {
			continue
		}
		n++
		w, ok := b.Properties[k]
		if !ok || !sameValue(v, w) {
			return false
		}
	}
	m := len(b.Properties)
	if _, ok := b.Properties[propWriteToken]; ok {
		m--
	}
	return n == m
}
