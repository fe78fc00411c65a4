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
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// maxRounds bounds the loops that start again when an entity they read
// changed under them, besides the ETag rounds of Config.Retry.
const maxRounds = 16

// InsertSource inserts s and writes its copies into the targets that
// already refer to it (a department created before its manager): its
// SamePartition copies in one entity group transaction with the insert,
// its OtherPartition copies through the fan-out. An entity with s's keys
// is an error matching entity.ErrAlreadyExists. s's new ETag is written
// back into it (cleared when the transaction was found applied after a
// lost reply: read it again before a conditional write).
//
// opts is at most one WriteOptions: its Messages, the caller's own, are
// committed in the write's transaction and sent exactly when it commits.
//
// Steps: one point query per candidate target (Relation.Targets) of the
// SamePartition relations, then one transaction. That transaction writes
// every candidate that exists: the copy into each that refers to s, and a
// fence (a conditional change of nothing) into each other, so that none
// is made to refer to s unseen (TestInsertSourceFencesTargetsOfOtherSources:
// without the fence, a concurrent ModifyTarget that read s missing leaves
// its target referring to s without the copy). More than 99 of them (less
// one per fan-out message) is a *CopiesError matching ErrTooManyCopies,
// whatever source they refer to: narrow Relation.Targets to insert there.
func (c *Copies[T, S]) InsertSource(ctx context.Context, s *S, opts ...WriteOptions) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := c.ok(); err != nil {
		return err
	}
	if s == nil {
		return &entity.TypeError{Type: reflect.TypeFor[*S](), Reason: "nil entity"}
	}
	key, err := keyOf(s)
	if err != nil {
		return err
	}
	if err := validKey(key); err != nil {
		return err
	}
	user, err := c.writeOptions("InsertSource", key, opts)
	if err != nil {
		return err
	}
	var etag string
	err = c.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		etag, err = c.writeSource(ctx, "InsertSource", key, nil, s, false, user)
		return err
	})
	if err != nil {
		return err
	}
	return written(s, key, etag)
}

// ModifySource reads the source with keys pk, rk, lets change edit it, and
// writes it back with the copies that depend on it, on condition that
// neither it nor any target written changed since they were read; when one
// did, it starts again from a fresh read, at most opts.Retry.Attempts
// times (the zero opts.Retry means Config.Retry), then
// entity.ErrContention. change may return an error to give up (returned
// as is); it must not change the keys. The written source is returned,
// with its new ETag.
//
// The source is written whole, as its copies are computed from all of
// it: opts.Mode 0 means entity.Replace, and Merge (or an unknown mode) is
// a *ModeError matching entity.ErrInvalid, before any request. Properties
// the stored source holds that S does not model (another program's) are
// kept (TestWritesKeepPropertiesTheTypeDoesNotModel).
//
// When no copied property changes, no target is read or written: a read
// and a transaction of one operation. Otherwise: the source's read, one
// point query per candidate target of the SamePartition relations, and one
// transaction holding the source and every copy that changes; with
// OtherPartition relations, the transaction also holds the fan-out
// message's outbox intent (then an enqueue and the intent's delete).
//
// wopts is at most one WriteOptions: its Messages, the caller's own, are
// committed in the write's transaction and sent exactly when it commits.
//
// A missing source is an error matching entity.ErrNotFound, unless
// opts.Create: then change gets S's zero value with the keys set and no
// ETag, and the source is inserted with its copies, as InsertSource
// inserts it; when another writer creates it first, the round starts
// again and changes theirs, so racing creators each apply their change
// exactly once (TestModifyCreateRacingCreators), and a source deleted
// between a round's read and its write is created again.
//
// Lost replies: the transaction carries entity's write token, so a resent
// transaction's refusal is settled by reading back (applied, refused, or
// entity.ErrOutcomeUnknown), never guessed, and the change is applied at
// most once.
func (c *Copies[T, S]) ModifySource(ctx context.Context, pk, rk string, change func(*S) error, opts entity.ModifyOptions, wopts ...WriteOptions) (S, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return *new(S), err
	}
	var out S
	key := Key{pk, rk}
	user, err := c.checkModify("ModifySource", key, opts, change == nil, wopts)
	if err != nil {
		return out, err
	}
	err = c.retry(opts.Retry).Retry(ctx, func(ctx context.Context) error {
		old, cur, err := readChanged(ctx, c.srcRaw, key, "source", opts.Create, change)
		if err != nil {
			return err
		}
		etag, err := c.writeSource(ctx, "ModifySource", key, old, &cur, false, user)
		if err != nil {
			return createdMeanwhile(old == nil, err)
		}
		out = cur
		return written(&out, key, etag)
	})
	return out, err
}

