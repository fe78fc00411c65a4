package secondaryindex

import (
	"cmp"
	"context"
	"encoding/json"
	"iter"
	"slices"
	"strconv"
	"strings"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// Check compares the primaries with their entries and yields one
// drift.Finding per disagreement: Missing (a primary's entry is absent),
// Stale (an entry holds other properties, or another primary's keys, than
// its primary's copy), Orphan (an entry whose primary is gone or holds
// another value). It reads, and writes nothing.
//
// The scan goes partition by partition, in key order: the whole table in
// one query (and, for OtherPartition indexes, one range query of each
// partition's entries) or, with opts.Partitions, those partitions. Every
// finding carries the token of its partition, and opts.Checkpoint gets a
// token after each partition: a check started from one reports that
// partition (or the next) and everything after it.
//
// A primary that does not decode as T (written around the Set with a
// property of another type), or whose value makes no key, is one bad row
// among many: it is yielded as a *StepError naming its keys (step "check:
// decode primary", or "check: index value"), which unwraps to entity's or
// the key's error, and the check goes on with the next entity; entries
// naming a primary that does not decode are not reported (whether it
// holds them cannot be told), and Rebuild leaves them. Any other error
// (a failed query) is yielded and ends the sequence.
//
// Entries of OtherPartition indexes behind their primary (a write whose
// message has not run yet) are reported like any other drift; check again
// after the queue drained, or Rebuild.
func (s *Set[T]) Check(ctx context.Context, opts CheckOptions) iter.Seq2[drift.Finding, error] {
	if err := s.ok(); err != nil {
		return func(yield func(drift.Finding, error) bool) { yield(drift.Finding{}, err) }
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(drift.Finding, error) bool) { yield(drift.Finding{}, err) }
	}
	return s.check(ctx, opts, nil, nil)
}

// check is Check counting what it read into sum (when not nil), and
// collecting the errors of bad rows into rows instead of yielding them
// (when not nil).
func (s *Set[T]) check(ctx context.Context, opts CheckOptions, sum *drift.Summary, rows *[]error) iter.Seq2[drift.Finding, error] {
	return func(yield func(drift.Finding, error) bool) {
		tok, err := parseToken(opts.Resume)
		if err != nil {
			yield(drift.Finding{}, err)
			return
		}
		c := &checker[T]{s: s, ctx: ctx, yield: yield, opts: opts, sum: sum, rows: rows, owners: map[string]bool{}}
		if opts.Partitions != nil {
			c.listed(tok)
			return
		}
		if tok.Phase == 0 && !c.primaries(tok) {
			return
		}
		if tok.Phase <= 1 && s.core.Other && !c.strays(tok) {
			return
		}
		c.buckets(tok)
	}
}

// checker is one run of Check.
type checker[T any] struct {
	s     *Set[T]
	ctx   context.Context
	yield func(drift.Finding, error) bool
	opts  CheckOptions
	sum   *drift.Summary
	rows  *[]error // bad rows' errors, when not yielded
	stop  bool

	g      group           // the partition being read
	owners map[string]bool // whether a partition has primaries, asked once
	names  []string        // scratch
}

// group is what one partition of the primaries' table holds.
type group struct {
	pk        string
	resume    string // the token that restarts at this partition
	primaries int
	// The entries the primaries expect, by entry RowKey: one primary
	// each, or several for a unique value held twice (written around
	// the Set).
	expected map[string][]expect // SamePartition entries
	actual   map[string]stored   // SamePartition entries found, by RowKey
	remote   map[string]map[string][]expect
	strays   []stray      // OtherPartition entries stored in this partition
	wide     []wideExpect // TableWide entries the primaries expect
	// Primaries that do not decode, by RowKey: their entries are not
	// judged.
	bad map[string]bool
}

type expect struct {
	ix string
	rk string // the primary's
	fp uint64
}

type stored struct {
	ix       string
	opk, ork string
	fp       uint64
}

type stray struct {
	ix       string
	rk       string
	opk, ork string
}

