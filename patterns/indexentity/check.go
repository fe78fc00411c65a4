package indexentity

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// A check compares, partition by partition, the values the primaries hold
// with the lists of every index, and reports as a drift.Finding:
//
//   - Missing: a primary holds a value whose list does not name it
//     (Entry: the value's first index entity, or its blob);
//   - Orphan: a list names a primary that is gone or holds another value
//     (Entry: the index entity or blob that names it);
//   - Stale: an index entity or blob whose content breaks the layout —
//     unreadable, a member outside its continuation's range, a
//     continuation the directory does not name, or one it names that is
//     missing (Entry: that entity or blob; Primary is empty).
//
// A blob's Entry is {Table: the container's name, RowKey: the blob's
// name}.

// primaryState is what a check read of one primary.
type primaryState struct {
	etag   string
	values []string // by index position; "" with has false for none
	has    []bool
}

// partition is one primaries' partition as a check read it.
type partition struct {
	pk        string
	primaries map[string]*primaryState     // by RowKey
	local     map[string]*partitionRows    // SamePartition index entities, by index name
	lists     map[string]map[string]*found // every index's lists, by index name and value
	stray     map[string][]*entity.DynamicEntity
	// misplaced are the index entities in the partition that the
	// indexes' layouts put elsewhere, by index name (a list of another
	// Placement, Buckets or Config.Entries): drift.Stale, deleted by
	// Repair.
	misplaced map[string][]string
	// Primaries that do not decode, by RowKey, with their errors: whether
	// a list should name them cannot be told, so none is judged about
	// them.
	bad map[string]error
}

// partitionRows collects the SamePartition index entities of one index.
type partitionRows struct {
	byValue map[string]*valueRows
	stray   []*entity.DynamicEntity
}

// found is one value's list as read.
type found struct {
	entry    drift.Key // its first index entity, or its blob
	members  []string
	problems []problem
	garbage  []string
	bad      bool
	rows     *valueRows // for index entities: what was read, with ETags
	blob     *blobList  // for blobs
}

func newPartition(pk string) *partition {
	return &partition{pk: pk, primaries: map[string]*primaryState{}, local: map[string]*partitionRows{}, lists: map[string]map[string]*found{}, stray: map[string][]*entity.DynamicEntity{}, misplaced: map[string][]string{}, bad: map[string]error{}}
}

// scanned is one entity of a primaries' partition, decoded once.
type scanned[T any] struct {
	pk, rk, etag string
	e            *T                    // a primary
	row          *entity.DynamicEntity // a SamePartition index entity
	bad          error                 // a primary that does not decode
	misplaced    *index[T]             // an index entity of this index where its layout puts none
}

// decodeScanned decodes an entity a scan read: as a T when it is a
// primary, as a property bag when it is a SamePartition index entity,
// only its keys otherwise.
func (s *Set[T]) decodeScanned(ctx context.Context, raw []byte) (scanned[T], error) {
	var sc scanned[T]
	var h head
	if err := entity.Unmarshal(raw, &h); err != nil {
		return sc, err
	}
	sc.pk, sc.rk, sc.etag = h.PartitionKey, h.RowKey, h.ETag
	if s.isPrimary(sc.rk) {
		e, _, err := s.core.Rows.Decode(ctx, raw)
		if err != nil {
			// One bad row: reported, and the scan goes on.
			sc.bad = &StepError{Step: "check: decode primary", PartitionKey: sc.pk, RowKey: sc.rk, Err: err}
		} else {
			sc.e = &e
		}
		return sc, nil
	}
	ix := s.entryIndex(sc.rk)
	if ix != nil && s.misplacedIn(ix, sc.pk) {
		sc.misplaced = ix
		return sc, nil
	}
	if ix != nil && ix.Placement == SamePartition {
		var d entity.DynamicEntity
		if err := entity.Unmarshal(raw, &d); err != nil {
			return sc, err
		}
		sc.row = &d
	}
	return sc, nil
}

