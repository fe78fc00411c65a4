package indexentity

import (
	"context"
	"errors"
	"iter"
	"sync"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/drift"
)

// Members returns the RowKeys of the primaries of partition pk that the
// index named index lists under value, in key order: the index read of a
// lookup alone (one range query of the value's index entities, or one
// blob read). For SamePartition indexes they are exactly the primaries
// holding value; for the others, the list may be behind.
func (s *Set[T]) Members(ctx context.Context, index, pk, value string) ([]string, error) {
	if err := s.ok(); err != nil {
		return nil, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	ix, err := s.index(index)
	if err != nil {
		return nil, err
	}
	if value, err = ix.keyText(value); err != nil {
		return nil, err
	}
	return s.members(ctx, ix, pk, value)
}

// LookupAll yields the primaries of partition pk whose value in the index
// named index is value, in key order — the guide's "all employees named
// Jones in Sales", and package secondaryindex's name for the same lookup:
// the index read, then a point query per member, Config.Concurrency at
// once, yielded in the list's order as they arrive.
//
// A lookup never yields an entity that does not hold value: each point
// read is checked, and a member that is gone or holds another value
// (a list behind its primaries, or a primary changed since the index
// read) is skipped, and repaired with opts.Repair. A primary that holds
// value but is not listed yet (an OtherPartition or Blob list behind) is
// not found. A member that does not decode as T is yielded as a
// *StepError naming its keys, and the sequence goes on for as long as
// the caller ranges over it; any other error ends it.
func (s *Set[T]) LookupAll(ctx context.Context, index, pk, value string, opts LookupOptions) iter.Seq2[T, error] {
	if err := s.ok(); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	return func(yield func(T, error) bool) {
		var zero T
		ix, err := s.index(index)
		if err == nil {
			err = opts.check()
		}
		if err != nil {
			yield(zero, err)
			return
		}
		text, err := ix.keyText(value)
		if err != nil {
			yield(zero, err)
			return
		}
		ms, err := s.members(ctx, ix, pk, text)
		if err != nil {
			yield(zero, err)
			return
		}
		ks := make([]drift.Key, len(ms))
		for i, rk := range ms {
			ks[i] = drift.Key{PartitionKey: pk, RowKey: rk}
		}
		s.yieldHolders(ctx, ix, value, text, ks, opts, yield)
	}
}

// yieldHolders reads the primaries ks a lookup of value (text in the
// index's keys) in ix found listed (fetchKeys) and yields, in that order,
// those holding value, at most opts.Limit. A member gone or holding
// another value is skipped (and resynced with opts.Repair, unless it
// holds another value of the same text: an Encrypted index's beacon
// collision, whose list it belongs on); one that does not decode is
// yielded as a *StepError and the lookup goes on; another failed read
// ends it.
func (s *Set[T]) yieldHolders(ctx context.Context, ix *index[T], value, text string, ks []drift.Key, opts LookupOptions, yield func(T, error) bool) {
	var zero T
	var stale []drift.Key
	n := 0
	for r := range s.fetchKeys(ctx, ks) {
		if r.err != nil && !errors.Is(r.err, entity.ErrNotFound) {
			err := &StepError{Step: "lookup: read primary", Index: ix.Name, PartitionKey: r.pk, RowKey: r.rk, Err: r.err}
			if !errors.Is(r.err, entity.ErrDecode) {
				yield(zero, err)
				return
			}
			// One member that does not decode: its error, and the
			// lookup goes on if the caller does.
			if !yield(zero, err) {
				return
			}
			continue
		}
		if v, has := ix.Value(&r.e); r.err != nil || !has || v != value {
			if t, has := ix.text(&r.e); r.err != nil || !has || t != text {
				stale = append(stale, drift.Key{PartitionKey: r.pk, RowKey: r.rk})
			}
			continue
		}
		if !yield(r.e, nil) {
			return
		}
		if n++; opts.Limit > 0 && n >= opts.Limit {
			break
		}
	}
	if opts.Repair {
		for _, k := range stale {
			if err := s.resync(ctx, ix, k.PartitionKey, k.RowKey, text); err != nil {
				yield(zero, err)
				return
			}
		}
	}
}

// resync repairs primary pk/rk's membership of value's list in ix.
func (s *Set[T]) resync(ctx context.Context, ix *index[T], pk, rk, value string) error {
	if ix.Remote() {
		return s.sync(ctx, pk, rk, map[string][]string{ix.Name: {value}}, true)
	}
	return s.repairLocal(ctx, ix, pk, rk, value)
}

// fetched is one point read of a lookup.
type fetched[T any] struct {
	pk  string
	rk  string
	e   T
	err error
}

// fetchKeys reads the primaries ks, Config.Concurrency at once, and
// yields them in ks's order. At most Concurrency reads run or wait to be
// yielded, so a long list costs no more memory than a short one; stopping
// early cancels the reads under way, and every read has ended when the
// sequence returns.
func (s *Set[T]) fetchKeys(ctx context.Context, ks []drift.Key) iter.Seq[fetched[T]] {
	return func(yield func(fetched[T]) bool) {
		if len(ks) == 0 {
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// A read holds a token of sem from before it starts until its
		// result is taken off the window, so at most Concurrency reads
		// run or wait at once (the one the consumer waits for included).
		sem := make(chan struct{}, s.cfg.Concurrency)
		window := make(chan chan fetched[T], s.cfg.Concurrency)
		// wg holds the sender and every read: the sequence returns only
		// when all of them have ended.
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(window)
			for _, k := range ks {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					return
				}
				slot := make(chan fetched[T], 1)
				window <- slot // never blocks: a slot in the window holds a token
				wg.Add(1)
				go func() {
					defer wg.Done()
					e, err := s.core.Get(ctx, k.PartitionKey, k.RowKey)
					slot <- fetched[T]{pk: k.PartitionKey, rk: k.RowKey, e: e, err: err}
				}()
			}
		}()
		for slot := range window {
			r := <-slot
			<-sem
			if !yield(r) {
				cancel()
				for range window { // let the sender see the cancellation
				}
				return
			}
		}
	}
}

