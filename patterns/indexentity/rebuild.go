package indexentity

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// bulkFindings is how many findings of one value's list make Rebuild
// rewrite the list whole instead of repairing member by member.
const bulkFindings = 16

// repairLocal brings value's list of a SamePartition index in line with
// primary pk/rk — that list alone — in one entity group transaction with
// an empty merge of the
// primary on condition of the ETag read (when it exists): a writer of the
// primary that got there first makes it read again, and a writer after
// it finds the list as repaired. When the primary is gone the transaction
// holds the list alone, which a writer that inserts the primary cannot
// slip past: its transaction always writes the list's entity.
func (s *Set[T]) repairLocal(ctx context.Context, ix *index[T], pk, rk, value string) error {
	return s.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		p, found, err := s.read(ctx, pk, rk)
		if err != nil {
			return &StepError{Step: "repair: read primary", Index: ix.Name, PartitionKey: pk, RowKey: rk, Err: err}
		}
		w := s.newWrite(pk, rk)
		w.touch, w.only, w.fix = true, ix, value
		if !found {
			return w.Round(ctx, nil, nil)
		}
		return w.Round(ctx, &p, &p)
	})
}

// Repair fixes what a finding of Check reports, whatever has changed
// since: a Missing or Orphan finding brings the entry's list — that list
// alone, not the list of another value the primary holds now, which may
// be damaged (a finding of its own) — in line with the primary as it is
// now, read again (the primary and the list in one transaction for a
// SamePartition index; the sync of patterns/eventual's handler, reading
// the primary again after the write, for the others);
// a Stale finding rewrites the entity's list from what can be read of it
// (a continuation the directory does not name is deleted), after which
// Check may report the members it lost as Missing. Repairs are
// idempotent. A repair that keeps losing to writers of the same entities
// returns an error matching drift.ErrRaced, as does one whose reply was
// lost while another writer changed the same entities, when reading them
// back cannot tell whether it was applied (TestRepairBesideWriter).
func (s *Set[T]) Repair(ctx context.Context, f drift.Finding) error {
	if err := s.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	ix, err := s.index(f.Index)
	if err != nil {
		return err
	}
	var rerr error
	switch f.Kind {
	case drift.Missing, drift.Orphan:
		value, ok := s.entryValue(ix, f.Entry)
		if !ok {
			return &StepError{Step: "repair", Index: ix.Name, PartitionKey: f.Entry.PartitionKey, RowKey: f.Entry.RowKey, Err: fmt.Errorf("not an entry of the index: %w", ErrInvalidToken)}
		}
		if err := s.validKeys(f.Primary.PartitionKey, f.Primary.RowKey); err != nil {
			return err
		}
		rerr = s.resync(ctx, ix, f.Primary.PartitionKey, f.Primary.RowKey, value)
	case drift.Stale:
		rerr = s.repairStale(ctx, ix, f.Entry)
	default:
		return &StepError{Step: "repair", Index: ix.Name, Err: fmt.Errorf("unknown finding kind %v", f.Kind)}
	}
	switch {
	case errors.Is(rerr, drift.ErrRaced):
	case errors.Is(rerr, entity.ErrContention), errors.Is(rerr, entity.ErrOutcomeUnknown):
		// Lost to writers, or a lost reply that reading back could not
		// settle because another writer changed the same entities: the
		// repair is idempotent, check again.
		rerr = indexset.Raced(rerr)
	}
	return wrap(rerr, "repair", ix.Name, f.Primary.PartitionKey, f.Primary.RowKey)
}

// entryValue is the value whose list entry k (an index entity or blob)
// belongs to.
func (s *Set[T]) entryValue(ix *index[T], k drift.Key) (string, bool) {
	if ix.Placement == Blob {
		_, v, ok := ix.parseBlobName(k.RowKey)
		return v, ok
	}
	v, _, ok := ix.parseRK(k.RowKey)
	return v, ok
}