// add files one entity of the primaries' partition: a primary, or an
// index entity of a SamePartition index.
func (s *Set[T]) add(p *partition, sc scanned[T]) {
	if sc.bad != nil {
		p.bad[sc.rk] = sc.bad
		return
	}
	if sc.e != nil {
		st := &primaryState{etag: sc.etag, values: make([]string, len(s.core.Indexes)), has: make([]bool, len(s.core.Indexes))}
		for i, ix := range s.core.Indexes {
			v, has, err := ix.valueOf(sc.e, p.pk)
			st.values[i], st.has[i] = v, has && err == nil
		}
		p.primaries[sc.rk] = st
		return
	}
	if sc.misplaced != nil {
		p.misplaced[sc.misplaced.Name] = append(p.misplaced[sc.misplaced.Name], sc.rk)
		return
	}
	if sc.row == nil {
		return // another entity type, an intent, an OtherPartition index entity
	}
	ix := s.entryIndex(sc.rk)
	pr := p.local[ix.Name]
	if pr == nil {
		pr = &partitionRows{byValue: map[string]*valueRows{}}
		p.local[ix.Name] = pr
	}
	value, id, ok := ix.parseRK(sc.rk)
	if !ok {
		pr.stray = append(pr.stray, sc.row)
		return
	}
	vr := pr.byValue[value]
	if vr == nil {
		vr = &valueRows{value: value, chunks: map[int64]*entity.DynamicEntity{}}
		pr.byValue[value] = vr
	}
	if id == 0 {
		vr.head = sc.row
	} else {
		vr.chunks[id] = sc.row
	}
}

// readLists reads the lists of every index for partition p: the
// SamePartition ones from what the partition scan collected, the others
// with a query of their partition or a listing of their blobs.
func (s *Set[T]) readLists(ctx context.Context, p *partition, only *index[T], cache wideCache) error {
	for _, ix := range s.core.Indexes {
		if only != nil && ix != only {
			continue
		}
		lists := map[string]*found{}
		p.lists[ix.Name] = lists
		switch ix.Placement {
		case SamePartition:
			pr := p.local[ix.Name]
			if pr == nil {
				continue
			}
			for v, vr := range pr.byValue {
				lists[v] = s.foundRows(ix, p.pk, vr)
			}
			p.stray[ix.Name] = pr.stray
		case OtherPartition:
			epk := ix.entryPK(p.pk)
			for vr, err := range s.scanRows(ctx, ix, epk, "", "") {
				if err != nil {
					return err
				}
				if vr.stray {
					for _, e := range vr.chunks {
						p.stray[ix.Name] = append(p.stray[ix.Name], e)
					}
					continue
				}
				lists[vr.value] = s.foundRows(ix, epk, vr)
			}
		case Blob:
			if err := s.readBlobs(ctx, ix, p, lists); err != nil {
				return err
			}
		case TableWide:
			if err := s.readWideFor(ctx, ix, p, lists, cache); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Set[T]) foundRows(ix *index[T], epk string, vr *valueRows) *found {
	a := assemble(ix.Name, vr)
	return &found{
		entry:    drift.Key{Table: s.tableOf(ix), PartitionKey: epk, RowKey: ix.headRK(vr.value)},
		members:  a.members,
		problems: a.problems,
		garbage:  a.garbage,
		bad:      a.bad,
		rows:     vr,
	}
}

// tableOf is the drift.Key Table of ix's index entities: "" for the
// primary's table.
func (s *Set[T]) tableOf(ix *index[T]) string {
	switch {
	case ix.Placement == Blob:
		return containerName(s.blobs)
	case (ix.Placement == OtherPartition || ix.Placement == TableWide) && s.core.Entries != s.core.Bags:
		return s.core.Entries.Name()
	}
	return ""
}

func containerName(c *container.Client) string {
	u := strings.TrimSuffix(c.URL(), "/")
	if i := strings.LastIndexByte(u, '/'); i >= 0 {
		u = u[i+1:]
	}
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u = u[:i]
	}
	return u
}

// readBlobs reads the blobs of ix for partition p.
func (s *Set[T]) readBlobs(ctx context.Context, ix *index[T], p *partition, lists map[string]*found) error {
	pager := s.blobs.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr(ix.blobPrefix(p.pk, false))})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return &StepError{Step: "check: list index blobs", Index: ix.Name, PartitionKey: p.pk, Err: err}
		}
		for _, b := range page.Segment.BlobItems {
			if b.Name == nil {
				continue
			}
			pk, value, ok := ix.parseBlobName(*b.Name)
			if !ok || pk != p.pk {
				continue // another partition's whose key has p's as a prefix part
			}
			f := &found{entry: drift.Key{Table: containerName(s.blobs), RowKey: *b.Name}}
			l, err := s.readBlob(ctx, ix, *b.Name)
			var ce *CorruptError
			switch {
			case errors.As(err, &ce):
				f.problems = []problem{{*b.Name, ce.Reason}}
				f.bad = true
			case err != nil:
				return err
			default:
				f.members, f.blob = l.members, l
			}
			lists[value] = f
		}
	}
	return nil
}