func (c *checker[T]) emit(f drift.Finding) bool {
	if c.stop {
		return false
	}
	f.Resume = c.g.resume
	if c.sum != nil {
		c.sum.Count(f)
	}
	if !c.yield(f, nil) {
		c.stop = true
	}
	return !c.stop
}

// row reports a bad row and goes on.
func (c *checker[T]) row(err error) bool {
	if c.stop {
		return false
	}
	if c.rows != nil {
		*c.rows = append(*c.rows, err)
		return true
	}
	if !c.yield(drift.Finding{}, err) {
		c.stop = true
	}
	return !c.stop
}

func (c *checker[T]) fail(err error) bool {
	if !c.stop {
		c.yield(drift.Finding{}, err)
		c.stop = true
	}
	return false
}

func (c *checker[T]) checkpoint(t token) {
	if c.opts.Checkpoint != nil && !c.stop {
		c.opts.Checkpoint(t.String())
	}
}

func (c *checker[T]) begin(pk string) {
	c.g = group{pk: pk, resume: token{PK: pk}.String(), expected: map[string][]expect{}, actual: map[string]stored{}, remote: map[string]map[string][]expect{}, bad: map[string]bool{}}
}

// primaries scans the primaries' table from tok, partition by partition.
func (c *checker[T]) primaries(tok token) bool {
	q := entity.Query{}
	switch {
	case tok.After:
		q.Filter = filter.Gt(filter.PartitionKeyProperty, tok.PK)
	case tok.PK != "":
		q.Filter = filter.Ge(filter.PartitionKeyProperty, tok.PK)
	}
	started := false
	for it, err := range prefetch(c.ctx, func(ctx context.Context) iter.Seq2[json.RawMessage, error] { return c.s.core.Rows.Query(ctx, q) }) {
		if err != nil {
			return c.fail(err)
		}
		raw, d := it.raw, &it.bag
		if !started || d.PartitionKey != c.g.pk {
			if started && !c.end() {
				return false
			}
			started = true
			c.begin(d.PartitionKey)
		}
		if !c.add(raw, d) {
			return false
		}
	}
	if started && !c.end() {
		return false
	}
	return !c.stop
}

// listed checks the partitions of opts.Partitions, in key order, from tok.
func (c *checker[T]) listed(tok token) {
	parts := slices.Clone(c.opts.Partitions)
	slices.SortFunc(parts, keys.Compare)
	parts = slices.Compact(parts)
	for _, pk := range parts {
		if n := keys.Compare(pk, tok.PK); n < 0 || n == 0 && tok.After {
			continue
		}
		c.begin(pk)
		for raw, err := range c.s.core.Rows.Query(c.ctx, entity.Query{Filter: filter.PK(pk)}) {
			if err != nil {
				c.fail(err)
				return
			}
			var d entity.DynamicEntity
			if err := entity.Unmarshal(raw, &d); err != nil {
				c.fail(err)
				return
			}
			if !c.add(raw, &d) {
				return
			}
		}
		if !c.end() {
			return
		}
	}
}

