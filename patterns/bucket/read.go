package bucket

import (
	"context"
	"iter"
	"strconv"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/keys"
)

// Get reads the entity with rowKey of the spread partition name: one point
// query, in the bucket Partition names. A missing entity is an *Error
// matching entity.ErrNotFound.
func (s *Spread[T]) Get(ctx context.Context, name, rowKey string) (T, error) {
	if err := s.ok(); err != nil {
		return *new(T), err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return *new(T), err
	}
	var zero T
	if err := s.checkName("Get", name); err != nil {
		return zero, err
	}
	if err := keys.Validate(rowKey); err != nil {
		return zero, &ArgError{Op: "Get", Arg: "row key", Value: quoteShort(rowKey), Reason: "not a valid key", Err: err}
	}
	e, err := s.tbl.Get(ctx, s.Partition(name, rowKey), rowKey)
	return e, wrap("Get", name, err)
}

// Query runs q in every bucket of name at once and yields the entities
// merged in RowKey order (entity.Table.QueryPartitions with
// FanOutOptions.ByRowKey), as if the spread partition were one: the read
// this pattern pays for its spread writes, one query per bucket instead of
// one. q.Filter must not constrain PartitionKey (the buckets do);
// a RowKey range keeps every bucket's query a range query. q.Limit caps the
// merged result, and costs each bucket at most one request when it is at
// most 1,000.
func (s *Spread[T]) Query(ctx context.Context, name string, q entity.Query) iter.Seq2[T, error] {
	if err := s.ok(); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	return s.query(ctx, "Query", name, q)
}

func (s *Spread[T]) query(ctx context.Context, op, name string, q entity.Query) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		if err := s.checkName(op, name); err != nil {
			yield(zero, err)
			return
		}
		if q.Filter.Plan().Kind != filter.TableScan {
			yield(zero, &ArgError{Op: op, Arg: "filter", Value: q.Filter.Plan().Kind.String(), Reason: "must not constrain PartitionKey: the spread adds each bucket's"})
			return
		}
		for e, err := range s.tbl.QueryPartitions(ctx, s.Partitions(name), q, entity.FanOutOptions{ByRowKey: true, Concurrency: s.cfg.Concurrency}) {
			if !yield(e, wrap(op, name, err)) || err != nil {
				return
			}
		}
	}
}

// Tail returns the n entities of name with the smallest RowKeys across all
// buckets, in RowKey order: the n newest when the RowKeys are inverted
// ticks (the log tail of §6.7, spread). It is exactly what Tail(n) of one
// partition holding the same entities returns, at the price of one request
// per bucket (n up to 1,000), run Config.Concurrency at a time.
func (s *Spread[T]) Tail(ctx context.Context, name string, n int) ([]T, error) {
	if err := s.ok(); err != nil {
		return nil, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, &ArgError{Op: "Tail", Arg: "n", Value: strconv.Itoa(n), Reason: "want 1 or more"}
	}
	out := make([]T, 0, min(n, entity.MaxPageSize))
	for e, err := range s.query(ctx, "Tail", name, entity.Query{Limit: n}) {
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}