// compare yields p's findings, index by index, value by value in key
// order. resume is the token of the partition.
func (s *Set[T]) compare(p *partition, resume string) []drift.Finding {
	var out []drift.Finding
	rks := make([]string, 0, len(p.primaries))
	for rk := range p.primaries {
		rks = append(rks, rk)
	}
	slices.SortFunc(rks, keys.Compare)
	for i, ix := range s.core.Indexes {
		lists, checked := p.lists[ix.Name]
		if !checked {
			continue
		}
		want := map[string][]string{}
		for _, rk := range rks {
			if st := p.primaries[rk]; st.has[i] {
				want[st.values[i]] = append(want[st.values[i]], rk)
			}
		}
		values := make([]string, 0, len(want)+len(lists))
		for v := range want {
			values = append(values, v)
		}
		for v := range lists {
			if _, ok := want[v]; !ok {
				values = append(values, v)
			}
		}
		slices.SortFunc(values, keys.Compare)
		epk := p.pk
		if ix.Placement == OtherPartition {
			epk = ix.entryPK(p.pk)
		}
		wide := ix.Placement == TableWide // Missing only: its lists are checked whole in phase 1
		for _, rk := range p.misplaced[ix.Name] {
			out = append(out, drift.Finding{Kind: drift.Stale, Index: ix.Name, Entry: drift.Key{PartitionKey: p.pk, RowKey: rk}, Detail: misplacedDetail, Resume: resume})
		}
		for _, e := range p.stray[ix.Name] {
			out = append(out, drift.Finding{Kind: drift.Stale, Index: ix.Name, Entry: drift.Key{Table: s.tableOf(ix), PartitionKey: e.PartitionKey, RowKey: e.RowKey}, Detail: "an entity under the index's prefix whose RowKey the index does not make", Resume: resume})
		}
		for _, v := range values {
			f := lists[v]
			entry := drift.Key{Table: s.tableOf(ix), PartitionKey: epk, RowKey: ix.headRK(v)}
			if ix.Placement == Blob {
				entry = drift.Key{Table: containerName(s.blobs), RowKey: ix.blobName(p.pk, v)}
			}
			var listed []string
			if f != nil && wide {
				listed = f.members
			} else if f != nil {
				entry, listed = f.entry, f.members
				for _, pr := range f.problems {
					k := drift.Key{Table: entry.Table, PartitionKey: entry.PartitionKey, RowKey: pr.rk}
					out = append(out, drift.Finding{Kind: drift.Stale, Index: ix.Name, Entry: k, Detail: pr.reason, Resume: resume})
				}
				for _, g := range f.garbage {
					k := drift.Key{Table: entry.Table, PartitionKey: entry.PartitionKey, RowKey: g}
					out = append(out, drift.Finding{Kind: drift.Stale, Index: ix.Name, Entry: k, Detail: "a continuation entity the directory does not name", Resume: resume})
				}
				// A member no primary can have (a list of another
				// layout's, whose members are other keys) is damage.
				bad := func(m string) bool { return !s.memberOK(ix, m) }
				if i := slices.IndexFunc(listed, bad); i >= 0 {
					out = append(out, drift.Finding{Kind: drift.Stale, Index: ix.Name, Entry: entry, Detail: "the list names " + quote(listed[i]) + ", which is not a primary's RowKey", Resume: resume})
					listed = slices.DeleteFunc(slices.Clone(listed), bad)
				}
			}
			exp := want[v]
			listedSet := make(map[string]bool, len(listed))
			for _, m := range listed {
				listedSet[m] = true
			}
			for _, rk := range exp {
				if wide {
					entry = drift.Key{Table: s.tableOf(ix), PartitionKey: ix.widePK(v, ix.wideBucket(wideMember(p.pk, rk))), RowKey: ix.headRK(v)}
				}
				if !listedSet[rk] {
					out = append(out, drift.Finding{Kind: drift.Missing, Index: ix.Name, Primary: drift.Key{PartitionKey: p.pk, RowKey: rk}, Entry: entry, Detail: "the primary holds " + quote(v) + " and the list does not name it", Resume: resume})
				}
			}
			for _, m := range listed {
				if wide {
					break
				}
				st := p.primaries[m]
				if st != nil && st.has[i] && st.values[i] == v || p.bad[m] != nil {
					continue
				}
				detail := "the primary is gone"
				switch {
				case st != nil && st.has[i]:
					detail = "the primary holds " + quote(st.values[i]) + ", not " + quote(v)
				case st != nil:
					detail = "the primary holds no value"
				}
				out = append(out, drift.Finding{Kind: drift.Orphan, Index: ix.Name, Primary: drift.Key{PartitionKey: p.pk, RowKey: m}, Entry: entry, Detail: detail, Resume: resume})
			}
		}
	}
	return out
}