// add sorts one entity of the partition being read.
func (c *checker[T]) add(raw []byte, d *entity.DynamicEntity) bool {
	s := c.s
	if c.sum != nil {
		c.sum.Scanned++
	}
	rk := d.RowKey
	if strings.HasPrefix(rk, internalPrefix) {
		return true
	}
	if ix := s.entryIndex(rk); ix != nil {
		opk, ork, ok := owner(d)
		if !ok {
			return true // not an entry: another type's entity
		}
		switch {
		case ix.Remote() && s.core.Other:
			// Its entries live in Config.Entries: one here is left by
			// another layout (Placement, Config.Entries).
			return c.misplaced(ix, "", d.PartitionKey, rk, opk, ork)
		case ix.Placement == TableWide && strings.HasPrefix(d.PartitionKey, ix.prefix):
			return true // judged by the scan of the index's partitions
		case ix.Placement == TableWide:
			return c.misplaced(ix, "", d.PartitionKey, rk, opk, ork)
		case ix.Placement == OtherPartition:
			c.g.strays = append(c.g.strays, stray{ix: ix.Name, rk: rk, opk: opk, ork: ork})
			return true
		}
		c.names = entryNames(d.Properties, c.names)
		c.g.actual[rk] = stored{ix: ix.Name, opk: opk, ork: ork, fp: fingerprint(d.Properties, c.names, opk, ork)}
		return true
	}
	if !s.isPrimary(rk) {
		return true
	}
	c.g.primaries++
	e, _, err := s.core.Rows.Decode(c.ctx, raw)
	if err != nil {
		c.g.bad[rk] = true
		return c.row(&StepError{Step: "check: decode primary", PartitionKey: d.PartitionKey, RowKey: rk, Err: err})
	}
	delete(d.Properties, propWriteToken)
	for _, ix := range s.core.Indexes {
		_, erk, value, has, err := ix.entryKeys(&e, d.PartitionKey, rk)
		if err != nil {
			// No entry can hold the value: entries naming the primary
			// in this index are orphans.
			if !c.row(&StepError{Step: "check: index value", Index: ix.Name, PartitionKey: d.PartitionKey, RowKey: rk, Err: err}) {
				return false
			}
			continue
		}
		if !has {
			continue
		}
		c.names = ix.copiedNames(d.Properties, c.names)
		want := expect{ix: ix.Name, rk: rk, fp: fingerprint(d.Properties, c.names, d.PartitionKey, rk)}
		if ix.Placement == TableWide {
			c.g.wide = append(c.g.wide, wideExpect{expect: want, epk: ix.entryPK(value, d.PartitionKey), erk: erk})
			continue
		}
		into := c.g.expected
		if ix.Placement == OtherPartition {
			if into = c.g.remote[ix.Name]; into == nil {
				into = map[string][]expect{}
				c.g.remote[ix.Name] = into
			}
		}
		// Two primaries with one unique value (only writes around the Set
		// do that) both expect the entry: diff decides which keeps it.
		into[erk] = append(into[erk], want)
	}
	return true
}

// end reports the drift of the partition read.
func (c *checker[T]) end() bool {
	g := &c.g
	if !c.diff(nil, g.pk, g.expected, g.actual) {
		return false
	}
	c.owners[g.pk] = g.primaries > 0
	if g.primaries > 0 {
		for _, ix := range c.s.core.Remote {
			if ix.Placement == OtherPartition && !c.remote(ix, g.pk, g.remote[ix.Name]) {
				return false
			}
		}
		if !c.wideEntries() {
			return false
		}
	}
	for _, st := range g.strays {
		if !c.stray(st, g.pk) {
			return false
		}
	}
	c.checkpoint(token{PK: g.pk, After: true})
	return !c.stop
}

// remote reads the entries of ix for the primaries of partition pk and
// compares them with what the primaries expect.
func (c *checker[T]) remote(ix *index[T], pk string, want map[string][]expect) bool {
	epk := ix.entryPK("", pk)
	from, to := keys.PrefixRange(ix.prefix)
	got := map[string]stored{}
	q := entity.Query{Filter: filter.PK(epk).And(filter.RowKeyRange(from, to))}
	for d, err := range c.s.core.Entries.Query(c.ctx, q) {
		if err != nil {
			return c.fail(err)
		}
		if c.sum != nil {
			c.sum.Scanned++
		}
		opk, ork, ok := owner(&d)
		if !ok {
			continue
		}
		c.names = entryNames(d.Properties, c.names)
		got[d.RowKey] = stored{ix: ix.Name, opk: opk, ork: ork, fp: fingerprint(d.Properties, c.names, opk, ork)}
	}
	return c.diff(ix, epk, want, got)
}

