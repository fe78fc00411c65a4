package indexentity

import (
	"context"
	"errors"
	"iter"
	"sync"

	"github.com/tablekit/tablekit/entity"
)

// Members returns the RowKeys of the primaries of partition pk that the
// index named index lists under value, in key order: the index read of a
// lookup alone (one range query of the value's index entities, or one
// blob read). For SamePartition indexes they are exactly the primaries
// holding value; for the others, the list may be behind.
func (s *Set[T]) Members(ctx context.Context, index, pk, value string) ([]string, error) {
	ix, err := s.index(index)
	if err != nil {
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
	return func(yield func(T, error) bool) {
		var zero T
		ix, err := s.index(index)
		if err != nil {
			yield(zero, err)
			return
		}
		ms, err := s.members(ctx, ix, pk, value)
		if err != nil {
			yield(zero, err)
			return
		}
		var stale []string
		n := 0
		for r := range s.fetch(ctx, pk, ms) {
			if r.err != nil && !errors.Is(r.err, entity.ErrNotFound) {
				err := &StepError{Step: "lookup: read primary", Index: ix.Name, PartitionKey: pk, RowKey: r.rk, Err: r.err}
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
				stale = append(stale, r.rk)
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
			for _, rk := range stale {
				if err := s.resync(ctx, ix, pk, rk, value); err != nil {
					yield(zero, err)
					return
				}
			}
		}
	}
}

// resync repairs primary pk/rk's membership of value's list in ix.
func (s *Set[T]) resync(ctx context.Context, ix *index[T], pk, rk, value string) error {
	if ix.remote() {
		return s.sync(ctx, pk, rk, map[string][]string{ix.Name: {value}}, true)
	}
	return s.repairLocal(ctx, ix, pk, rk, value)
}

// fetched is one point read of a lookup.
type fetched[T any] struct {
	rk  string
	e   T
	err error
}

// fetch reads the primaries pk/rks, Config.Concurrency at once, and
// yields them in rks's order. At most Concurrency reads run or wait to be
// yielded, so a long list costs no more memory than a short one; stopping
// early cancels the reads under way.
func (s *Set[T]) fetch(ctx context.Context, pk string, rks []string) iter.Seq[fetched[T]] {
	return func(yield func(fetched[T]) bool) {
		if len(rks) == 0 {
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		window := make(chan chan fetched[T], s.cfg.Concurrency)
		var wg sync.WaitGroup
		defer wg.Wait()
		go func() {
			defer close(window)
			for _, rk := range rks {
				slot := make(chan fetched[T], 1)
				select {
				case window <- slot:
				case <-ctx.Done():
					return
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					e, err := s.primary.Get(ctx, pk, rk)
					slot <- fetched[T]{rk: rk, e: e, err: err}
				}()
			}
		}()
		for slot := range window {
			r := <-slot
			if !yield(r) {
				cancel()
				for range window { // let the sender see the cancellation
				}
				return
			}
		}
	}
}
