package logtail

import (
	"context"
	"iter"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/keys"
)

// noUpper is a tick bound above every tick: no upper bound.
const noUpper = keys.MaxTicks + 1

// Since yields the entries of partition made at t or later (to the 100 ns
// tick), newest first: one RowKey range query, followed across pages.
func (l *Log[T]) Since(ctx context.Context, partition string, t time.Time) iter.Seq2[T, error] {
	if err := l.ok(); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	return l.between("Since", ctx, partition, keys.Ticks(t), noUpper)
}

// Between yields the entries of partition made at from or later and before
// to (to the 100 ns tick), newest first: one RowKey range query, followed
// across pages. Nothing is read when to is not after from.
func (l *Log[T]) Between(ctx context.Context, partition string, from, to time.Time) iter.Seq2[T, error] {
	if err := l.ok(); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	return l.between("Between", ctx, partition, keys.Ticks(from), keys.Ticks(to))
}

func (l *Log[T]) between(op string, ctx context.Context, partition string, from, to int64) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		if err := checkPartition(op, partition); err != nil {
			yield(zero, err)
			return
		}
		if to <= from {
			return
		}
		q := entity.Query{Filter: rangeFilter(partition, from, to)}
		if !l.cfg.Unsorted {
			for e, err := range l.tbl.Query(ctx, q) {
				if !yield(e, wrap(op, partition, err)) || err != nil {
					return
				}
			}
			return
		}
		all, err := newestOf(l.tbl.Query(ctx, q), 0)
		if err != nil {
			yield(zero, wrap(op, partition, err))
			return
		}
		for _, e := range all {
			if !yield(e, nil) {
				return
			}
		}
	}
}