// diff reports the differences between expected and found entries of one
// partition (ix nil: the SamePartition indexes'), in RowKey order.
//
// A unique entry several primaries expect (a value held twice, written
// around the Set) stays with one of them, by keeper's rule; each other
// holder is a drift.Duplicate finding, which no repair changes, and the
// keeper's entry is compared as any other. So a Rebuild never moves the
// entry from one holder to the other and back.
func (c *checker[T]) diff(ix *index[T], epk string, want map[string][]expect, got map[string]stored) bool {
	type row struct {
		rk string
		f  drift.Finding
	}
	var rows []row
	entry := func(rk string) drift.Key {
		k := drift.Key{PartitionKey: epk, RowKey: rk}
		if ix != nil && c.s.core.Other {
			k.Table = c.s.core.Entries.Name()
		}
		return k
	}
	for rk, ws := range want {
		h, ok := got[rk]
		k := 0
		if len(ws) > 1 {
			k = keeper(ws, c.g.pk, h, ok)
		}
		if ok && h.opk == c.g.pk && c.g.bad[h.ork] {
			continue // the entry names a primary that does not decode
		}
		for i, w := range ws {
			f := drift.Finding{Index: w.ix, Primary: keyOfDrift(c.g.pk, w.rk), Entry: entry(rk)}
			switch {
			case i != k:
				f.Kind, f.Detail = drift.Duplicate, duplicateDetail(ws, k)
			case !ok:
				f.Kind, f.Detail = drift.Missing, "no entry"
			case h.opk != c.g.pk || h.ork != w.rk:
				f.Kind, f.Detail = drift.Stale, namesPrimary(h.opk, h.ork)
			case h.fp != w.fp:
				f.Kind, f.Detail = drift.Stale, "the entry's copy differs from the primary"
			default:
				continue
			}
			rows = append(rows, row{rk, f})
		}
	}
	for rk, h := range got {
		if _, ok := want[rk]; ok || h.opk == c.g.pk && c.g.bad[h.ork] {
			continue
		}
		rows = append(rows, row{rk, drift.Finding{Kind: drift.Orphan, Index: h.ix, Primary: keyOfDrift(h.opk, h.ork), Entry: entry(rk), Detail: "no primary holds this entry"}})
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(keys.Compare(a.rk, b.rk), cmp.Compare(a.f.Kind, b.f.Kind), keys.Compare(a.f.Primary.RowKey, b.f.Primary.RowKey))
	})
	for _, r := range rows {
		if !c.emit(r.f) {
			return false
		}
	}
	return true
}

// keeper sorts the primaries of partition pk expecting one unique entry
// in key order and returns the position of the one that keeps it: the
// primary the stored entry h (when found) names, else the first in key
// order. Repair applies the same rule (repairLocal, ensure).
func keeper(ws []expect, pk string, h stored, found bool) int {
	slices.SortFunc(ws, func(a, b expect) int { return keys.Compare(a.rk, b.rk) })
	if found && h.opk == pk {
		if i := slices.IndexFunc(ws, func(w expect) bool { return w.rk == h.ork }); i >= 0 {
			return i
		}
	}
	return 0
}

// namesPrimary is the detail of an entry that names another primary,
// its keys as errors print them.
func namesPrimary(pk, rk string) string {
	return "the entry names primary " + indexset.Keys(pk, rk)
}

// duplicateDetail names the holders of a value held twice, the keeper
// first.
func duplicateDetail(ws []expect, k int) string {
	var b strings.Builder
	b.WriteString("the unique value is held by ")
	b.WriteString(strconv.Itoa(len(ws)))
	b.WriteString(" primaries: ")
	b.WriteString(strconv.Quote(ws[k].rk))
	b.WriteString(" keeps the entry")
	for i, w := range ws {
		if i != k {
			b.WriteString(", ")
			b.WriteString(strconv.Quote(w.rk))
		}
	}
	b.WriteString(" (change all but one)")
	return b.String()
}

// hasPrimaries reports whether partition pk holds a primary.
func (c *checker[T]) hasPrimaries(pk string) (bool, error) {
	if has, ok := c.owners[pk]; ok {
		return has, nil
	}
	q := entity.Query{Filter: filter.PK(pk), Select: []string{"RowKey"}}
	if c.s.cfg.PrimaryPrefix != "" {
		from, to := keys.PrefixRange(c.s.cfg.PrimaryPrefix)
		q.Filter = q.Filter.And(filter.RowKeyRange(from, to))
	}
	has := false
	for d, err := range c.s.core.Bags.Query(c.ctx, q) {
		if err != nil {
			return false, err
		}
		if c.s.isPrimary(d.RowKey) {
			has = true
			break
		}
	}
	c.owners[pk] = has
	return has, nil
}

