package indexentity

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// valueRows are the index entities of one value as a range query read
// them.
type valueRows struct {
	value  string
	head   *entity.DynamicEntity
	chunks map[int64]*entity.DynamicEntity
	stray  bool // one entity under the index's prefix whose RowKey it did not make
}

// problem is an index entity whose content disagrees with the layout.
type problem struct {
	rk     string
	reason string
}

// assembled is one value's list read from its index entities.
type assembled struct {
	members  []string
	problems []problem
	// garbage are continuation entities the head's directory does not
	// name: left by a crashed rewrite, or written by a split after the
	// head was read.
	garbage []string
	// bad: the list cannot be read whole (a problem other than garbage).
	bad bool
}

// assemble reads vr's members in key order, checking the layout: the
// head's content, each continuation named by its directory present and
// holding only members of its range, no other continuation.
func assemble(ix string, vr *valueRows) assembled {
	var a assembled
	if vr.head == nil {
		for _, c := range vr.chunks {
			a.garbage = append(a.garbage, c.RowKey)
		}
		slices.Sort(a.garbage)
		return a
	}
	ms, dir, _, err := decodeRow(vr.head, true)
	if err != nil {
		a.problems = append(a.problems, problem{vr.head.RowKey, err.Error()})
		a.bad = true
		return a
	}
	named := map[int64]bool{}
	if dir == nil {
		a.members = ms
	}
	for i, c := range dir {
		named[c.id] = true
		row, ok := vr.chunks[c.id]
		if !ok {
			a.problems = append(a.problems, problem{vr.head.RowKey, fmt.Sprintf("the directory names chunk %d, which does not exist", c.id)})
			a.bad = true
			continue
		}
		cms, _, _, err := decodeRow(row, false)
		if err != nil {
			a.problems = append(a.problems, problem{row.RowKey, err.Error()})
			a.bad = true
			continue
		}
		for _, m := range cms {
			if keys.Compare(m, c.from) < 0 || i+1 < len(dir) && keys.Compare(m, dir[i+1].from) >= 0 {
				a.problems = append(a.problems, problem{row.RowKey, fmt.Sprintf("member %q is outside the chunk's range", indexset.Shorten(m))})
				a.bad = true
				break
			}
		}
		a.members = append(a.members, cms...)
	}
	for id, c := range vr.chunks {
		if !named[id] {
			a.garbage = append(a.garbage, c.RowKey)
		}
	}
	slices.Sort(a.garbage)
	return a
}

// scanRows yields the index entities of ix in partition epk, grouped by
// value, in key order; only values in [from, to) when from is set.
func (s *Set[T]) scanRows(ctx context.Context, ix *index[T], epk, from, to string) iter.Seq2[*valueRows, error] {
	return func(yield func(*valueRows, error) bool) {
		if from == "" {
			from, to = keys.PrefixRange(ix.prefix)
		}
		q := entity.Query{Filter: filter.PK(epk).And(filter.RowKeyRange(from, to))}
		var cur *valueRows
		for e, err := range s.rows(ix).Query(ctx, q) {
			if err != nil {
				yield(nil, &StepError{Step: "read index entities", Index: ix.Name, PartitionKey: epk, Err: err})
				return
			}
			value, id, ok := ix.parseRK(e.RowKey)
			if !ok {
				// Not a key this index makes: a stray entity under its
				// prefix, reported by itself.
				if cur != nil && !yield(cur, nil) {
					return
				}
				cur = nil
				if !yield(&valueRows{stray: true, chunks: map[int64]*entity.DynamicEntity{-1: &e}}, nil) {
					return
				}
				continue
			}
			if cur != nil && cur.value != value {
				if !yield(cur, nil) {
					return
				}
				cur = nil
			}
			if cur == nil {
				cur = &valueRows{value: value, chunks: map[int64]*entity.DynamicEntity{}}
			}
			if id == 0 {
				cur.head = &e
			} else {
				cur.chunks[id] = &e
			}
		}
		if cur != nil {
			yield(cur, nil)
		}
	}
}