// DeleteSource deletes the source with keys pk, rk, whatever its version,
// and removes its copies from the targets that refer to it (a target whose
// source is gone holds no copy). A source that is not there counts as
// deleted, so that a repeated call (after a crash, or an outcome left
// unknown by lost replies) is harmless.
//
// Lost replies: a transaction whose outcome is left unknown is settled by
// the next round's read (the source gone: deleted, copies and all). When
// that round fails too, the error matches entity.ErrOutcomeUnknown (and
// the later failure): the delete may have been applied, and is never
// reported refused (TestDeleteSourceUnknownThenReadFails).
//
// opts is at most one WriteOptions: its Messages, the caller's own, are
// committed in the write's transaction and sent exactly when it commits.
//
// Steps: the source's read, one point query per candidate target of the
// SamePartition relations, and one transaction (with OtherPartition
// relations, its fan-out message's intent too).
func (c *Copies[T, S]) DeleteSource(ctx context.Context, pk, rk string, opts ...WriteOptions) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := c.ok(); err != nil {
		return err
	}
	key := Key{pk, rk}
	if err := validKey(key); err != nil {
		return err
	}
	user, err := c.writeOptions("DeleteSource", key, opts)
	if err != nil {
		return err
	}
	var unknown error // the first round whose outcome is unknown
	for range maxRounds {
		err := c.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
			old, err := read[S](ctx, c.srcRaw, key)
			if err != nil {
				return &StepError{Step: "read source", Key: key, Err: err}
			}
			if old == nil {
				return nil // deleted, with its copies, by this call or another
			}
			_, err = c.writeSource(ctx, "DeleteSource", key, old, nil, false, user)
			return err
		})
		switch {
		case err == nil:
			return nil
		case errors.Is(err, entity.ErrOutcomeUnknown):
			// The read of the next round tells: a source still there was
			// not deleted (try again), a source gone was, copies and all.
			if unknown == nil {
				unknown = err
			}
		case unknown != nil:
			// A round that may have deleted the source came first: what
			// failed since does not undo it.
			return stillUnknown("delete source", key, unknown, err)
		default:
			return err
		}
	}
	return unknown
}

// stillUnknown reports the step of a write whose round left its outcome unknown
// (unknown) and whose later rounds could not settle it (last, the
// failure that ended them): it matches entity.ErrOutcomeUnknown, and the
// causes of both.
func stillUnknown(step string, key Key, unknown, last error) error {
	return &StepError{Step: step, Key: key, Err: &unsettled{unknown: unknown, last: last}}
}

// Push writes the copies of the source with keys pk, rk, as it is now,
// into every target that refers to it and does not hold them: the repair
// of a source written without this package (by another Copies whose
// target it is, or by hand), as Refresh is a target's. SamePartition
// copies are written in one transaction fenced on the source's version;
// OtherPartition copies by the fan-out (its message committed with the
// fence, through the outbox). When every SamePartition copy is current and
// there is no OtherPartition relation, nothing is written. A missing
// source is an error matching entity.ErrNotFound (its targets' copies
// are removed by their Refresh).
func (c *Copies[T, S]) Push(ctx context.Context, pk, rk string) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := c.ok(); err != nil {
		return err
	}
	key := Key{pk, rk}
	if err := validKey(key); err != nil {
		return err
	}
	return c.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		old, err := read[S](ctx, c.srcRaw, key)
		if err != nil {
			return &StepError{Step: "read source", Key: key, Err: err}
		}
		if old == nil {
			return &StepError{Step: "read source", Key: key, Err: entity.ErrNotFound}
		}
		cur, err := old.fresh()
		if err != nil {
			return &StepError{Step: "read source", Key: key, Err: err}
		}
		_, err = c.writeSource(ctx, "Push", key, old, &cur, true, nil)
		return err
	})
}