// stray reports an OtherPartition entry stored in partition epk if no
// primary could hold it: its primaries' partition has none. (Entries of
// a partition with primaries are compared by that partition's check.)
func (c *checker[T]) stray(st stray, epk string) bool {
	ix := c.s.core.ByName[st.ix]
	owners, ok := ix.ownerPartition(epk)
	if ok {
		has, err := c.hasPrimaries(owners)
		if err != nil {
			return c.fail(err)
		}
		if has {
			return true
		}
	}
	k := drift.Key{PartitionKey: epk, RowKey: st.rk}
	if c.s.core.Other {
		k.Table = c.s.core.Entries.Name()
	}
	return c.emit(drift.Finding{Kind: drift.Orphan, Index: st.ix, Primary: keyOfDrift(st.opk, st.ork), Entry: k, Detail: "no primary in the entries' partition's primaries' partition"})
}

// misplaced reports an entry of ix where the index's layout puts none
// (an entry of another Placement, Buckets or Config.Entries, left when
// the layout changed) as drift.Orphan: Repair deletes it. table is the
// entry's table's name ("" for the primaries').
func (c *checker[T]) misplaced(ix *index[T], table, epk, erk, opk, ork string) bool {
	return c.emit(drift.Finding{Kind: drift.Orphan, Index: ix.Name, Primary: keyOfDrift(opk, ork), Entry: drift.Key{Table: table, PartitionKey: epk, RowKey: erk}, Detail: "an entry where the index's layout puts none"})
}

// strays scans the entries' table of a whole-table check (phase 1), for
// OtherPartition entries whose primaries' partition has no primary at
// all, and for entries the index's layout does not put there.
func (c *checker[T]) strays(tok token) bool {
	q := entity.Query{Select: []string{PropPrimaryPK, PropPrimaryRK}}
	page := tok.Page
	for {
		resume := token{Phase: 1, Page: page}.String()
		p, err := c.s.core.Entries.QueryPage(c.ctx, q, page)
		if err != nil {
			return c.fail(err)
		}
		c.g = group{resume: resume}
		for _, d := range p.Items {
			if c.sum != nil {
				c.sum.Scanned++
			}
			ix := c.s.entryIndex(d.RowKey)
			opk, ork, ok := owner(&d)
			if ix == nil || !ok {
				continue
			}
			var more bool
			switch {
			case ix.Placement == OtherPartition:
				more = c.stray(stray{ix: ix.Name, rk: d.RowKey, opk: opk, ork: ork}, d.PartitionKey)
			case ix.Placement == TableWide && strings.HasPrefix(d.PartitionKey, ix.prefix):
				more = true // judged by the scan of the index's partitions
			default:
				more = c.misplaced(ix, c.s.core.Entries.Name(), d.PartitionKey, d.RowKey, opk, ork)
			}
			if !more {
				return false
			}
		}
		if p.Next == "" {
			return !c.stop
		}
		page = p.Next
		c.checkpoint(token{Phase: 1, Page: page})
	}
}

// decoded is an entity as read and as a property bag.
type decoded struct {
	raw []byte
	bag entity.DynamicEntity
}

// prefetch runs a query ahead of its reader, decoding as it goes, so that
// the next page is on its way while the reader compares this one.
func prefetch(ctx context.Context, query func(ctx context.Context) iter.Seq2[json.RawMessage, error]) iter.Seq2[*decoded, error] {
	type item struct {
		d   *decoded
		err error
	}
	return func(yield func(*decoded, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		ch := make(chan item, entity.MaxPageSize)
		go func() {
			defer close(ch)
			for raw, err := range query(ctx) {
				it := item{err: err}
				if err == nil {
					it.d = &decoded{raw: raw}
					it.err = entity.Unmarshal(raw, &it.d.bag)
				}
				select {
				case ch <- it:
				case <-ctx.Done():
					return
				}
				if it.err != nil {
					return
				}
			}
		}()
		for it := range ch {
			if !yield(it.d, it.err) {
				return
			}
		}
	}
}