// misplacedDetail is the detail of a finding of an index entity or blob
// where the index's layout puts none.
const misplacedDetail = "an index entity where the index's layout puts none"

func quote(v string) string { return "\"" + indexset.Shorten(v) + "\"" }

// readPartition reads the primaries' partition pk whole (primaries and
// SamePartition index entities): one partition scan.
func (s *Set[T]) readPartition(ctx context.Context, pk string) (*partition, error) {
	p := newPartition(pk)
	for raw, err := range s.core.Rows.Query(ctx, entity.Query{Filter: filter.PK(pk)}) {
		if err != nil {
			return nil, &StepError{Step: "check: read partition", PartitionKey: pk, Err: err}
		}
		sc, err := s.decodeScanned(ctx, raw)
		if err != nil {
			return nil, err
		}
		s.add(p, sc)
	}
	return p, nil
}

// partitions yields the primaries' partitions of a check in key order,
// each read whole, from position t: the given ones, or every partition of
// the table (one table scan).
func (s *Set[T]) partitions(ctx context.Context, given []string, t token) iter.Seq2[*partition, error] {
	return func(yield func(*partition, error) bool) {
		if given != nil {
			pks := slices.Clone(given)
			slices.SortFunc(pks, keys.Compare)
			pks = slices.Compact(pks)
			for _, pk := range pks {
				if c := keys.Compare(pk, t.PK); (t.PK != "" || t.After) && (c < 0 || c == 0 && t.After) {
					continue
				}
				p, err := s.readPartition(ctx, pk)
				if !yield(p, err) || err != nil {
					return
				}
			}
			return
		}
		var q entity.Query
		if t.PK != "" || t.After {
			q.Filter = filter.Ge("PartitionKey", t.PK)
			if t.After {
				q.Filter = filter.Gt("PartitionKey", t.PK)
			}
		}
		var cur *partition
		for raw, err := range s.core.Rows.Query(ctx, q) {
			if err != nil {
				yield(nil, &StepError{Step: "check: scan table", Err: err})
				return
			}
			sc, err := s.decodeScanned(ctx, raw)
			if err != nil {
				yield(nil, err)
				return
			}
			if cur != nil && cur.pk != sc.pk {
				if !s.skip(cur) && !yield(cur, nil) {
					return
				}
				cur = nil
			}
			if cur == nil {
				cur = newPartition(sc.pk)
			}
			s.add(cur, sc)
		}
		if cur != nil && !s.skip(cur) {
			yield(cur, nil)
		}
	}
}

// skip reports a partition of a whole-table scan that holds neither
// primaries nor SamePartition index entities: an OtherPartition index's
// partition, or another entity type's. The lists of other indexes for
// such a partition are checked in phase 1.
func (s *Set[T]) skip(p *partition) bool {
	return len(p.primaries) == 0 && len(p.local) == 0 && len(p.bad) == 0 && len(p.misplaced) == 0
}

// misplacedIn reports an index entity of ix in partition pk of the
// primaries' table where ix's layout puts none: ix keeps blobs, or its
// index entities in Config.Entries, or in partitions that start with its
// Name and "_" (the check of those partitions judges the rest).
func (s *Set[T]) misplacedIn(ix *index[T], pk string) bool {
	switch {
	case ix.Placement == SamePartition:
		return false
	case ix.Placement == Blob, s.core.Entries != s.core.Bags:
		return true
	}
	return !strings.HasPrefix(pk, ix.prefix)
}

