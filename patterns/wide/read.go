package wide

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

// row is one row of properties, as read.
type row struct {
	version string
	props   map[string]any // the user properties
}

// state is one committed version of a logical entity, as read.
type state struct {
	pk, id string
	head   *head
	rows   []row // rows 01 … n
}

// base is what a write replaces.
func (s *state) base() *base {
	return &base{etag: s.head.etag, seq: s.head.seq, n: len(s.rows), rows: s.rows}
}

// bag is the logical entity as a property bag, with its ETag.
func (s *state) bag() *entity.DynamicEntity {
	n := 0
	for _, r := range s.rows {
		n += len(r.props)
	}
	props := make(map[string]any, n)
	for _, r := range s.rows {
		maps.Copy(props, r.props)
	}
	return &entity.DynamicEntity{
		PartitionKey: s.pk, RowKey: s.id,
		ETag:       formatETag(len(s.rows), s.head.seq, s.head.etag),
		Timestamp:  s.head.ts,
		Properties: props,
	}
}

// read returns the current version of the logical entity with one range
// query, reading again when the rows it got are of different versions.
// A missing entity is an error matching entity.ErrNotFound.
func (w *Table[T]) read(ctx context.Context, pk, id string) (*state, error) {
	from, to := rowRange(id)
	q := entity.Query{Filter: filter.PK(pk).And(filter.RowKeyRange(from, to)), PageSize: w.cfg.PageSize}
	var last error
	for attempt := 1; attempt <= w.cfg.ReadAttempts; attempt++ {
		if attempt > 2 {
			// A writer commits between our pages each time: let it finish.
			d := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt-2, 6)))
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(d):
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err // nothing sent
		}
		var got []entity.DynamicEntity
		for d, err := range w.rows.Query(ctx, q) {
			if err != nil {
				return nil, err
			}
			got = append(got, d)
		}
		st, err := assemble(pk, id, got)
		var te *tornError
		if !errors.As(err, &te) {
			return st, err
		}
		last = err
	}
	return nil, fmt.Errorf("%w (%d reads; the last: %v)", ErrTorn, w.cfg.ReadAttempts, last)
}

// assemble checks that rows, read from the logical entity's key range, are
// one committed version — the head and exactly the rows it lists, each of
// the version it names — and returns it. Rows of different versions are a
// *tornError; rows that no write of this package left, ErrCorrupt; no
// head and no row, entity.ErrNotFound.
func assemble(pk, id string, rows []entity.DynamicEntity) (*state, error) {
	var byIndex [MaxRows + 1]*entity.DynamicEntity
	found := 0
	for i := range rows {
		k, ok := rowIndex(id, rows[i].RowKey)
		if !ok || rows[i].PartitionKey != pk {
			continue // another entity's row, sorted into the range
		}
		if byIndex[k] != nil {
			return nil, corrupt("row %02d read twice", k)
		}
		byIndex[k] = &rows[i]
		found++
	}
	if found == 0 {
		return nil, entity.ErrNotFound
	}
	if byIndex[0] == nil {
		return nil, torn("rows without their head")
	}
	h, err := parseHead(byIndex[0])
	if err != nil {
		return nil, err
	}
	n := len(h.tokens)
	st := &state{pk: pk, id: id, head: h, rows: make([]row, n)}
	size := 0
	for k := 1; k <= MaxRows; k++ {
		r := byIndex[k]
		if k > n {
			if r != nil {
				return nil, torn("row %02d beyond the %d rows of version %s", k, n, h.version)
			}
			continue
		}
		if r == nil {
			return nil, torn("row %02d of version %s missing", k, h.version)
		}
		v, ok := entity.Prop[string](r, propVersion)
		if !ok {
			return nil, corrupt("row %02d has no %s", k, propVersion)
		}
		if v != h.tokens[k-1] {
			return nil, torn("row %02d is of version %s, the head of version %s lists %s", k, v, h.version, h.tokens[k-1])
		}
		props := r.Properties
		delete(props, propVersion)
		st.rows[k-1] = row{version: v, props: props}
		size += len(props)
	}
	// Each property lives in one row.
	seen := make(map[string]int, size)
	for k, r := range st.rows {
		for name := range r.props {
			if prev, dup := seen[name]; dup {
				return nil, corrupt("property %s in rows %02d and %02d", name, prev+1, k+1)
			}
			seen[name] = k
		}
	}
	return st, nil
}