// ValueMembers returns the keys of the primaries, in any partition, that
// the TableWide index named index lists under value, in key order
// (PartitionKey, then RowKey): the index read of LookupValueAll alone, one
// range query per bucket, Config.Concurrency at once. The list may be behind its primaries, as
// OtherPartition lists may.
func (s *Set[T]) ValueMembers(ctx context.Context, index, value string) ([]drift.Key, error) {
	if err := s.ok(); err != nil {
		return nil, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	ix, err := s.index(index)
	if err != nil {
		return nil, err
	}
	if value, err = ix.keyText(value); err != nil {
		return nil, err
	}
	ms, err := s.wideMembers(ctx, ix, value)
	if err != nil {
		return nil, err
	}
	out := make([]drift.Key, 0, len(ms))
	for _, m := range ms {
		if pk, rk, ok := splitMember(m); ok {
			out = append(out, drift.Key{PartitionKey: pk, RowKey: rk})
		}
	}
	return out, nil
}

// LookupValueAll yields the primaries of the whole table whose value in
// the TableWide index named index is value — "all orders with status
// pending, whatever the customer" — in key order: by PartitionKey, then
// RowKey. It reads the value's list of every bucket (Index.Buckets range
// queries, Config.Concurrency at once), merges them, then reads each
// member, Config.Concurrency at once, and yields them in that order. opts.After pages: the lookup
// starts after those keys (give the last entity of the previous page,
// with opts.HasAfter set), and opts.Limit ends a page.
//
// As LookupAll, it never yields an entity that does not hold value (each
// read is checked; with opts.Repair the members found to disagree are
// repaired); a primary not listed yet is not found until its message is
// handled. Another index than a TableWide one is an error matching
// ErrPlacement, before any request.
func (s *Set[T]) LookupValueAll(ctx context.Context, index, value string, opts LookupOptions) iter.Seq2[T, error] {
	if err := s.ok(); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	return func(yield func(T, error) bool) {
		var zero T
		ix, err := s.index(index)
		if err == nil {
			err = opts.check()
		}
		if err != nil {
			yield(zero, err)
			return
		}
		text, err := ix.keyText(value)
		if err != nil {
			yield(zero, err)
			return
		}
		ms, err := s.wideMembers(ctx, ix, text)
		if err != nil {
			yield(zero, err)
			return
		}
		var ks []drift.Key
		paged := opts.HasAfter || opts.After != (drift.Key{})
		after := wideMember(opts.After.PartitionKey, opts.After.RowKey)
		for _, m := range ms {
			if paged && keys.Compare(m, after) <= 0 {
				continue
			}
			if pk, rk, ok := splitMember(m); ok {
				ks = append(ks, drift.Key{PartitionKey: pk, RowKey: rk})
			}
		}
		s.yieldHolders(ctx, ix, value, text, ks, opts, yield)
	}
}
