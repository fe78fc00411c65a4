package secondaryindex

import (
	"errors"
	"slices"
	"sync"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// wideExpect is the TableWide entry a primary expects.
type wideExpect struct {
	expect
	epk, erk string
}

// wideEntries reads the TableWide entries the primaries of the partition
// being checked expect, one point query each (Config.Concurrency at
// once), and reports those missing or stale, and each primary that holds
// a unique value whose entry another holder of it keeps (a write around
// the Set), as drift.Duplicate.
func (c *checker[T]) wideEntries() bool {
	g := &c.g
	if len(g.wide) == 0 {
		return true
	}
	slices.SortFunc(g.wide, func(a, b wideExpect) int {
		if n := keys.Compare(a.rk, b.rk); n != 0 {
			return n
		}
		return keys.Compare(a.ix, b.ix)
	})
	type result struct {
		f   drift.Finding
		ok  bool // a finding
		err error
	}
	out := make([]result, len(g.wide))
	sem := make(chan struct{}, c.s.cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range g.wide {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i].f, out[i].ok, out[i].err = c.wideOne(&g.wide[i])
		})
	}
	wg.Wait()
	for _, r := range out {
		switch {
		case r.err != nil:
			return c.fail(r.err)
		case r.ok && !c.emit(r.f):
			return false
		}
	}
	if c.sum != nil {
		c.sum.Scanned += len(g.wide)
	}
	return !c.stop
}

// wideOne judges one expected TableWide entry.
func (c *checker[T]) wideOne(w *wideExpect) (drift.Finding, bool, error) {
	s := c.s
	ix := s.core.ByName[w.ix]
	f := drift.Finding{Index: w.ix, Primary: keyOfDrift(c.g.pk, w.rk), Entry: s.entryKey(ix, w.epk, w.erk)}
	d, err := s.core.Entries.Get(c.ctx, w.epk, w.erk)
	if errors.Is(err, entity.ErrNotFound) {
		f.Kind, f.Detail = drift.Missing, "no entry"
		return f, true, nil
	}
	if err != nil {
		return f, false, err
	}
	opk, ork, ok := owner(&d)
	if ok && (opk != c.g.pk || ork != w.rk) {
		if ix.Unique {
			// Another holder keeps the entry if it holds the value too.
			o, found, err := s.read(c.ctx, opk, ork)
			if err != nil && !badRow(err) {
				return f, false, err
			}
			if found && s.holds(ix, &o, opk, ork, w.epk, w.erk) {
				f.Kind = drift.Duplicate
				f.Detail = "the unique value is held by " + indexset.Keys(opk, ork) + ", which keeps the entry, and this primary (change all but one)"
				return f, true, nil
			}
		}
		f.Kind, f.Detail = drift.Stale, namesPrimary(opk, ork)
		return f, true, nil
	}
	names := entryNames(d.Properties, nil)
	if !ok || fingerprint(d.Properties, names, opk, ork) != w.fp {
		f.Kind, f.Detail = drift.Stale, "the entry's copy differs from the primary"
		return f, true, nil
	}
	return f, false, nil
}

// buckets scans the entries of the TableWide indexes (phase 2 of a
// whole-table check) from tok, and reports each entry whose primary is
// gone or does not hold it there as drift.Orphan: one range query of the
// partitions Name_… of each index (paged), whatever their bucket ids —
// those of another Buckets, or another placement's, included — and one
// point query per entry, Config.Concurrency at once. A check resumes at
// the page it stopped in.
func (c *checker[T]) buckets(tok token) {
	s := c.s
	if tok.Phase < 2 {
		tok = token{Phase: 2}
	}
	for i, ix := range s.core.Indexes {
		if ix.Placement != TableWide || i < tok.Ix {
			continue
		}
		from, to := keys.PrefixRange(ix.prefix)
		f := filter.Ge(filter.PartitionKeyProperty, from).And(filter.RowKeyRange(from, to))
		if to != "" {
			f = f.And(filter.Lt(filter.PartitionKeyProperty, to))
		}
		page := ""
		if i == tok.Ix {
			page = tok.Page
			if tok.Bucket != "" && page == "" {
				// A token of a scan that went bucket by bucket.
				f = f.And(filter.Ge(filter.PartitionKeyProperty, ix.prefix+tok.Bucket))
			}
		}
		q := entity.Query{Filter: f, Select: []string{PropPrimaryPK, PropPrimaryRK}}
		for {
			c.g = group{resume: token{Phase: 2, Ix: i, Page: page}.String()}
			p, err := s.core.Entries.QueryPage(c.ctx, q, page)
			if err != nil {
				c.fail(err)
				return
			}
			if !c.orphans(ix, p.Items) {
				return
			}
			if p.Next == "" {
				break
			}
			page = p.Next
			c.checkpoint(token{Phase: 2, Ix: i, Page: page})
		}
		if j := slices.IndexFunc(s.core.Indexes[i+1:], func(ix *index[T]) bool { return ix.Placement == TableWide }); j >= 0 {
			c.checkpoint(token{Phase: 2, Ix: i + 1 + j})
		}
	}
}

// orphans reads the primaries of a page of TableWide entries of ix and
// reports the entries they do not hold.
func (c *checker[T]) orphans(ix *index[T], items []entity.DynamicEntity) bool {
	s := c.s
	type result struct {
		orphan bool
		err    error
	}
	out := make([]result, len(items))
	sem := make(chan struct{}, s.cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range items {
		opk, ork, ok := owner(&items[i])
		if !ok {
			continue // not an entry: another type's entity
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			p, found, err := s.read(c.ctx, opk, ork)
			switch {
			case err != nil && badRow(err):
				// A primary that does not decode: whether it holds the
				// entry cannot be told (its partition's check named it).
			case err != nil:
				out[i].err = err
			default:
				out[i].orphan = !found || !s.holds(ix, &p, opk, ork, items[i].PartitionKey, items[i].RowKey)
			}
		})
	}
	wg.Wait()
	for i, r := range out {
		if c.sum != nil {
			c.sum.Scanned++
		}
		if r.err != nil {
			return c.fail(r.err)
		}
		if !r.orphan {
			continue
		}
		opk, ork, _ := owner(&items[i])
		f := drift.Finding{Kind: drift.Orphan, Index: ix.Name, Primary: keyOfDrift(opk, ork), Entry: s.entryKey(ix, items[i].PartitionKey, items[i].RowKey), Detail: "no primary holds this entry"}
		if !c.emit(f) {
			return false
		}
	}
	return !c.stop
}