// readRows reads value's list from its index entities in partition epk:
// one range query. A list that reads inconsistently (a split or drop ran
// between the reads of its entities) is read again.
func (s *Set[T]) readRows(ctx context.Context, ix *index[T], epk, value string) ([]string, error) {
	from, to := ix.valueRange(value)
	var last assembled
	var lastHead string
	for try := 0; try < 3; try++ {
		vr := &valueRows{value: value, chunks: map[int64]*entity.DynamicEntity{}}
		for got, err := range s.scanRows(ctx, ix, epk, from, to) {
			if err != nil {
				return nil, err
			}
			if !got.stray && got.value == value {
				vr = got
			}
		}
		a := assemble(ix.Name, vr)
		headETag := ""
		if vr.head != nil {
			headETag = vr.head.ETag
		}
		switch {
		case !a.bad && len(a.garbage) == 0:
			return a.members, nil
		case !a.bad && try > 0 && headETag == lastHead:
			// The same head twice: the extra continuations are garbage
			// a crashed rewrite left, not a split under way.
			return a.members, nil
		}
		last, lastHead = a, headETag
	}
	if last.bad {
		p := last.problems[0]
		return nil, &CorruptError{Index: ix.Name, PartitionKey: epk, RowKey: p.rk, Reason: p.reason}
	}
	return last.members, nil
}

// members reads value's list of partition pk in ix: the index read of a
// lookup.
func (s *Set[T]) members(ctx context.Context, ix *index[T], pk, value string) ([]string, error) {
	if err := ix.checkValue(pk, value); err != nil {
		return nil, err
	}
	if ix.Placement == Blob {
		l, err := s.readBlob(ctx, ix, ix.blobName(pk, value))
		if err != nil {
			return nil, err
		}
		return l.members, nil
	}
	if ix.Placement == TableWide {
		return nil, &StepError{Step: "lookup: a TableWide index is looked up with LookupValueAll or ValueMembers", Index: ix.Name, PartitionKey: pk, Err: ErrPlacement}
	}
	return s.readRows(ctx, ix, ix.entryPK(pk), value)
}

// wideMembers reads value's list in TableWide index ix: one range query
// per bucket, Config.Concurrency at once, the buckets' lists merged in
// key order of the members (PartitionKey, then RowKey). Of several
// buckets that fail, the error of the first in bucket order is returned:
// a failure cancels the reads of the buckets after it, and no bucket
// after it is started, while the buckets before it finish (one of them
// may fail too, and comes first). A cancelled ctx starts no more bucket
// reads and returns an error matching ctx.Err(). Every read has ended
// when it returns.
func (s *Set[T]) wideMembers(ctx context.Context, ix *index[T], value string) ([]string, error) {
	if ix.Placement != TableWide {
		return nil, &StepError{Step: "lookup: only a TableWide index is looked up without a PartitionKey", Index: ix.Name, Err: ErrPlacement}
	}
	if err := ix.checkValue("", value); err != nil {
		return nil, err
	}
	buckets := ix.buckets()
	lists := make([][]string, len(buckets))
	ctxs := make([]context.Context, len(buckets))
	cancels := make([]context.CancelFunc, len(buckets))
	for i := range buckets {
		ctxs[i], cancels[i] = context.WithCancel(ctx)
		defer cancels[i]()
	}
	err := indexset.Ordered(ctx, len(buckets), s.cfg.Concurrency,
		func(i int) (err error) {
			lists[i], err = s.readRows(ctxs[i], ix, ix.widePK(value, buckets[i]), value)
			return err
		},
		func(i int) { cancels[i]() },
		func(i int) error {
			return &StepError{Step: "read index entities", Index: ix.Name, PartitionKey: ix.widePK(value, buckets[i]), Err: ctx.Err()}
		})
	if err != nil {
		return nil, err
	}
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	// Each bucket's list is sorted; a sort of the concatenation is their
	// merge.
	slices.SortFunc(all, keys.Compare)
	return slices.Compact(all), nil
}
