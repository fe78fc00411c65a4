package rotation

import (
	"context"
	"iter"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/merge"
	"github.com/tablekit/tablekit/keys"
)

// Periods lists the live periods that overlap [from, to), oldest first:
// one query of the catalog.
func (r *Rotation[T]) Periods(ctx context.Context, from, to time.Time) ([]PeriodTable, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	rows, err := r.overlapping(ctx, from, to)
	if err != nil {
		return nil, err
	}
	out := make([]PeriodTable, len(rows))
	for i, c := range rows {
		out[i] = c.period()
	}
	return out, nil
}

func (r *Rotation[T]) overlapping(ctx context.Context, from, to time.Time) ([]catalogRow, error) {
	if err := r.ok(); err != nil {
		return nil, err
	}
	if err := r.checkTime("from", from); err != nil {
		return nil, err
	}
	if err := r.checkTime("to", to); err != nil {
		return nil, err
	}
	if !from.Before(to) {
		return nil, &ConfigError{Field: "range", Reason: "from " + from.UTC().Format(time.RFC3339Nano) + " is not before to " + to.UTC().Format(time.RFC3339Nano)}
	}
	snap, err := r.readCatalog(ctx, r.between(r.PeriodOf(from), r.PeriodOf(to.Add(-1))))
	if err != nil {
		return nil, err
	}
	return snap.live(), nil
}

// keyed is an entity with its keys, read once for the merge.
type keyed[T any] struct {
	v      T
	pk, rk string
	t      time.Time
}

// Query reads the entities whose time (Config.Time) is in [from, to): it
// reads the catalog once, queries the table of every live period that
// overlaps the range, concurrently (Config.Concurrency requests at a time),
// with q's filter, selection and page size, and merges the results in the
// service's order, PartitionKey then RowKey, as if one table held them all.
// q.Limit applies to the merged result. Entities with equal keys in several
// periods all come, the oldest period's first.
//
// A period that expires while Query runs is skipped from the moment its
// table is found gone, without an error: its entities may be returned in
// part. Query never returns an error for a deleted table.
//
// When Time reads a property, adding a filter on that property to q lets
// the service drop the entities of the first and last period that lie
// outside the range instead of sending them.
func (r *Rotation[T]) Query(ctx context.Context, from, to time.Time, q entity.Query) iter.Seq2[T, error] {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	return func(yield func(T, error) bool) {
		var zero T
		rows, err := r.overlapping(ctx, from, to)
		if err != nil {
			yield(zero, err)
			return
		}
		if len(rows) == 0 {
			return
		}
		limit := q.Limit
		sem := make(chan struct{}, r.cfg.Concurrency)
		sources := make([]func(context.Context) iter.Seq2[keyed[T], error], 0, len(rows))
		for _, c := range rows {
			tbl, err := r.table(c.Table)
			if err != nil {
				yield(zero, err)
				return
			}
			pq := q
			// Every entity of a period inside the range is in the result, so
			// the limit can go to the service; not so at the range's edges.
			if p := c.period(); p.Start.Before(from) || p.End.After(to) {
				pq.Limit = 0
			}
			sources = append(sources, func(ctx context.Context) iter.Seq2[keyed[T], error] {
				return r.scan(ctx, tbl, pq, sem)
			})
		}
		cmp := func(a, b keyed[T]) int {
			if c := keys.Compare(a.pk, b.pk); c != 0 {
				return c
			}
			return keys.Compare(a.rk, b.rk)
		}
		n := 0
		for k, err := range merge.Sorted(ctx, sources, cmp) {
			if err != nil {
				yield(zero, err)
				return
			}
			if k.t.Before(from) || !k.t.Before(to) {
				continue
			}
			if !yield(k.v, nil) {
				return
			}
			if n++; limit > 0 && n >= limit {
				return
			}
		}
	}
}

// scan reads one period's table page by page, holding a slot of sem only
// while a request is in flight (the merge needs every table open at once).
// A table that is gone ends the scan without an error.
func (r *Rotation[T]) scan(ctx context.Context, tbl *entity.Table[T], q entity.Query, sem chan struct{}) iter.Seq2[keyed[T], error] {
	return func(yield func(keyed[T], error) bool) {
		token, n, limit := "", 0, q.Limit
		for {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				yield(keyed[T]{}, ctx.Err())
				return
			}
			page, err := tbl.QueryPage(ctx, q, token)
			<-sem
			if tableGone(err) {
				return
			}
			if err != nil {
				yield(keyed[T]{}, &PeriodError{Op: "query", Table: tbl.Name(), Err: err})
				return
			}
			for i := range page.Items {
				s, err := entity.SystemOf(&page.Items[i])
				if err != nil {
					yield(keyed[T]{}, err)
					return
				}
				if !yield(keyed[T]{v: page.Items[i], pk: s.PartitionKey, rk: s.RowKey, t: r.cfg.Time(&page.Items[i])}, nil) {
					return
				}
				if n++; limit > 0 && n >= limit {
					return
				}
			}
			if token = page.Next; token == "" {
				return
			}
			if limit > 0 {
				q.Limit = limit - n // QueryPage caps one page, not the query
			}
		}
	}
}
