package secondaryindex

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// Repair fixes what a finding of Check reports, as the entity and its
// entries are now, not as the check saw them: it writes the entry the
// primary holding it should have, or deletes an entry no primary holds.
// It is idempotent, and ETag-guarded so that it can run while writers
// write: a SamePartition entry is written in one transaction with a write
// to its primary conditional on the ETag just read (which changes that
// ETag), an OtherPartition entry as the index's messages write it. A
// repair that loses to a writer reports drift.ErrRaced; check again. So
// does one whose reply was lost while another writer changed the same
// entities, when reading them back cannot tell whether it was applied
// (TestRepairBesideWriter).
//
// A drift.Duplicate finding (a unique value that a write around the Set
// gave to a second primary) is not repaired: the index keeps the entry
// with one holder (see the package documentation), and only a change of
// the primaries ends it. Repair returns an error matching ErrDuplicate
// for it, and changes nothing.
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
	if f.Kind == drift.Duplicate {
		return &StepError{Step: "repair", Index: ix.Name, PartitionKey: f.Entry.PartitionKey, RowKey: f.Entry.RowKey,
			Err: heldTwice{f.Primary}}
	}
	table, err := s.findingTable(f.Entry)
	if err != nil {
		return &StepError{Step: "repair", Index: ix.Name, PartitionKey: f.Entry.PartitionKey, RowKey: f.Entry.RowKey, Err: err}
	}
	switch {
	case table != s.tableOf(ix):
		// An entry of another layout (Placement, Config.Entries): no
		// entry of the index belongs in that table.
		err = s.dropEntry(ctx, table, f.Entry)
	case ix.Remote():
		err = s.repairRemote(ctx, ix, f)
	default:
		err = s.repairLocal(ctx, ix, f)
	}
	if errors.Is(err, entity.ErrOutcomeUnknown) && !errors.Is(err, drift.ErrRaced) {
		// A repair whose reply was lost and that entity could not settle
		// (another writer changed the entities meanwhile): idempotent, so
		// check again, as after a lost race.
		return indexset.Raced(err)
	}
	return err
}

// heldTwice is the cause of a Duplicate finding's refused repair; it
// matches ErrDuplicate.
type heldTwice struct{ holder drift.Key }

func (e heldTwice) Error() string {
	return "the value is held by " + indexset.Keys(e.holder.PartitionKey, e.holder.RowKey) + " and another primary: change one of them"
}

func (e heldTwice) Is(target error) bool { return target == ErrDuplicate }

// repairLocal repairs the SamePartition entry f.Entry.
func (s *Set[T]) repairLocal(ctx context.Context, ix *index[T], f drift.Finding) error {
	epk, erk := f.Entry.PartitionKey, f.Entry.RowKey
	step := func(name string, err error) error {
		return &StepError{Step: "repair: " + name, Index: ix.Name, PartitionKey: epk, RowKey: erk, Err: err}
	}
	entry, err := s.core.Bags.Get(ctx, epk, erk)
	found := err == nil
	if err != nil && !errors.Is(err, entity.ErrNotFound) {
		return step("read entry", err)
	}
	// The holder: the primary the entry names if it holds the value (it
	// keeps the entry, also when a write around the Set gave the value
	// to a second primary: see keeper), else the finding's primary if it
	// holds it.
	var holder *version[T]
	var hrk string
	var candidates []string
	if opk, ork, ok := owner(&entry); found && ok && opk == epk {
		candidates = append(candidates, ork)
	}
	if f.Primary.PartitionKey == epk && !slices.Contains(candidates, f.Primary.RowKey) {
		candidates = append(candidates, f.Primary.RowKey)
	}
	for _, rk := range candidates {
		p, ok, err := s.read(ctx, epk, rk)
		if err != nil {
			return step("read primary", err)
		}
		if ok && s.holds(ix, &p, epk, rk, epk, erk) {
			holder, hrk = &p, rk
			break
		}
	}
	if holder == nil {
		if !found {
			return nil
		}
		if err := s.core.Bags.Delete(ctx, epk, erk, entry.ETag); err != nil {
			if changedSince(err) {
				return indexset.Raced(step("delete orphan", err))
			}
			return step("delete orphan", err)
		}
		return nil
	}
	want := ix.copyOf(holder, epk, erk, epk, hrk)
	if found {
		if opk, ork, _ := owner(&entry); opk == epk && ork == hrk && sameCopy(want, &entry) {
			return nil
		}
	}
	// The holder's fence makes the transaction fail if it changed since
	// it was read: the copy written is the holder's current one.
	b := s.core.Bags.NewBatch().Update(indexset.Fence(epk, hrk, holder), entity.Merge)
	if found {
		want.ETag = entry.ETag
		b.Update(want, entity.Replace)
	} else {
		b.Insert(want)
	}
	if _, err := s.core.Bags.Submit(ctx, b); err != nil {
		if changedSince(err) || errors.Is(err, entity.ErrAlreadyExists) {
			return indexset.Raced(step("write entry", err))
		}
		return step("write entry", err)
	}
	return nil
}