// writeSource runs one round of op, a change of the source key from old
// (nil: insert) to cur (nil: delete), committing the caller's messages
// user with it, and returns the source's new ETag ("" for a delete, or a
// transaction found applied after a lost reply). push writes the copies
// of old, unchanged, wherever they differ: the source itself is only
// fenced.
func (c *Copies[T, S]) writeSource(ctx context.Context, op string, key Key, old *doc[S], cur *S, push bool, user []eventual.Message) (string, error) {
	var curBag, oldBag *entity.DynamicEntity
	if cur != nil {
		var err error
		if curBag, err = bagOf(c.srcBags, cur, old, c.srcProps); err != nil {
			return "", err
		}
	}
	if old != nil {
		oldBag = &old.bag
	}
	ops := &ops{}
	switch {
	case old == nil:
		ops.add(entity.OpInsert, curBag)
	case cur == nil:
		ops.del = &Key{key.PartitionKey, key.RowKey}
		ops.delETag = old.etag
	case push:
		ops.add(entity.OpMerge, fence(old))
	default:
		ops.add(entity.OpReplace, curBag)
	}

	// SamePartition copies: in this transaction.
	var local []*relation[T, S]
	for _, r := range c.local {
		if push || old == nil || cur == nil || !sameCopy(r.project(oldBag), r.project(curBag)) {
			local = append(local, r)
		}
	}
	if len(local) > 0 {
		cands, err := c.candidates(key, local, old, cur)
		if err != nil {
			return "", err
		}
		err = c.readTargets(ctx, key, cands, func(t *doc[T]) error {
			if t.key.PartitionKey != key.PartitionKey {
				return &StepError{Step: "read target", Key: t.key, Err: ErrPlacement}
			}
			nb := clone(&t.bag)
			changed := false
			for _, r := range local {
				if k, ok := r.sourceOf(t); ok && k == key {
					if want := r.project(curBag); !r.holds(nb, want) {
						r.put(nb, want)
						changed = true
					}
				}
			}
			switch {
			case changed:
				ops.add(entity.OpReplace, nb)
				ops.copies++
			case old == nil:
				// A target that refers to no existing source holds no
				// copy: a writer about to make it refer to this one
				// read the source missing, and must fail, not miss the
				// insert.
				ops.add(entity.OpMerge, fence(t))
				ops.fences++
			}
			return nil
		})
		if err != nil {
			return "", err
		}
	}

	// OtherPartition copies: fan-out messages, committed with the change,
	// each small enough for any queue message (checked before the
	// transaction: a change is never committed with a message that cannot
	// be sent).
	var msgs []eventual.Message
	if len(c.remote) > 0 {
		m := fanout{PK: key.PartitionKey, RK: key.RowKey, Targets: map[string]Targets{}}
		for _, r := range c.remote {
			if !push && old != nil && cur != nil && sameCopy(r.project(oldBag), r.project(curBag)) {
				continue
			}
			ts, err := c.targetsOf(r, old, cur)
			if err != nil {
				return "", err
			}
			m.Targets[r.Name] = union(ts...)
		}
		if len(m.Targets) > 0 {
			parts, err := m.split(maxFanoutPayload)
			if err != nil {
				return "", &StepError{Step: "fan-out message", Key: key, Err: err}
			}
			if room := entity.MaxBatchOperations - ops.len() - len(user); room > 0 && (len(parts) > maxFanoutMessages || len(parts) > room) {
				return "", &StepError{Step: "fan-out message", Key: key, Err: &FanOutError{Messages: len(parts), Limit: min(maxFanoutMessages, room)}}
			}
			for _, p := range parts {
				msg, err := c.kind.Message(p)
				if err != nil {
					return "", &StepError{Step: "fan-out message", Key: key, Err: err}
				}
				msg.Key = key.PartitionKey + "/" + key.RowKey // one queue per source
				msgs = append(msgs, msg)
			}
		}
	}

	if push && ops.len() == 1 && len(msgs) == 0 {
		return old.etag, nil // every copy is current: nothing to write
	}
	if own := ops.len() + len(msgs); len(user) > 0 && own <= entity.MaxBatchOperations && own+len(user) > entity.MaxBatchOperations {
		room := entity.MaxBatchOperations - own
		return "", &StepError{Step: "submit", Key: key, Err: &MessageError{Op: op, Key: key, Index: room, Kind: user[room].Kind, ID: user[room].ID, Err: eventual.ErrTooLarge,
			Reason: "the change takes " + strconv.Itoa(own) + " operations of its transaction (its writes and " + strconv.Itoa(len(msgs)) + " fan-out messages), which leaves room for " + strconv.Itoa(room) + " of the " + strconv.Itoa(len(user)) + " messages"}}
	}
	if ops.len()+len(msgs)+len(user) > entity.MaxBatchOperations {
		return "", &StepError{Step: "submit", Key: key, Err: &CopiesError{Copies: ops.copies, Fences: ops.fences, Limit: max(0, entity.MaxBatchOperations-1-len(msgs)-len(user))}}
	}
	msgs = append(msgs, user...)
	var err error
	if len(msgs) > 0 {
		err = c.outbox.Submit(ctx, key.PartitionKey, func(b *entity.Batch) error {
			ops.into(b, c.srcBags, c.tgtBags)
			return nil
		}, msgs...)
	} else {
		b := c.srcBags.NewBatch()
		ops.into(b, c.srcBags, c.tgtBags)
		_, err = c.srcBags.Submit(ctx, b)
	}
	if err != nil {
		return "", submitError("submit", key, err)
	}
	switch {
	case push:
		return ops.bags[0].ETag, nil
	case curBag == nil:
		return "", nil
	}
	return curBag.ETag, nil
}

