package entity

import (
	"context"
	"iter"
	"reflect"
	"slices"

	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/merge"
	"github.com/tablekit/tablekit/keys"
)

// queryByRowKey is QueryPartitions with FanOutOptions.ByRowKey: every
// partition is read at once and the results merged by RowKey, PartitionKey
// breaking ties. The merge needs the head of every partition, so a
// partition cannot hold a slot until it ends, as the PartitionKey-ordered
// fan-out does; here each request takes one of the slots instead.
func (t *Table[T]) queryByRowKey(ctx context.Context, partitions []string, q Query, workers int, yield func(T, error) bool) {
	pks := slices.Clone(partitions)
	slices.SortFunc(pks, keys.Compare)
	pks = slices.Compact(pks)
	slots := make(chan struct{}, workers)
	gate := func(ctx context.Context, c compiled, top int, cont continuation) ([]T, []error, continuation, error) {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil, nil, continuation{}, ctx.Err()
		}
		defer func() { <-slots }()
		return t.fetch(ctx, c, top, cont)
	}
	// Each entity travels with its RowKey, found once; a row that could
	// not be decoded travels as its *RowError, in its place, when the
	// query goes on past such rows.
	type keyed struct {
		rk     string
		v      T
		rowErr *RowError
	}
	sources := make([]func(context.Context) iter.Seq2[keyed, error], len(pks))
	for i, pk := range pks {
		pq := q // no partition yields more than the merged limit
		pq.Filter = filter.And(filter.PK(pk), q.Filter)
		sources[i] = func(ctx context.Context) iter.Seq2[keyed, error] {
			return func(yield func(keyed, error) bool) {
				for v, err := range iterate(ctx, t, pq, gate) {
					if re, ok := err.(*RowError); ok && q.ContinueOnRowError {
						if !yield(keyed{rk: re.RowKey, rowErr: re}, nil) {
							return
						}
						continue
					}
					_, rk := t.shape.keyValues(reflect.ValueOf(&v).Elem())
					if !yield(keyed{rk: rk, v: v}, err) || err != nil {
						return
					}
				}
			}
		}
	}
	n := 0
	// Sources are in PartitionKey order and equal items come in source
	// order: ties on RowKey go by PartitionKey.
	for kv, err := range merge.Sorted(ctx, sources, func(a, b keyed) int { return keys.Compare(a.rk, b.rk) }) {
		if kv.rowErr != nil {
			var zero T
			if !yield(zero, kv.rowErr) {
				return
			}
		} else if !yield(kv.v, err) || err != nil {
			return
		}
		if n++; q.Limit > 0 && n >= q.Limit {
			return
		}
	}
}