// repairStale rewrites the list that entity (or blob) k belongs to from
// what can be read of it.
func (s *Set[T]) repairStale(ctx context.Context, ix *index[T], k drift.Key) error {
	if !s.placed(ix, k) {
		return s.dropMisplaced(ctx, k)
	}
	if ix.Placement == Blob {
		return s.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
			l, data, err := s.readBlobRaw(ctx, ix, k.RowKey)
			if err != nil || data == nil {
				return err
			}
			return s.writeBlob(ctx, ix, l, slices.DeleteFunc(salvage(string(data)), func(m string) bool { return !s.memberOK(ix, m) }))
		})
	}
	value, _, ok := ix.parseRK(k.RowKey)
	if !ok {
		// An entity under the index's prefix that it did not make.
		return indexset.DeleteSettled(ctx, s.rows(ix), k.PartitionKey, k.RowKey)
	}
	from, to := ix.valueRange(value)
	return s.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		vr := &valueRows{value: value, chunks: map[int64]*entity.DynamicEntity{}}
		for got, err := range s.scanRows(ctx, ix, k.PartitionKey, from, to) {
			if err != nil {
				return err
			}
			if !got.stray && got.value == value {
				vr = got
			}
		}
		var ms []string
		for _, e := range vr.all() {
			ms = append(ms, salvageRow(e)...)
		}
		ms = normalize(ms)
		if ix.Placement == TableWide {
			// Keep the members that are primaries' keys of this bucket.
			_, b, _ := ix.parseWidePK(k.PartitionKey)
			ms = slices.DeleteFunc(ms, func(m string) bool { return !s.memberOK(ix, m) || ix.wideBucket(m) != b })
		} else {
			ms = slices.DeleteFunc(ms, func(m string) bool { return !s.memberOK(ix, m) })
		}
		return s.rewriteRows(ctx, ix, k.PartitionKey, vr, ms)
	})
}

// memberOK reports whether m is a member a list of ix may hold: a
// primary's RowKey, or, for a TableWide index, keys.Compound of a
// primary's keys.
func (s *Set[T]) memberOK(ix *index[T], m string) bool {
	if ix.Placement == TableWide {
		pk, rk, ok := splitMember(m)
		return ok && s.validKeys(pk, rk) == nil
	}
	return s.validKeys("", m) == nil
}

// placed reports whether k, the entry of a finding of ix, is where ix's
// layout may put an index entity or blob: a blob (its name holds a '/',
// which no RowKey does) for a Blob index only; for the others, an entity
// of the primaries' table (SamePartition) or of Config.Entries in a
// partition that starts with the index's Name and "_" (OtherPartition,
// TableWide).
func (s *Set[T]) placed(ix *index[T], k drift.Key) bool {
	blob := strings.Contains(k.RowKey, "/")
	switch {
	case ix.Placement == Blob || blob:
		return ix.Placement == Blob && blob
	case ix.Placement == SamePartition:
		return s.tableNamed(k.Table) == s.core.Bags
	}
	return s.tableNamed(k.Table) == s.core.Entries && strings.HasPrefix(k.PartitionKey, ix.prefix)
}

// tableNamed is the table a finding's Entry.Table names: the primaries'
// for "", Config.Entries for its name, else nil.
func (s *Set[T]) tableNamed(name string) *entity.Table[entity.DynamicEntity] {
	switch {
	case name == "":
		return s.core.Bags
	case s.core.Entries != s.core.Bags && name == s.core.Entries.Name():
		return s.core.Entries
	}
	return nil
}

// dropMisplaced deletes k, an index entity or blob where no layout of
// the Set puts one: an entity on condition of the ETag it is read with,
// a blob whatever its version.
func (s *Set[T]) dropMisplaced(ctx context.Context, k drift.Key) error {
	if strings.Contains(k.RowKey, "/") {
		if s.blobs == nil || k.Table != containerName(s.blobs) {
			return fmt.Errorf("%w: the finding names blob %q of container %q, which is not the Set's", ErrInvalidToken, k.RowKey, k.Table)
		}
		_, err := s.blobs.NewBlobClient(k.RowKey).Delete(ctx, nil)
		if bloberror.HasCode(err, bloberror.BlobNotFound) {
			return nil
		}
		return err
	}
	t := s.tableNamed(k.Table)
	if t == nil {
		return fmt.Errorf("%w: the finding names table %q, which is not the Set's", ErrInvalidToken, k.Table)
	}
	e, err := t.Get(ctx, k.PartitionKey, k.RowKey)
	if errors.Is(err, entity.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	err = t.DeleteEntity(ctx, &e)
	if errors.Is(err, entity.ErrNotFound) {
		return nil
	}
	if errors.Is(err, entity.ErrPreconditionFailed) {
		return indexset.Raced(err)
	}
	return err
}

// all returns the head and the continuations read.
func (vr *valueRows) all() []*entity.DynamicEntity {
	var out []*entity.DynamicEntity
	if vr.head != nil {
		out = append(out, vr.head)
	}
	ids := make([]int64, 0, len(vr.chunks))
	for id := range vr.chunks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		out = append(out, vr.chunks[id])
	}
	return out
}