// candidates lists where the targets of relations rs that may refer to
// source key are, before and after its change.
func (c *Copies[T, S]) candidates(key Key, rs []*relation[T, S], old *doc[S], cur *S) (Targets, error) {
	var all []Targets
	for _, r := range rs {
		ts, err := c.targetsOf(r, old, cur)
		if err != nil {
			return Targets{}, err
		}
		all = append(all, ts...)
	}
	t := union(all...)
	for _, k := range t.Keys {
		if k.PartitionKey != key.PartitionKey {
			return t, &StepError{Step: "targets", Key: k, Err: ErrPlacement}
		}
	}
	for _, rg := range t.Ranges {
		if rg.PartitionKey != key.PartitionKey {
			return t, &StepError{Step: "targets", Key: Key{rg.PartitionKey, rg.From}, Err: ErrPlacement}
		}
	}
	return t, nil
}

func (c *Copies[T, S]) targetsOf(r *relation[T, S], old *doc[S], cur *S) ([]Targets, error) {
	var ts []Targets
	if old != nil {
		v, err := old.fresh()
		if err == nil {
			// Keys no entity can have name no target: dropped, so that a
			// source whose old version named one can still be changed or
			// deleted.
			ts = append(ts, validTargets(r.Targets(&v)))
		}
	}
	if cur != nil {
		t := r.Targets(cur)
		if err := checkTargets(r.Name, t); err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// validTargets is t without the keys and ranges no entity can be in.
func validTargets(t Targets) Targets {
	var v Targets
	for _, k := range t.Keys {
		if validKey(k) == nil {
			v.Keys = append(v.Keys, k)
		}
	}
	for _, r := range t.Ranges {
		if validKey(Key{PartitionKey: r.PartitionKey}) == nil {
			v.Ranges = append(v.Ranges, r)
		}
	}
	return v
}

// readTargets reads the targets that cands names, each once, the source
// itself aside, in the order named.
func (c *Copies[T, S]) readTargets(ctx context.Context, source Key, cands Targets, each func(*doc[T]) error) error {
	seen := map[Key]bool{source: true}
	for _, k := range cands.Keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		t, err := read[T](ctx, c.tgtRaw, k)
		if err != nil {
			return &StepError{Step: "read target", Key: k, Err: err}
		}
		if t == nil {
			continue
		}
		if err := each(t); err != nil {
			return err
		}
	}
	for _, rg := range cands.Ranges {
		err := queryRange(ctx, c.tgtRaw, rg, c.intents, func(t *doc[T]) error {
			if seen[t.key] {
				return nil
			}
			seen[t.key] = true
			return each(t)
		}, nil)
		if err != nil {
			var se *StepError
			if errors.As(err, &se) {
				return err
			}
			return &StepError{Step: "read targets", Key: Key{rg.PartitionKey, rg.From}, Err: err}
		}
	}
	return nil
}

// union merges target lists, each key and range once, in order.
func union(ts ...Targets) Targets {
	var u Targets
	keys := map[Key]bool{}
	ranges := map[Range]bool{}
	for _, t := range ts {
		for _, k := range t.Keys {
			if !keys[k] {
				keys[k] = true
				u.Keys = append(u.Keys, k)
			}
		}
		for _, r := range t.Ranges {
			if !ranges[r] {
				ranges[r] = true
				u.Ranges = append(u.Ranges, r)
			}
		}
	}
	return u
}

// sameCopy compares two projections.
func sameCopy(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !sameValue(v, w) {
			return false
		}
	}
	return true
}