// repairRemote repairs the OtherPartition or TableWide entry f.Entry the
// way the index's messages do: it syncs the primary named by the finding
// with the entry's value among those to look at.
func (s *Set[T]) repairRemote(ctx context.Context, ix *index[T], f drift.Finding) error {
	values := map[string][]string{}
	value, tpk, rk, ok := ix.parseEntryRK(f.Entry.RowKey)
	var placed bool
	if ix.Placement == TableWide {
		// The entry is where the primary's entry of its value is.
		placed = ok && f.Entry.PartitionKey == ix.entryPK(value, "") && (ix.Unique || tpk == f.Primary.PartitionKey && rk == f.Primary.RowKey)
	} else {
		pk, pok := ix.ownerPartition(f.Entry.PartitionKey)
		placed = ok && pok && pk == f.Primary.PartitionKey && (ix.Unique || rk == f.Primary.RowKey)
	}
	if placed {
		values[ix.Name] = []string{value}
	}
	err := s.sync(ctx, f.Primary.PartitionKey, f.Primary.RowKey, values)
	if errors.Is(err, errPending) || errors.Is(err, entity.ErrContention) {
		return indexset.Raced(err)
	}
	if err != nil || placed {
		return err
	}
	// An entry where its primary's entries never are: no sync reaches it.
	return s.dropEntry(ctx, s.core.Entries, f.Entry)
}

// tableOf is the table that holds the entries of ix.
func (s *Set[T]) tableOf(ix *index[T]) *entity.Table[entity.DynamicEntity] {
	if ix.Remote() {
		return s.core.Entries
	}
	return s.core.Bags
}

// findingTable is the table a finding's entry names: the primaries'
// ("") or Config.Entries.
func (s *Set[T]) findingTable(k drift.Key) (*entity.Table[entity.DynamicEntity], error) {
	switch {
	case k.Table == "" || k.Table == s.core.Bags.Name() && !s.core.Other:
		return s.core.Bags, nil
	case s.core.Other && k.Table == s.core.Entries.Name():
		return s.core.Entries, nil
	}
	return nil, fmt.Errorf("%w: the finding names table %q, which is not the Set's", ErrInvalidToken, k.Table)
}

// dropEntry deletes the entry k of table t, on condition of the ETag it
// is read with: a writer that changed it since wins (drift.ErrRaced).
func (s *Set[T]) dropEntry(ctx context.Context, t *entity.Table[entity.DynamicEntity], k drift.Key) error {
	entry, err := t.Get(ctx, k.PartitionKey, k.RowKey)
	if errors.Is(err, entity.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := t.Delete(ctx, k.PartitionKey, k.RowKey, entry.ETag); err != nil {
		if changedSince(err) {
			return indexset.Raced(err)
		}
		return err
	}
	return nil
}

// Rebuild checks (as Check) and repairs each finding as it is found
// (as Repair), while writers may keep writing. It returns what it saw:
// Summary.Repaired counts the repairs made; findings whose repair lost to
// a writer are counted but not repaired (check again), as are
// drift.Duplicate findings, which no repair changes. A second Rebuild
// right after the first, with no writer in between, repairs nothing
// (TestDuplicateUniqueValue). A bad row (see Check) does not stop it: it
// checks and repairs everything else and then returns the bad rows'
// errors, joined, with Summary.Next "" (TestOneBadRow). On an error,
// Summary.Next resumes the rebuild where it stopped; so does the last
// token given to opts.Checkpoint, for a rebuild whose process died.
func (s *Set[T]) Rebuild(ctx context.Context, opts CheckOptions) (drift.Summary, error) {
	if err := s.ok(); err != nil {
		return drift.Summary{}, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return drift.Summary{}, err
	}
	var sum drift.Summary
	last := opts.Resume
	user := opts.Checkpoint
	opts.Checkpoint = func(t string) {
		last = t
		if user != nil {
			user(t)
		}
	}
	var rows []error
	for f, err := range s.check(ctx, opts, &sum, &rows) {
		if err != nil {
			sum.Next = last
			return sum, err
		}
		if f.Kind == drift.Duplicate {
			continue // counted; no repair changes it
		}
		if err := s.Repair(ctx, f); err != nil {
			switch {
			case errors.Is(err, drift.ErrRaced):
				continue
			case badRow(err):
				rows = append(rows, err) // a primary made undecodable since
				continue
			}
			sum.Next = f.Resume
			return sum, err
		}
		sum.Repaired++
	}
	return sum, joinRows(rows)
}

// badRow reports an error of one entity that no retry fixes.
func badRow(err error) bool { return indexset.BadRow[pkg](err) }

// joinRows joins the errors of bad rows, the first ten in full.
func joinRows(rows []error) error { return indexset.JoinRows[pkg](rows) }