// checked is one partition's findings.
type checked struct {
	p        *partition
	findings []drift.Finding
	next     token // where the scan resumes after it
	// alone: findings repaired one by one, damage first, with no
	// partition of primaries to read again (a TableWide list partition,
	// misplaced index entities or blobs).
	alone bool
}

// rows returns the errors of the partition's bad rows, in key order.
func (c *checked) rows() []error {
	if c.p == nil || len(c.p.bad) == 0 {
		return nil
	}
	rks := make([]string, 0, len(c.p.bad))
	for rk := range c.p.bad {
		rks = append(rks, rk)
	}
	slices.SortFunc(rks, keys.Compare)
	out := make([]error, len(rks))
	for i, rk := range rks {
		out[i] = c.p.bad[rk]
	}
	return out
}

// scan runs a check from opts.Resume, calling visit for each partition.
func (s *Set[T]) scan(ctx context.Context, opts CheckOptions, visit func(c *checked) bool) error {
	t, err := parseToken(opts.Resume)
	if err != nil {
		return err
	}
	if opts.Partitions != nil && t.Phase != 0 {
		return ErrInvalidToken
	}
	if t.Phase == 0 {
		cache := wideCache{} // each TableWide list read once per check
		for p, err := range s.partitions(ctx, opts.Partitions, t) {
			if err != nil {
				return err
			}
			if err := s.readLists(ctx, p, nil, cache); err != nil {
				return err
			}
			at := token{PK: p.pk}
			c := &checked{p: p, findings: s.compare(p, at.String()), next: token{PK: p.pk, After: true}}
			if !visit(c) {
				return nil
			}
		}
		if opts.Partitions != nil {
			return nil
		}
		t = token{Phase: 1}
	}
	for i := t.Index; t.Phase == 1 && i < len(s.core.Indexes); i++ {
		ix := s.core.Indexes[i]
		if !ix.Remote() {
			continue
		}
		from := token{Phase: 1, Index: i}
		if i == t.Index {
			from = t
		}
		for pk, err := range s.listPartitions(ctx, ix, from) {
			if err != nil {
				return err
			}
			if ix.Placement == TableWide {
				at := token{Phase: 1, Index: i, PK: pk}
				fs, err := s.checkWide(ctx, ix, pk, at.String())
				if err != nil {
					return err
				}
				next := token{Phase: 1, Index: i, PK: pk, After: true}
				if !visit(&checked{p: newPartition(pk), findings: fs, next: next, alone: true}) {
					return nil
				}
				continue
			}
			has, err := s.visited(ctx, pk)
			if err != nil {
				return err
			}
			next := token{Phase: 1, Index: i, PK: pk, After: true}
			if has {
				if !visit(&checked{next: next}) {
					return nil
				}
				continue // phase 0 checked it
			}
			p := newPartition(pk)
			if err := s.readLists(ctx, p, ix, nil); err != nil {
				return err
			}
			at := token{Phase: 1, Index: i, PK: pk}
			if !visit(&checked{p: p, findings: s.compare(p, at.String()), next: next}) {
				return nil
			}
		}
	}
	// Phases 2 and 3: index entities and blobs that no index's layout
	// puts where they are (another Placement's).
	if t.Phase < 2 {
		t = token{Phase: 2}
	}
	for ; t.Phase <= 3; t = (token{Phase: t.Phase + 1}) {
		for i := t.Index; i < len(s.core.Indexes); i++ {
			ix := s.core.Indexes[i]
			from := token{Phase: t.Phase, Index: i}
			if i == t.Index {
				from = t
			}
			more, err := true, error(nil)
			switch {
			case t.Phase == 2 && s.core.Entries != s.core.Bags && (ix.Placement == SamePartition || ix.Placement == Blob):
				more, err = s.misplacedRows(ctx, i, ix, from, visit)
			case t.Phase == 3 && s.blobs != nil && ix.Placement != Blob:
				more, err = s.misplacedBlobs(ctx, i, ix, from, visit)
			}
			if err != nil || !more {
				return err
			}
		}
	}
	return nil
}

