package entity

import (
	"context"
	"iter"
	"slices"
	"strconv"
	"sync"

	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
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
// result. The first error is yielded and ends the sequence (but for a row
// that cannot be decoded, with q.ContinueOnRowError: see Query); stopping
// early cancels the queries still running.
func (t *Table[T]) QueryPartitions(ctx context.Context, partitions []string, q Query, opts FanOutOptions) iter.Seq2[T, error] {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return failed[T](err)
	}
	if err := t.ok(); err != nil {
		return failed[T](err)
	}
	t, q, err := t.bindQuery(ctx, "QueryPartitions", q, partitions, true)
	if err != nil {
		return failed[T](err)
	}
	return func(yield func(T, error) bool) {
		opts = opts.withDefaults()
		var zero T
		if err := checkFanOut(q, opts); err != nil {
			yield(zero, err)
			return
		}
		if opts.ByRowKey {
			t.queryByRowKey(ctx, partitions, q, opts.Concurrency, yield)
			return
		}
		// The service's order, UTF-16 code units, not Go's byte order.
		pks := slices.Clone(partitions)
		slices.SortFunc(pks, keys.Compare)
		pks = slices.Compact(pks)
		parent := ctx
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()

		f := newFanOut[T](len(pks), opts)
		go f.launch(ctx, pks, func(ctx context.Context, pk string, out chan<- item[T]) {
			t.queryInto(ctx, pk, q, out)
		})
		if !f.merge(yield, q.Limit, q.ContinueOnRowError) {
			return
		}
		// A worker stopped by the caller's context ends its stream without
		// an error: say why the results are incomplete.
		if err := parent.Err(); err != nil {
			yield(zero, err)
		}
	}
}

func (o FanOutOptions) withDefaults() FanOutOptions {
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	return o
}

// checkFanOut refuses, before any request, a query the fan-out cannot run.
func checkFanOut(q Query, opts FanOutOptions) error {
	if n := q.Filter.Plan().Comparisons; n >= filter.MaxComparisons {
		return &ValidationError{Rule: "filter comparisons", Limit: "at most 14 in a fan-out query (the PartitionKey adds one; the service allows 15)", Value: strconv.Itoa(n)}
	}
	if opts.ByRowKey && opts.Unordered {
		return &ValidationError{Rule: "fan-out order", Limit: "Unordered or ByRowKey, not both", Value: "both"}
	}
	return nil
}

// item is one result of one partition's query.
type item[T any] struct {
	v   T
	err error
}

// fanOut runs one query per partition and merges their results: in
// partition order through one stream per partition, or, Unordered, as
// they arrive through one shared channel.
type fanOut[T any] struct {
	unordered bool
	streams   []chan item[T] // ordered: one per partition, in order
	merged    chan item[T]   // unordered
	slots     chan struct{}  // at most Concurrency partitions at once
	wg        sync.WaitGroup
}

func newFanOut[T any](partitions int, opts FanOutOptions) *fanOut[T] {
	f := &fanOut[T]{unordered: opts.Unordered, slots: make(chan struct{}, opts.Concurrency)}
	if f.unordered {
		f.merged = make(chan item[T], 64)
		return f
	}
	f.streams = make([]chan item[T], partitions)
	for i := range f.streams {
		f.streams[i] = make(chan item[T], 64)
	}
	return f
}

// launch starts run for each partition, in order, each taking a slot
// until it ends, so the earliest unfinished partition always runs and the
// ordered merge never waits on a partition that cannot start. It closes
// every channel it owns when done.
func (f *fanOut[T]) launch(ctx context.Context, pks []string, run func(ctx context.Context, pk string, out chan<- item[T])) {
	for i, pk := range pks {
		select {
		case f.slots <- struct{}{}:
		case <-ctx.Done():
			f.endUnstarted(ctx, i)
			return
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer func() { <-f.slots }()
			out := f.merged
			if !f.unordered {
				out = f.streams[i]
				defer close(out)
			}
			run(ctx, pk, out)
		}()
	}
	if f.unordered {
		f.wg.Wait()
		close(f.merged)
	}
}

// endUnstarted ends the partitions from i on with the context's error, so
// the merge neither waits forever nor ends silently.
func (f *fanOut[T]) endUnstarted(ctx context.Context, i int) {
	if f.unordered {
		f.wg.Wait()
		select {
		case f.merged <- item[T]{err: ctx.Err()}:
		default:
		}
		close(f.merged)
		return
	}
	for _, s := range f.streams[i:] {
		s <- item[T]{err: ctx.Err()}
		close(s)
	}
}

// queryInto sends one partition's results to out: q within the partition,
// each partition yielding at most the merged limit.
func (t *Table[T]) queryInto(ctx context.Context, pk string, q Query, out chan<- item[T]) {
	pq := q
	pq.Filter = filter.And(filter.PK(pk), q.Filter)
	for v, err := range t.Query(ctx, pq) {
		select {
		case out <- item[T]{v, err}:
		case <-ctx.Done():
			return
		}
		if err != nil && !(q.ContinueOnRowError && isRowError(err)) {
			return
		}
	}
}

// isRowError reports the error of one row that could not be decoded.
func isRowError(err error) bool {
	_, ok := err.(*RowError)
	return ok
}

// merge yields the results until they end (true), an error, the caller
// stops or limit (0: none) results were yielded (false). With
// goOn, a row's *RowError is yielded in its place and counts as a result.
func (f *fanOut[T]) merge(yield func(T, error) bool, limit int, goOn bool) bool {
	n := 0
	emit := func(it item[T]) bool {
		if it.err != nil && !(goOn && isRowError(it.err)) {
			var zero T
			yield(zero, it.err)
			return false
		}
		if !yield(it.v, it.err) {
			return false
		}
		n++
		return limit == 0 || n < limit
	}
	if f.unordered {
		for it := range f.merged {
			if !emit(it) {
				return false
			}
		}
		return true
	}
	for _, s := range f.streams {
		for it := range s {
			if !emit(it) {
				return false
			}
		}
	}
	return true
}