// salvage reads the members it can from a damaged list: every line that
// is a key.
func salvage(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if line != strings.TrimSpace(blobHeader) && validMember(line) == nil && line != "" {
			out = append(out, line)
		}
	}
	return normalize(out)
}

// salvageRow reads the members it can from an index entity's String
// properties named PropMembers….
func salvageRow(e *entity.DynamicEntity) []string {
	var out []string
	for k, v := range e.Properties {
		if s, ok := v.(string); ok && strings.HasPrefix(k, PropMembers) {
			out = append(out, salvage(s)...)
		}
	}
	return out
}

// readBlobRaw reads blob name undecoded; data is nil when it is missing.
func (s *Set[T]) readBlobRaw(ctx context.Context, ix *index[T], name string) (*blobList, []byte, error) {
	l := &blobList{name: name}
	resp, err := s.blobs.NewBlobClient(name).DownloadStream(ctx, nil)
	if bloberror.HasCode(err, bloberror.BlobNotFound) {
		return l, nil, nil
	}
	if err != nil {
		return nil, nil, &StepError{Step: "read index blob " + strconv.Quote(name), Index: ix.Name, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, &StepError{Step: "read index blob " + strconv.Quote(name), Index: ix.Name, Err: err}
	}
	if resp.ETag != nil {
		l.etag = *resp.ETag
	}
	return l, data, nil
}

// rewriteRows replaces the list vr was read as by members, on condition
// that none of vr's entities changed since: a list that fits one entity
// is written in one transaction with the deletes of the old
// continuations; a longer one first gets its new continuations (numbers
// no directory has named, so no reader sees them yet), then one
// transaction swaps the head's directory and deletes the old ones. A lost
// race is errChanged; the new continuations it wrote are deleted.
func (s *Set[T]) rewriteRows(ctx context.Context, ix *index[T], epk string, vr *valueRows, members []string) error {
	t := s.rows(ix)
	old := vr.all()
	var oldChunks []*entity.DynamicEntity
	next := int64(1)
	for _, e := range old {
		if e != vr.head {
			oldChunks = append(oldChunks, e)
		}
	}
	for id := range vr.chunks {
		next = max(next, id+1)
	}
	if vr.head != nil {
		if n, ok := vr.head.Properties[PropNextChunk].(int64); ok {
			next = max(next, n)
		}
	}
	if len(oldChunks) > entity.MaxBatchOperations-1 {
		return &StepError{Step: "rebuild", Index: ix.Name, PartitionKey: epk, RowKey: ix.headRK(vr.value), Err: fmt.Errorf("%d continuation entities: more than one transaction can replace", len(oldChunks))}
	}
	headRK := ix.headRK(vr.value)
	swap := t.NewBatch()
	var fresh []*entity.DynamicEntity
	switch {
	case len(members) == 0 && vr.head != nil:
		swap.DeleteEntity(vr.head)
	case len(members) == 0:
	case s.fits(epk, headRK, members, s.cfg.MaxEntityBytes):
		put(swap, withMembers(row(epk, headRK, vr.head), members))
	default:
		groups := chunks(members, s.cfg.MaxEntityBytes*3/4)
		dir := make([]chunkRef, len(groups))
		for i, g := range groups {
			dir[i] = chunkRef{id: next + int64(i)}
			if i > 0 {
				dir[i].from = g[0]
			}
			fresh = append(fresh, withMembers(row(epk, ix.chunkRK(vr.value, dir[i].id), nil), g))
		}
		put(swap, withDirectory(row(epk, headRK, vr.head), dir, next+int64(len(groups))))
	}
	for _, c := range oldChunks {
		swap.DeleteEntity(c)
	}
	if err := s.upsertAll(ctx, t, fresh); err != nil {
		return err
	}
	if swap.Len() == 0 {
		return nil
	}
	_, err := t.Submit(ctx, swap)
	if err == nil {
		return nil
	}
	if conflict(err) || errors.Is(err, entity.ErrOutcomeUnknown) {
		for _, c := range fresh {
			_, _ = t.DeleteIfExists(ctx, c.PartitionKey, c.RowKey)
		}
		return errChanged
	}
	return &StepError{Step: "rebuild: write index entities", Index: ix.Name, PartitionKey: epk, RowKey: headRK, Err: err}
}

// upsertAll writes entities of one partition in as few transactions as
// the limits allow.
func (s *Set[T]) upsertAll(ctx context.Context, t *entity.Table[entity.DynamicEntity], es []*entity.DynamicEntity) error {
	b, size := t.NewBatch(), 0
	flush := func() error {
		if b.Len() == 0 {
			return nil
		}
		_, err := t.Submit(ctx, b)
		b, size = t.NewBatch(), 0
		return err
	}
	for _, e := range es {
		n := rowSize(e.PartitionKey, e.RowKey, e.Properties) + 1024
		if b.Len() == entity.MaxBatchOperations || size+n > entity.MaxBatchBytes*3/4 {
			if err := flush(); err != nil {
				return err
			}
		}
		b.Upsert(e, entity.Replace)
		size += n
	}
	return flush()
}

// chunks cuts a sorted list into groups of at most about size bytes.
func chunks(ms []string, size int) [][]string {
	var out [][]string
	start, n := 0, 0
	for i, m := range ms {
		u := 2 * (keys.UTF16Len(m) + 1)
		if n+u > size && i > start {
			out = append(out, ms[start:i])
			start, n = i, 0
		}
		n += u
	}
	return append(out, ms[start:])
}

// Rebuild checks from opts.Resume, as Check does, and repairs every
// finding while writers keep writing: member by member (Repair), or, for
// a list with more than 16 findings, by rewriting the list whole on
// condition of the ETags the check read and then reading the partition's
// primaries again to resync those that changed in between. A partition
// whose check found Stale entities is checked and repaired once more, for
// the members their damage lost. It returns what it found and repaired;
// after an error, Summary.Next (also passed to opts.Checkpoint after each
// partition) resumes it. Repairs that lost a race to a writer are not
// errors: they are counted as found and not repaired, for the next check.
// A bad row (see Check) does not stop it: it checks and repairs the rest
// and then returns the bad rows' errors, joined, with Summary.Next ""
// (TestOneBadRow). A second Rebuild right after the first, with no writer
// in between, repairs nothing.
func (s *Set[T]) Rebuild(ctx context.Context, opts CheckOptions) (drift.Summary, error) {
	if err := s.ok(); err != nil {
		return drift.Summary{}, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return drift.Summary{}, err
	}
	var sum drift.Summary
	var failed error
	var rows []error
	done := true
	err := s.scan(ctx, opts, func(c *checked) bool {
		rows = append(rows, c.rows()...)
		if c.p != nil {
			n, err := s.repairPartition(ctx, c, &sum, &rows)
			sum.Repaired += n
			if err != nil {
				failed, done = err, false
				return false
			}
		}
		sum.Next = c.next.String()
		if opts.Checkpoint != nil {
			opts.Checkpoint(sum.Next)
		}
		return true
	})
	if err == nil {
		err = failed
	}
	if err == nil && done {
		sum.Next = ""
		err = joinRows(rows)
	}
	return sum, err
}

// badRow reports an error of one entity that no retry fixes.
func badRow(err error) bool { return indexset.BadRow[pkg](err) }

// joinRows joins the errors of bad rows, the first ten in full.
func joinRows(rows []error) error { return indexset.JoinRows[pkg](rows) }

// repairPartition repairs one partition's findings and counts them into
// sum; it returns how many it repaired.
func (s *Set[T]) repairPartition(ctx context.Context, c *checked, sum *drift.Summary, rows *[]error) (int, error) {
	p := c.p
	sum.Scanned += len(p.primaries)
	for _, lists := range p.lists {
		sum.Scanned += len(lists)
	}
	repaired := 0
	findings := c.findings
	if c.alone {
		// One TableWide list partition: damage first, then member by
		// member (no partition of primaries to read again).
		slices.SortStableFunc(findings, func(a, b drift.Finding) int {
			return cmp.Compare(boolInt(a.Kind != drift.Stale), boolInt(b.Kind != drift.Stale))
		})
		for _, f := range findings {
			sum.Count(f)
			switch err := s.Repair(ctx, f); {
			case err == nil:
				repaired++
			case badRow(err):
				*rows = append(*rows, err)
			case !errors.Is(err, drift.ErrRaced):
				return repaired, err
			}
		}
		return repaired, nil
	}
	// Stale first: their lists are rewritten from what can be read, and
	// the partition checked again for what that lost.
	stale := false
	for _, f := range findings {
		if f.Kind != drift.Stale {
			continue
		}
		sum.Count(f)
		stale = true
		switch err := s.Repair(ctx, f); {
		case err == nil:
			repaired++
		case badRow(err):
			*rows = append(*rows, err)
		case !errors.Is(err, drift.ErrRaced):
			return repaired, err
		}
	}
	if stale {
		again, err := s.recheck(ctx, c)
		if err != nil {
			return repaired, err
		}
		findings = again
	}
	for _, f := range findings {
		if f.Kind != drift.Stale {
			sum.Count(f) // after a recheck, what the Stale ones' repair left
		}
	}
	type key struct {
		ix    string
		value string
	}
	groups := map[key][]drift.Finding{}
	var order []key
	for _, f := range findings {
		if f.Kind == drift.Stale {
			continue
		}
		ix := s.core.ByName[f.Index]
		v, ok := s.entryValue(ix, f.Entry)
		if !ok {
			continue
		}
		k := key{f.Index, v}
		if _, seen := groups[k]; !seen {
			order = append(order, k)
		}
		groups[k] = append(groups[k], f)
	}
	type fenced struct {
		ix    *index[T]
		rk    string
		value string
		etag  string // at the check; "" when the primary was missing
	}
	var fence []fenced
	for _, k := range order {
		fs := groups[k]
		ix := s.core.ByName[k.ix]
		if len(fs) > bulkFindings && ix.Placement != TableWide {
			if err := s.bulk(ctx, ix, c.p, k.value, fs); err == nil {
				repaired += len(fs)
				for _, f := range fs {
					etag := ""
					if st := p.primaries[f.Primary.RowKey]; st != nil {
						etag = st.etag
					}
					fence = append(fence, fenced{ix, f.Primary.RowKey, k.value, etag})
				}
				continue
			} else if !errors.Is(err, errChanged) {
				return repaired, err
			}
		}
		for _, f := range fs {
			switch err := s.Repair(ctx, f); {
			case err == nil:
				repaired++
			case badRow(err):
				*rows = append(*rows, err) // a primary made undecodable since
			case !errors.Is(err, drift.ErrRaced):
				return repaired, err
			}
		}
	}
	if len(fence) == 0 {
		return repaired, nil
	}
	// The lists rewritten whole were guarded by their own ETags only: a
	// primary written between the check and the rewrite may have left its
	// list untouched. Read the primaries again and resync those.
	now, err := s.readPartition(ctx, p.pk)
	if err != nil {
		return repaired, err
	}
	for _, f := range fence {
		etag := ""
		if st := now.primaries[f.rk]; st != nil {
			etag = st.etag
		}
		if etag != f.etag {
			if err := s.resync(ctx, f.ix, p.pk, f.rk, f.value); err != nil && !errors.Is(err, entity.ErrContention) {
				return repaired, err
			}
		}
	}
	return repaired, nil
}

// recheck checks c's partition again.
func (s *Set[T]) recheck(ctx context.Context, c *checked) ([]drift.Finding, error) {
	p, err := s.readPartition(ctx, c.p.pk)
	if err != nil {
		return nil, err
	}
	var only *index[T]
	if len(c.p.lists) == 1 {
		for name := range c.p.lists {
			only = s.core.ByName[name]
		}
	}
	if err := s.readLists(ctx, p, only, nil); err != nil {
		return nil, err
	}
	*c.p = *p
	resume := ""
	if len(c.findings) > 0 {
		resume = c.findings[0].Resume
	}
	return s.compare(p, resume), nil
}

// bulk rewrites value's list in ix for partition p whole: what the check
// read, with the Missing members added and the Orphans removed, on
// condition that the list did not change since.
func (s *Set[T]) bulk(ctx context.Context, ix *index[T], p *partition, value string, fs []drift.Finding) error {
	f := p.lists[ix.Name][value]
	var members []string
	if f != nil {
		if f.bad {
			return errChanged // member by member
		}
		members = slices.Clone(f.members)
	}
	drop := map[string]bool{}
	for _, x := range fs {
		switch x.Kind {
		case drift.Missing:
			members = append(members, x.Primary.RowKey)
		case drift.Orphan:
			drop[x.Primary.RowKey] = true
		}
	}
	members = slices.DeleteFunc(normalize(members), func(m string) bool { return drop[m] })
	if ix.Placement == Blob {
		l := &blobList{name: ix.blobName(p.pk, value)}
		if f != nil && f.blob != nil {
			l = f.blob
		}
		return s.writeBlob(ctx, ix, l, members)
	}
	epk := ix.entryPK(p.pk)
	vr := &valueRows{value: value, chunks: map[int64]*entity.DynamicEntity{}}
	if f != nil && f.rows != nil {
		vr = f.rows
	}
	return s.rewriteRows(ctx, ix, epk, vr, members)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