// misplacedRows visits, in key order from position t, the partitions of
// Config.Entries that start with the Name and "_" of ix, a SamePartition
// or Blob index, and hold its index entities, which its layout never puts
// there (a change of Placement left them): each a drift.Stale finding
// that Repair deletes. It returns false when visit stopped the scan.
func (s *Set[T]) misplacedRows(ctx context.Context, i int, ix *index[T], t token, visit func(*checked) bool) (bool, error) {
	from, to := keys.PrefixRange(ix.prefix)
	f := filter.Ge("PartitionKey", from).And(filter.RowKeyRange(from, to))
	if to != "" {
		f = f.And(filter.Lt("PartitionKey", to))
	}
	switch {
	case t.After:
		f = f.And(filter.Gt("PartitionKey", t.PK))
	case t.PK != "":
		f = f.And(filter.Ge("PartitionKey", t.PK))
	}
	var c *checked
	for e, err := range s.core.Entries.Query(ctx, entity.Query{Filter: f, Select: []string{"RowKey"}}) {
		if err != nil {
			return false, &StepError{Step: "check: list index entities", Index: ix.Name, Err: err}
		}
		if c != nil && c.p.pk != e.PartitionKey {
			if !visit(c) {
				return false, nil
			}
			c = nil
		}
		if c == nil {
			c = &checked{p: newPartition(e.PartitionKey), next: token{Phase: 2, Index: i, PK: e.PartitionKey, After: true}, alone: true}
		}
		resume := token{Phase: 2, Index: i, PK: e.PartitionKey}.String()
		c.findings = append(c.findings, drift.Finding{Kind: drift.Stale, Index: ix.Name, Entry: drift.Key{Table: s.core.Entries.Name(), PartitionKey: e.PartitionKey, RowKey: e.RowKey}, Detail: misplacedDetail, Resume: resume})
	}
	return c == nil || visit(c), nil
}

// misplacedBlobs visits, in name order from position t, the blobs of
// Config.Blobs named for ix, an index that keeps no blobs (a change of
// Placement left them), a page at a time: each a drift.Stale finding
// that Repair deletes. It returns false when visit stopped the scan.
func (s *Set[T]) misplacedBlobs(ctx context.Context, i int, ix *index[T], t token, visit func(*checked) bool) (bool, error) {
	pager := s.blobs.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr(ix.blobPrefix("", true))})
	table := containerName(s.blobs)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return false, &StepError{Step: "check: list index blobs", Index: ix.Name, Err: err}
		}
		var c *checked
		for _, b := range page.Segment.BlobItems {
			if b.Name == nil || t.After && *b.Name <= t.PK || *b.Name < t.PK {
				continue
			}
			if c == nil {
				c = &checked{p: newPartition(""), alone: true}
			}
			resume := token{Phase: 3, Index: i, PK: *b.Name}.String()
			c.findings = append(c.findings, drift.Finding{Kind: drift.Stale, Index: ix.Name, Entry: drift.Key{Table: table, RowKey: *b.Name}, Detail: misplacedDetail, Resume: resume})
			c.next = token{Phase: 3, Index: i, PK: *b.Name, After: true}
		}
		if c != nil && !visit(c) {
			return false, nil
		}
	}
	return true, nil
}

// visited reports whether phase 0 of a whole-table check visits partition
// pk: it holds a primary or a SamePartition index entity.
func (s *Set[T]) visited(ctx context.Context, pk string) (bool, error) {
	q := entity.Query{Filter: filter.PK(pk), Select: []string{"RowKey"}}
	for e, err := range s.core.Bags.Query(ctx, q) {
		if err != nil {
			return false, &StepError{Step: "check: read partition", PartitionKey: pk, Err: err}
		}
		if s.isPrimary(e.RowKey) {
			return true, nil
		}
		if ix := s.entryIndex(e.RowKey); ix != nil && ix.Placement == SamePartition {
			return true, nil
		}
	}
	return false, nil
}

