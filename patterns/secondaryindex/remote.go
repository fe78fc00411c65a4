package secondaryindex

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/pipeline"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// errPending reports a reservation that protects a write that may still
// arrive: it cannot be released before Config.Grace has passed.
var errPending = errors.New("secondaryindex: a reserved value's write may be under way")

// maxRounds bounds the loops that start again when an entry or primary
// changed under them.
const maxRounds = 16

func keyOfDrift(pk, rk string) drift.Key { return drift.Key{PartitionKey: pk, RowKey: rk} }

// reserve claims the new values of this write's unique OtherPartition
// indexes and returns the round's message: nil when no OtherPartition
// entry changes.
func (w *write[T]) reserve(ctx context.Context) (*eventual.Message, error) {
	s := w.s
	if len(s.core.Remote) == 0 {
		return nil, nil
	}
	w.reservedNow = 0
	values := map[string][]string{}
	changed := false
	// Every entry the message will write is checked first, before any
	// reservation: one the service refuses would fail every delivery.
	var claims []reservation[T]
	for _, ix := range s.core.Remote {
		oldP, oldK, oldV, oldHas, err := w.entryOf(ix, w.old)
		if err != nil {
			return nil, err
		}
		newP, newK, newV, newHas, err := w.entryOf(ix, w.cur)
		if err != nil {
			return nil, err
		}
		if oldHas {
			values[ix.Name] = append(values[ix.Name], oldV)
		}
		if newHas {
			values[ix.Name] = append(values[ix.Name], newV)
		}
		claim := ClaimInsert
		if w.old != nil {
			claim = w.old.ETag
		}
		switch {
		case !oldHas && !newHas:
			continue
		case oldHas && newHas && oldP == newP && oldK == newK:
			if want := ix.copyOf(w.cur, newP, newK, w.pk, w.rk); !sameCopy(want, ix.copyOf(w.old, oldP, oldK, w.pk, w.rk)) {
				changed = true
				if err := ix.writable(want, claim); err != nil {
					return nil, err
				}
			}
			continue
		}
		changed = true
		if newHas {
			if err := ix.writable(ix.copyOf(w.cur, newP, newK, w.pk, w.rk), claim); err != nil {
				return nil, err
			}
		}
		if !ix.Unique || !newHas {
			continue
		}
		claims = append(claims, reservation[T]{ix, newP, newK, newV, claim})
	}
	for _, r := range claims {
		ix, newP, newK, newV, claim := r.ix, r.epk, r.erk, r.value, r.claim
		if w.reservedNow == 0 {
			w.reservedAt = time.Now() // the deadline it sets runs on this clock
		}
		w.reservedNow++
		if !slices.Contains(w.reserved[ix.Name], newV) {
			w.reserved[ix.Name] = append(w.reserved[ix.Name], newV)
		}
		if err := s.reserve(ctx, ix, newV, w.pk, w.rk, claim, ix.copyOf(w.cur, newP, newK, w.pk, w.rk)); err != nil {
			return nil, err
		}
	}
	if !changed && len(w.reserved) == 0 {
		return nil, nil
	}
	for name, vs := range w.reserved {
		values[name] = append(values[name], vs...)
	}
	m, err := s.core.Message(w.pk, w.rk, values)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// reservation is a unique value a write reserves.
type reservation[T any] struct {
	ix              *index[T]
	epk, erk, value string
	claim           string
}

// writable checks, before anything is written, that the service takes
// want, the entry of ix the index's message writes: as is for a
// non-unique index (an upsert carries no write token), with the claim
// and the longest write token for a unique one. An entry it would refuse
// (more than 252 properties, over 1 MiB: a primary near the limits, whose
// entry adds its keys) would fail every delivery of the message and stay
// Missing; the write is refused instead, with a *StepError naming the
// entry that unwraps to entity's *ValidationError (entity.ErrInvalid).
func (ix *index[T]) writable(want *entity.DynamicEntity, claim string) error {
	e := want
	if ix.Unique {
		e = clone(want)
		e.Properties[PropClaim] = claim
		e.Properties[propWriteToken] = indexset.LongestToken
	}
	if err := entity.Validate(e); err != nil {
		return &StepError{Step: "check entry", Index: ix.Name, PartitionKey: want.PartitionKey, RowKey: want.RowKey, Err: err}
	}
	return nil
}

// reserve claims value of the unique index ix for primary pk/rk, whose
// write is conditional on claim (its base ETag, or ClaimInsert): it
// inserts the entry, holding want's copy and the claim, or refreshes it
// when the primary claimed it before, or takes it over from a holder
// whose claim is dead. A value held, or claimed by a write that may still
// arrive, is a *UniqueError.
func (s *Set[T]) reserve(ctx context.Context, ix *index[T], value, pk, rk, claim string, want *entity.DynamicEntity) error {
	want.Properties[PropClaim] = claim
	epk, erk := want.PartitionKey, want.RowKey
	step := func(err error) error {
		return &StepError{Step: "reserve", Index: ix.Name, PartitionKey: epk, RowKey: erk, Err: err}
	}
	return s.claim(ctx, want, step, func(cur *entity.DynamicEntity, now time.Time) (bool, error) {
		opk, ork, ok := owner(cur)
		if ok && opk == pk && ork == rk {
			return true, nil // refresh this write's own claim
		}
		switch v, err := s.free(ctx, ix, cur, now, value); {
		case err != nil:
			return false, step(err)
		case v == held:
			return false, &UniqueError{Index: ix.Name, Value: value, Holder: keyOfDrift(opk, ork)}
		case v == pending:
			return false, &UniqueError{Index: ix.Name, Value: value, Holder: keyOfDrift(opk, ork), Pending: true}
		case v == again:
			return false, errReadAgain
		}
		return true, nil
	})
}

// getEntry reads the entry pk, rk and the service's time when it
// answered: the Date header of the answer that returned the entry (the
// clock that set its Timestamp, truncated to the second, so an age read
// with it is never too long), or, when the answer had none (a client
// without entity.ClientOptions' policies), Config.Now.
func (s *Set[T]) getEntry(ctx context.Context, pk, rk string) (entity.DynamicEntity, time.Time, error) {
	cctx, call := pipeline.WithCall(ctx)
	e, err := s.core.Entries.Get(cctx, pk, rk)
	now, ok := call.Date()
	if !ok {
		now = s.cfg.Now()
	}
	return e, now, err
}

// errReadAgain makes claim read the entry again.
var errReadAgain = errors.New("secondaryindex: read the entry again")

// claim writes want as the unique entry of its keys: it inserts it when
// there is none, else asks decide about the stored entry cur — take it
// (replace it by want, on its ETag), leave it (done), read it again
// (errReadAgain), or fail. A lost race or an outcome entity could not
// settle reads again, which tells; after maxRounds, step's
// entity.ErrContention.
func (s *Set[T]) claim(ctx context.Context, want *entity.DynamicEntity, step func(error) error, decide func(cur *entity.DynamicEntity, now time.Time) (take bool, err error)) error {
	for range maxRounds {
		cur, now, err := s.getEntry(ctx, want.PartitionKey, want.RowKey)
		if errors.Is(err, entity.ErrNotFound) {
			err := s.core.Entries.Insert(ctx, clone(want))
			if err == nil {
				return nil
			}
			if errors.Is(err, entity.ErrAlreadyExists) || errors.Is(err, entity.ErrOutcomeUnknown) {
				// Taken meanwhile, or a lost reply entity could not settle:
				// the next read tells whose the entry is.
				continue
			}
			return step(err)
		}
		if err != nil {
			return step(err)
		}
		take, err := decide(&cur, now)
		switch {
		case errors.Is(err, errReadAgain):
			continue
		case err != nil || !take:
			return err
		}
		if err := s.replaceEntry(ctx, &cur, want); err == nil {
			return nil
		} else if !changedSince(err) && !errors.Is(err, entity.ErrOutcomeUnknown) {
			return step(err) // else: read again, which tells
		}
	}
	return step(entity.ErrContention)
}

// replaceEntry replaces the stored entry cur by want, on condition that
// it did not change since it was read.
func (s *Set[T]) replaceEntry(ctx context.Context, cur, want *entity.DynamicEntity) error {
	e := clone(want)
	e.ETag = cur.ETag
	if chain, ok := cur.Properties[propWriteToken]; ok {
		e.Properties[propWriteToken] = chain // entity proves the outcome with it
	}
	return s.core.Entries.Update(ctx, e, entity.Replace)
}

// changedSince reports a conditional write that lost to another writer.
func changedSince(err error) bool {
	return errors.Is(err, entity.ErrPreconditionFailed) || errors.Is(err, entity.ErrNotFound)
}

func clone(e *entity.DynamicEntity) *entity.DynamicEntity {
	c := *e
	c.Properties = maps.Clone(e.Properties)
	return &c
}

// verdict is what free finds about a unique entry and its owner.
type verdict uint8

const (
	free    verdict = iota + 1 // no write can give the owner the value: the entry may go
	held                       // the owner holds the value
	pending                    // the owner's write of it may still arrive
	again                      // something changed: read the entry again
)

// free decides whether the unique entry e, which holds value, may be
// released or taken over: its owner does not hold the value and no write
// the entry was reserved for can still give it to the owner.
//
//   - No claim: the owner held the value once and lost it since; a write
//     that wants it back must reserve it again first, changing the entry's
//     ETag, which the caller's conditional write will notice.
//   - Claim ClaimInsert: if the owner exists the insert can no longer
//     apply; if not, the insert may be under way until Config.Grace has
//     passed since the claim (the writer gives up sending after Grace/2).
//   - Claim an ETag: if the owner is gone or has another ETag the write
//     (conditional on that ETag) can no longer apply; if the owner still has
//     it, the write may be under way: after Grace the owner is fenced, by a
//     write conditional on that ETag that changes it, so the write never
//     applies.
//
// now is the service's time when e was read (getEntry): e's age is read
// on the clock that stamped its Timestamp, so no skew of this process's
// clock frees a reservation early or keeps it past Grace.
func (s *Set[T]) free(ctx context.Context, ix *index[T], e *entity.DynamicEntity, now time.Time, value string) (verdict, error) {
	opk, ork, ok := owner(e)
	if !ok {
		return free, nil // not an entry: nothing points at it
	}
	o, found, err := s.read(ctx, opk, ork)
	if err != nil {
		return 0, err
	}
	if found && s.holds(ix, &o, opk, ork, e.PartitionKey, e.RowKey) {
		return held, nil
	}
	claim, claimed := entity.Prop[string](e, PropClaim)
	old := !e.Timestamp.IsZero() && now.Add(s.aged).Sub(e.Timestamp) >= s.cfg.Grace
	switch {
	case !claimed:
		return free, nil
	case claim == ClaimInsert:
		if found || old {
			return free, nil
		}
		return pending, nil
	case !found || o.ETag != claim:
		return free, nil
	case !old:
		return pending, nil
	}
	if err := s.fence(ctx, opk, ork, &o); err != nil {
		if changedSince(err) {
			return again, nil
		}
		return 0, err
	}
	return free, nil
}

// holds reports whether primary o (keys pk, rk) has the entry epk/erk in ix.
func (s *Set[T]) holds(ix *index[T], o *version[T], pk, rk, epk, erk string) bool {
	p, k, _, has, err := ix.entryKeys(&o.E, pk, rk)
	return err == nil && has && p == epk && k == erk
}

// fence changes primary o on condition of its ETag, so that a write
// conditional on that ETag can never apply.
func (s *Set[T]) fence(ctx context.Context, pk, rk string, o *version[T]) error {
	return s.core.Bags.Update(ctx, indexset.Fence(pk, rk, o), entity.Merge)
}

// handle is the message handler of the Set's kind: it brings the
// OtherPartition and TableWide entries of the message's primary in line
// with it (indexset.Core.Sync): the entry of each value it holds holds
// its copy (ensure), and the entries of the message's values it does not
// hold are gone (release; a unique one only once no write it was
// reserved for can arrive).
func (s *Set[T]) handle(ctx context.Context, m indexset.SyncMessage) error {
	return s.sync(ctx, m.PK, m.RK, m.Values)
}

// sync brings the entries of primary pk/rk in line with it, looking at
// values besides the one it holds (handle).
func (s *Set[T]) sync(ctx context.Context, pk, rk string, values map[string][]string) error {
	return s.core.Sync(ctx, pk, rk, values, indexset.Syncer[T, *index[T]]{
		Rounds: maxRounds,
		Want: func(ix *index[T], p *version[T], pk, rk string) (string, bool, error) {
			// A value that makes no key (written around the Set) fails
			// this index alone; the others are synced.
			_, _, want, has, err := ix.entryKeys(&p.E, pk, rk)
			return want, has, err
		},
		Apply: func(ctx context.Context, ix *index[T], p *version[T], pk, rk, value string, holds bool) error {
			if holds {
				return s.ensure(ctx, ix, p, pk, rk, value)
			}
			return s.release(ctx, ix, pk, rk, value)
		},
	})
}

// ensure makes the entry of value in ix hold primary p's copy.
func (s *Set[T]) ensure(ctx context.Context, ix *index[T], p *version[T], pk, rk, value string) error {
	epk, erk := ix.entryAt(value, pk, rk)
	want := ix.copyOf(p, epk, erk, pk, rk)
	step := func(err error) error {
		return &StepError{Step: "sync: write entry", Index: ix.Name, PartitionKey: epk, RowKey: erk, Err: err}
	}
	if !ix.Unique {
		if err := s.core.Entries.Upsert(ctx, want, entity.Replace); err != nil {
			return step(err)
		}
		return nil
	}
	return s.claim(ctx, want, step, func(cur *entity.DynamicEntity, now time.Time) (bool, error) {
		opk, ork, ok := owner(cur)
		if ok && opk == pk && ork == rk {
			_, claimed := cur.Properties[PropClaim]
			return claimed || !sameCopy(want, cur), nil
		}
		switch v, err := s.free(ctx, ix, cur, now, value); {
		case err != nil:
			return false, step(err)
		case v == held:
			// Two primaries hold one unique value: only a writer that
			// went around the Set can do that. The entry stays with the
			// holder it names (the rule Check's keeper states), and Check
			// reports this primary as a drift.Duplicate.
			return false, nil
		case v == pending:
			return false, step(errPending)
		case v == again:
			return false, errReadAgain
		}
		return true, nil
	})
}

// release removes the entry of value in ix if primary pk/rk owns it and
// may lose it.
func (s *Set[T]) release(ctx context.Context, ix *index[T], pk, rk, value string) error {
	epk, erk := ix.entryAt(value, pk, rk)
	step := func(err error) error {
		return &StepError{Step: "sync: remove entry", Index: ix.Name, PartitionKey: epk, RowKey: erk, Err: err}
	}
	if !ix.Unique {
		if err := indexset.DeleteSettled(ctx, s.core.Entries, epk, erk); err != nil {
			return step(err)
		}
		return nil
	}
	for range maxRounds {
		cur, now, err := s.getEntry(ctx, epk, erk)
		if errors.Is(err, entity.ErrNotFound) {
			return nil
		}
		if err != nil {
			return step(err)
		}
		if opk, ork, ok := owner(&cur); !ok || opk != pk || ork != rk {
			return nil // another's now
		}
		switch v, err := s.free(ctx, ix, &cur, now, value); {
		case err != nil:
			return step(err)
		case v == held:
			return nil // the primary holds it again
		case v == pending:
			return step(errPending)
		case v == again:
			continue
		}
		err = s.core.Entries.Delete(ctx, epk, erk, cur.ETag)
		if err == nil {
			return nil
		}
		if errors.Is(err, entity.ErrOutcomeUnknown) {
			continue // read again
		}
		if !changedSince(err) {
			return step(err)
		}
	}
	return step(entity.ErrContention)
}
