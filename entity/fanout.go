package entity

import (
	"context"
	"iter"
	"slices"
	"strconv"
	"sync"

	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
)

// DefaultConcurrency is what a Concurrency of 0 means, in entity and in
// the pattern packages: the most requests (partitions, transactions,
// targets) one call has in flight at once.
const DefaultConcurrency = 4

// FanOutOptions tunes QueryPartitions.
type FanOutOptions struct {
	// Concurrency is the most partitions queried at once; 0 means
	// DefaultConcurrency.
	Concurrency int
	// Unordered yields entities as they arrive from any partition instead of
	// in PartitionKey, RowKey order. It is faster when the caller does not
	// care about order: no partition waits for an earlier one.
	Unordered bool
	// ByRowKey merges the partitions' entities in RowKey order, PartitionKey
	// breaking ties, instead of PartitionKey then RowKey: the order of one
	// sequence spread over bucket partitions (design guide §6.12). Every
	// partition is read at once, and Concurrency bounds the requests in
	// flight instead of the partitions. With q.Limit = n (at most 1,000)
	// each partition costs one request of at most n entities: the n first
	// keys across all buckets.
	ByRowKey bool
}

// QueryPartitions runs q in each of the partitions concurrently (design
// guide §7, asynchronous and parallel operations; the fan-out read of §6.12
// buckets), each partition's query being q.Filter and PartitionKey eq pk.
// By default the results are merged in the service's order, PartitionKey
// then RowKey, as if one query had read them; q.Limit applies to the merged
// result. The first error is yielded and ends the sequence; stopping early
// cancels the queries still running.
func (t *Table[T]) QueryPartitions(ctx context.Context, partitions []string, q Query, opts FanOutOptions) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		workers := opts.Concurrency
		if workers <= 0 {
			workers = DefaultConcurrency
		}
		var zero T
		if q.Filter.Plan().Comparisons >= filter.MaxComparisons {
			yield(zero, &ValidationError{Rule: "filter comparisons", Limit: "at most 14 in a fan-out query (the PartitionKey adds one; the service allows 15)", Value: strconv.Itoa(q.Filter.Plan().Comparisons)})
			return
		}
		if opts.ByRowKey {
			if opts.Unordered {
				yield(zero, &ValidationError{Rule: "fan-out order", Limit: "Unordered or ByRowKey, not both", Value: "both"})
				return
			}
			t.queryByRowKey(ctx, partitions, q, workers, yield)
			return
		}
		// The service's order, UTF-16 code units, not Go's byte order.
		pks := slices.Clone(partitions)
		slices.SortFunc(pks, keys.Compare)
		pks = slices.Compact(pks)
		parent := ctx
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()

		type item struct {
			v   T
			err error
		}
		// One channel per partition. Partitions start in order and each takes
		// a slot until it ends, so the earliest unfinished partition always
		// runs and the ordered merge below never waits on a partition that
		// cannot start.
		streams := make([]chan item, len(pks))
		for i := range streams {
			streams[i] = make(chan item, 64)
		}
		merged := make(chan item, 64)
		slots := make(chan struct{}, workers)
		var wg sync.WaitGroup
		go func() {
			for i, pk := range pks {
				select {
				case slots <- struct{}{}:
				case <-ctx.Done():
					// Unstarted partitions end with the context's error, so
					// the merge below neither waits forever nor ends silently.
					if opts.Unordered {
						wg.Wait()
						select {
						case merged <- item{err: ctx.Err()}:
						default:
						}
						close(merged)
						return
					}
					for _, s := range streams[i:] {
						s <- item{err: ctx.Err()}
						close(s)
					}
					return
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-slots }()
					out := merged
					if !opts.Unordered {
						out = streams[i]
						defer close(out)
					}
					pq := q // no partition yields more than the merged limit
					pq.Filter = filter.And(filter.PK(pk), q.Filter)
					for v, err := range t.Query(ctx, pq) {
						select {
						case out <- item{v, err}:
						case <-ctx.Done():
							return
						}
						if err != nil {
							return
						}
					}
				}()
			}
			if opts.Unordered {
				wg.Wait()
				close(merged)
			}
		}()

		n := 0
		emit := func(it item) bool {
			if it.err != nil {
				yield(zero, it.err)
				return false
			}
			if !yield(it.v, nil) {
				return false
			}
			n++
			return q.Limit == 0 || n < q.Limit
		}
		if opts.Unordered {
			for it := range merged {
				if !emit(it) {
					return
				}
			}
		} else {
			for i := range streams {
				for it := range streams[i] {
					if !emit(it) {
						return
					}
				}
			}
		}
		// A worker stopped by the caller's context ends its stream without
		// an error: say why the results are incomplete.
		if err := parent.Err(); err != nil {
			yield(zero, err)
		}
	}
}