// listPartitions yields, in key order from position t, the primaries'
// partitions that ix has lists for: the partitions Name_pk of its index
// entities, or the partitions its blobs are named by.
func (s *Set[T]) listPartitions(ctx context.Context, ix *index[T], t token) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		last := ""
		first := true
		emit := func(pk string) bool {
			if !first && pk == last {
				return true
			}
			if c := keys.Compare(pk, t.PK); t.PK != "" || t.After {
				if c < 0 || c == 0 && t.After {
					return true
				}
			}
			first, last = false, pk
			return yield(pk, nil)
		}
		if ix.Placement == OtherPartition || ix.Placement == TableWide {
			from, to := keys.PrefixRange(ix.prefix)
			if t.PK != "" {
				from = ix.prefix + t.PK
				if ix.Placement == TableWide {
					from = t.PK // the list partition itself
				}
			}
			f := filter.Ge("PartitionKey", from)
			if to != "" {
				f = f.And(filter.Lt("PartitionKey", to))
			}
			q := entity.Query{Filter: f, Select: []string{"PartitionKey"}}
			for e, err := range s.core.Entries.Query(ctx, q) {
				if err != nil {
					yield("", &StepError{Step: "check: list index partitions", Index: ix.Name, Err: err})
					return
				}
				pk, ok := ix.ownerPartition(e.PartitionKey)
				if ok && !emit(pk) {
					return
				}
			}
			return
		}
		pager := s.blobs.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr(ix.blobPrefix("", true))})
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				yield("", &StepError{Step: "check: list index blobs", Index: ix.Name, Err: err})
				return
			}
			for _, b := range page.Segment.BlobItems {
				if b.Name == nil {
					continue
				}
				if pk, _, ok := ix.parseBlobName(*b.Name); ok && !emit(pk) {
					return
				}
			}
		}
	}
}

// Check compares the primaries with their lists, from opts.Resume, and
// yields every disagreement as a drift.Finding — Missing, Orphan or Stale
// (see the package documentation) — partition by partition in key order.
// Each finding's Resume restarts the check at its partition. The check
// reads each primaries' partition once (one partition scan, or one table
// scan for the whole table), plus, per OtherPartition index, one range
// query of its partition, per Blob index one listing and one read per
// value, and per TableWide index one range query per list its primaries'
// values and buckets name, each list read once per check (its members of
// partitions not checked yet are kept until their turn). It is not a snapshot: run while writers write, it may report
// what a write under way changes a moment later; Repair and Rebuild read
// again before they change anything.
//
// A primary that does not decode as T (written around the Set with a
// property of another type) is one bad row among many: it is yielded as a
// *StepError naming its keys (step "check: decode primary", unwrapping to
// entity's decoding error), and the check goes on; no list is judged
// about it (a list naming it is not an Orphan), and Rebuild leaves it.
// Any other error (a failed query) is yielded and ends the sequence.
func (s *Set[T]) Check(ctx context.Context, opts CheckOptions) iter.Seq2[drift.Finding, error] {
	if err := s.ok(); err != nil {
		return func(yield func(drift.Finding, error) bool) { yield(drift.Finding{}, err) }
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(drift.Finding, error) bool) { yield(drift.Finding{}, err) }
	}
	return func(yield func(drift.Finding, error) bool) {
		stopped := false
		err := s.scan(ctx, opts, func(c *checked) bool {
			for _, err := range c.rows() {
				if !yield(drift.Finding{}, err) {
					stopped = true
					return false
				}
			}
			for _, f := range c.findings {
				if !yield(f, nil) {
					stopped = true
					return false
				}
			}
			if opts.Checkpoint != nil {
				opts.Checkpoint(c.next.String())
			}
			return true
		})
		if err != nil && !stopped {
			yield(drift.Finding{}, err)
		}
	}
}

// readWideFor reads, for partition p's check, the lists of TableWide
// index ix that p's primaries' values and buckets name: one range query
// per (value, bucket). Only the members of partition p are kept, as
// RowKeys; the lists are checked whole, for orphans and damage, in phase
// 1 (checkWide). With a cache (a check's scan), each list is read once
// per check: its members of the other partitions wait in the cache for
// their partition's turn.
func (s *Set[T]) readWideFor(ctx context.Context, ix *index[T], p *partition, lists map[string]*found, cache wideCache) error {
	need := map[[2]string]bool{}
	for rk, st := range p.primaries {
		if st.has[ix.pos] {
			need[[2]string{st.values[ix.pos], ix.wideBucket(wideMember(p.pk, rk))}] = true
		}
	}
	for k := range need {
		value, epk := k[0], ix.widePK(k[0], k[1])
		if ix.checkValue(p.pk, value) != nil {
			continue
		}
		ck := wideKey{ix: ix.Name, epk: epk, value: value}
		wl, ok := cache[ck]
		if !ok {
			var err error
			if wl, err = s.readWideList(ctx, ix, epk, value); err != nil {
				return err
			}
			if cache != nil {
				cache[ck] = wl
			}
		}
		if !wl.listed {
			continue
		}
		f := lists[value]
		if f == nil {
			f = &found{entry: drift.Key{Table: s.tableOf(ix), PartitionKey: epk, RowKey: ix.headRK(value)}}
			lists[value] = f
		}
		f.members = append(f.members, wl.byPK[p.pk]...)
		delete(wl.byPK, p.pk) // a check visits each partition once
	}
	return nil
}