// ops are the operations of one transaction, kept so that they can be
// added to a batch the outbox makes.
type ops struct {
	kinds   []entity.OpKind
	bags    []*entity.DynamicEntity
	del     *Key // the source's delete, first
	delETag string
	copies  int // targets whose copy is written
	fences  int // targets an insert fences
}

func (o *ops) add(k entity.OpKind, bag *entity.DynamicEntity) {
	o.kinds = append(o.kinds, k)
	o.bags = append(o.bags, bag)
}

func (o *ops) len() int {
	n := len(o.kinds)
	if o.del != nil {
		n++
	}
	return n
}

// into adds the operations to b. The source's operation (the first) goes
// through src's protection, the targets' through tgt's (package crypt: each type encrypted as its own
// table says); src and tgt are views of one table when there are targets.
func (o *ops) into(b *entity.Batch, src, tgt entity.View) {
	b.Through(src)
	if o.del != nil {
		b.Delete(o.del.PartitionKey, o.del.RowKey, o.delETag)
	}
	for i, k := range o.kinds {
		if i == 1 || i == 0 && o.del != nil {
			b.Through(tgt) // the targets of SamePartition relations
		}
		switch k {
		case entity.OpInsert:
			b.Insert(o.bags[i])
		case entity.OpReplace:
			b.Update(o.bags[i], entity.Replace)
		case entity.OpMerge:
			b.Update(o.bags[i], entity.Merge)
		}
	}
}

// createdMeanwhile makes the refused insert of a ModifyOptions.Create
// round (inserted true) start the round again, to change what the writer
// who created the entity first stored: the refusal is certain (a resent
// transaction's refusal is settled by its write token), so the change was
// not applied.
func createdMeanwhile(inserted bool, err error) error {
	if inserted && errors.Is(err, entity.ErrAlreadyExists) && !errors.Is(err, entity.ErrOutcomeUnknown) {
		return errline.Join(errAgain, err)
	}
	return err
}

// submitError makes a refused transaction start the round again when an
// entity it read changed (412) or went away (404) meanwhile.
func submitError(step string, key Key, err error) error {
	if !errors.Is(err, entity.ErrOutcomeUnknown) && errors.Is(err, entity.ErrNotFound) {
		err = errline.Join(errAgain, err)
	}
	return &StepError{Step: step, Key: key, Err: err}
}

// written stores etag into v, or clears v's ETag when it is unknown.
func written[V any](v *V, key Key, etag string) error {
	if etag == "" {
		return entityfields.SetSystem(v, entityfields.System{PartitionKey: key.PartitionKey, RowKey: key.RowKey})
	}
	return entityfields.SetWritten(v, etag)
}

// checkTargets refuses, before anything is written, a key or a range's
// PartitionKey that Relation.Targets names for a source's new version and
// that no entity can have:
// committed in a fan-out message, it would make the worker refuse the
// whole message, and every valid target it names would keep its old copy.
func checkTargets(rel string, t Targets) error {
	for _, k := range t.Keys {
		if err := validKey(k); err != nil {
			return &StepError{Step: "targets", Relation: rel, Key: k, Err: err}
		}
	}
	for _, r := range t.Ranges {
		if err := validKey(Key{PartitionKey: r.PartitionKey}); err != nil {
			return &StepError{Step: "targets", Relation: rel, Key: Key{r.PartitionKey, r.From}, Err: err}
		}
	}
	return nil
}

// validKey checks a source's or target's keys before any request.
func validKey(k Key) error {
	if err := keys.Validate(k.PartitionKey); err != nil {
		return &entity.ValidationError{Property: "PartitionKey", Rule: entity.RuleKey, Value: k.PartitionKey, Err: err}
	}
	if err := keys.Validate(k.RowKey); err != nil {
		return &entity.ValidationError{Property: "RowKey", Rule: entity.RuleKey, Value: k.RowKey, Err: err}
	}
	return nil
}