// wideCache holds the TableWide lists a check's scan read, by index,
// list partition and value; nil for none.
type wideCache map[wideKey]*wideList

type wideKey struct{ ix, epk, value string }

// wideList is one TableWide list as a check reads it: whether it has an
// index entity, and its members' RowKeys by PartitionKey.
type wideList struct {
	listed bool
	byPK   map[string][]string
}

// readWideList reads value's list in list partition epk of TableWide
// index ix: one range query.
//
// Only the members of the list's bucket count: a member listed in another
// bucket (as a change of Index.Buckets leaves it) is not where a lookup
// or a writer looks for it, so its partition's check finds it Missing
// from its own bucket, and the check of this list partition (checkWide)
// finds it Stale here.
func (s *Set[T]) readWideList(ctx context.Context, ix *index[T], epk, value string) (*wideList, error) {
	wl := &wideList{byPK: map[string][]string{}}
	_, bucket, _ := ix.parseWidePK(epk)
	from, to := ix.valueRange(value)
	for vr, err := range s.scanRows(ctx, ix, epk, from, to) {
		if err != nil {
			return nil, err
		}
		if vr.stray || vr.value != value {
			continue
		}
		wl.listed = true
		for _, m := range assemble(ix.Name, vr).members {
			if pk, rk, ok := splitMember(m); ok && ix.wideBucket(m) == bucket {
				wl.byPK[pk] = append(wl.byPK[pk], rk)
			}
		}
	}
	return wl, nil
}

// checkWide checks one list partition epk of TableWide index ix whole:
// its entities' content (Stale), members in another bucket's list
// (Stale), and each member against its primary, one point read each
// (Orphan when it is gone or holds another value). resume is the
// partition's token.
func (s *Set[T]) checkWide(ctx context.Context, ix *index[T], epk, resume string) ([]drift.Finding, error) {
	var out []drift.Finding
	table := s.tableOf(ix)
	stale := func(rk, detail string) {
		out = append(out, drift.Finding{Kind: drift.Stale, Index: ix.Name, Entry: drift.Key{Table: table, PartitionKey: epk, RowKey: rk}, Detail: detail, Resume: resume})
	}
	pv, bucket, ok := ix.parseWidePK(epk)
	for vr, err := range s.scanRows(ctx, ix, epk, "", "") {
		if err != nil {
			return nil, err
		}
		if vr.stray || !ok || vr.value != pv {
			for _, e := range vr.all() {
				stale(e.RowKey, "an entity in the index's partition that it does not make")
			}
			continue
		}
		f := s.foundRows(ix, epk, vr)
		for _, pr := range f.problems {
			stale(pr.rk, pr.reason)
		}
		for _, g := range f.garbage {
			stale(g, "a continuation entity the directory does not name")
		}
		var ks []drift.Key
		for _, m := range f.members {
			pk, rk, _ := splitMember(m)
			if !s.memberOK(ix, m) || ix.wideBucket(m) != bucket {
				stale(f.entry.RowKey, "the member "+quote(m)+" is not a primary's keys of this bucket")
				continue
			}
			ks = append(ks, drift.Key{PartitionKey: pk, RowKey: rk})
		}
		for r := range s.fetchKeys(ctx, ks) {
			detail := ""
			switch {
			case errors.Is(r.err, entity.ErrNotFound):
				detail = "the primary is gone"
			case r.err != nil && errors.Is(r.err, entity.ErrDecode):
				continue // a bad row, reported by the scan of its partition
			case r.err != nil:
				return nil, &StepError{Step: "check: read primary", Index: ix.Name, PartitionKey: r.pk, RowKey: r.rk, Err: r.err}
			default:
				v, has := ix.text(&r.e)
				switch {
				case has && v == pv:
					continue
				case has:
					detail = "the primary holds " + quote(v) + ", not " + quote(pv)
				default:
					detail = "the primary holds no value"
				}
			}
			out = append(out, drift.Finding{Kind: drift.Orphan, Index: ix.Name, Primary: drift.Key{PartitionKey: r.pk, RowKey: r.rk}, Entry: f.entry, Detail: detail, Resume: resume})
		}
	}
	return out, nil
}
