package secondaryindex_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// seedLocal writes n employees into each of the departments.
func seedLocal(t testing.TB, s *secondaryindex.Set[Employee], depts []string, n int) {
	t.Helper()
	for _, d := range depts {
		for i := range n {
			e := Employee{PartitionKey: d, RowKey: empid(i), FirstName: "F", LastName: []string{"Jones", "Smith"}[i%2], Email: fmt.Sprintf("%s%d@contoso.com", d, i), Age: int32(20 + i)}
			if err := s.Insert(context.Background(), &e); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// corrupt breaks the index of partition pk by hand — deletes an entry,
// changes one, adds an orphan — and returns the findings a check must
// report, in its order.
func corrupt(t testing.TB, bags *entity.Table[entity.DynamicEntity], pk string) []drift.Finding {
	t.Helper()
	ctx := context.Background()
	missing := "email_" + strings.ToLower(pk) + "3@contoso.com"
	if _, err := bags.DeleteIfExists(ctx, pk, missing); err != nil {
		t.Fatal(err)
	}
	stale := "name_Smith " + empid(5)
	e, err := bags.Get(ctx, pk, stale)
	if err != nil {
		t.Fatal(err)
	}
	e.Set("FirstName", "Mallory")
	if err := bags.Update(ctx, &e, entity.Replace); err != nil {
		t.Fatal(err)
	}
	orphan := (&entity.DynamicEntity{PartitionKey: pk, RowKey: "email_ghost@contoso.com"}).
		Set(secondaryindex.PropPrimaryPK, pk).Set(secondaryindex.PropPrimaryRK, empid(999)).Set("FirstName", "Ghost")
	if err := bags.Insert(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	return []drift.Finding{ // in RowKey order
		{Kind: drift.Orphan, Index: "email", Primary: drift.Key{PartitionKey: pk, RowKey: empid(999)}, Entry: drift.Key{PartitionKey: pk, RowKey: orphan.RowKey}},
		{Kind: drift.Missing, Index: "email", Primary: drift.Key{PartitionKey: pk, RowKey: empid(3)}, Entry: drift.Key{PartitionKey: pk, RowKey: missing}},
		{Kind: drift.Stale, Index: "name", Primary: drift.Key{PartitionKey: pk, RowKey: empid(5)}, Entry: drift.Key{PartitionKey: pk, RowKey: stale}},
	}
}

// same compares findings by what they say, not their detail or token.
func same(got, want []drift.Finding) bool {
	strip := func(fs []drift.Finding) []drift.Finding {
		out := make([]drift.Finding, len(fs))
		for i, f := range fs {
			f.Detail, f.Resume = "", ""
			out[i] = f
		}
		return out
	}
	return inOrder(findingLines(strip(got)), findingLines(strip(want)))
}

// TestCheckFindsCorruption corrupts two departments' indexes by hand:
// the check reports exactly what was done, with the whole-table scan and
// with a list of partitions; Rebuild repairs it; the check then finds
// nothing and the lookups are right.
func TestCheckFindsCorruption(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	s := localSet(t, tbl)
	seedLocal(t, s, []string{"Marketing", "Sales"}, 8)
	bags := patterntest.View[entity.DynamicEntity](t, env, tbl)
	want := append(corrupt(t, bags, "Marketing"), corrupt(t, bags, "Sales")...)

	if got := findings(t, s, secondaryindex.CheckOptions{}); !same(got, want) {
		t.Fatalf("whole-table check found\n%v\nwant\n%v", got, want)
	}
	if got := findings(t, s, secondaryindex.CheckOptions{Partitions: []string{"Sales"}}); !same(got, want[3:]) {
		t.Fatalf("check of Sales found %v", got)
	}
	// Every finding's token resumes at its partition.
	fs := findings(t, s, secondaryindex.CheckOptions{})
	// (In no key order, under the Cosmos DB profile, Sales's findings
	// need not be the fourth to sixth: see the package doc.)
	i := slices.IndexFunc(fs, func(f drift.Finding) bool { return f.Primary.PartitionKey == "Sales" })
	if got := findings(t, s, secondaryindex.CheckOptions{Resume: fs[i].Resume}); !same(got, want[3:]) {
		t.Fatalf("check resumed from a Sales finding found %v", got)
	}
	sum, err := s.Rebuild(ctx, secondaryindex.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Drift() != 6 || sum.Repaired != 6 || sum.Missing != 2 || sum.Stale != 2 || sum.Orphans != 2 || sum.Next != "" {
		t.Errorf("rebuild summary %+v", sum)
	}
	if sum.Scanned < 2*8*3 {
		t.Errorf("rebuild scanned %d entities", sum.Scanned)
	}
	if got := findings(t, s, secondaryindex.CheckOptions{}); len(got) != 0 {
		t.Fatalf("drift after the rebuild: %v", got)
	}
	checkLookups(t, s, tbl, "Sales")
	checkLookups(t, s, tbl, "Marketing")
	if _, err := s.Lookup(ctx, "email", "Sales", "ghost@contoso.com", secondaryindex.LookupOptions{}); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("the orphan survived: %v", err)
	}
}

// TestRebuildResumes kills a rebuild half-way (every request after the
// kill fails) and resumes it from the last token its Checkpoint got: the
// resumed rebuild starts there, not at the beginning, and finishes the
// repair. (Summary.Next, which a rebuild that returns gives, would do as
// well; a process that died has only its checkpoints.)
func TestRebuildResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	s := localSet(t, tbl)
	depts := []string{"D0", "D1", "D2", "D3", "D4", "D5"}
	seedLocal(t, s, depts, 6)
	bags := patterntest.View[entity.DynamicEntity](t, env, tbl)
	for _, d := range depts {
		corrupt(t, bags, d)
	}
	full, err := s.Rebuild(ctx, secondaryindex.CheckOptions{Partitions: []string{"none"}})
	if err != nil || full.Drift() != 0 {
		t.Fatal(full, err)
	}

	// The first rebuild dies after 25 requests: it has repaired some
	// partitions, not all.
	k := crashtest.NewKiller(25)
	ks := localSet(t, patterntest.View[Employee](t, env.With(k), tbl))
	var last string
	sum, err := ks.Rebuild(ctx, secondaryindex.CheckOptions{Checkpoint: func(tok string) { last = tok }})
	if err == nil || !k.Fired() {
		t.Fatalf("the killed rebuild returned %v (%+v)", err, sum)
	}
	if last == "" || sum.Next == "" {
		t.Fatalf("no checkpoint (%q), or no Next (%q)", last, sum.Next)
	}
	if sum.Repaired == 0 || sum.Repaired >= 3*len(depts) {
		t.Fatalf("the killed rebuild repaired %d of %d", sum.Repaired, 3*len(depts))
	}
	resume := secondaryindex.CheckOptions{Resume: last}
	if env.Cosmos() {
		// In no key order a resumed scan skips rows (the package doc's
		// "Azurite and Cosmos DB"): there, run the rebuild from the start.
		resume = secondaryindex.CheckOptions{}
	}
	rest, err := s.Rebuild(ctx, resume)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Repaired+rest.Repaired != 3*len(depts) {
		t.Errorf("repaired %d then %d, want %d in all", sum.Repaired, rest.Repaired, 3*len(depts))
	}
	if got := findings(t, s, secondaryindex.CheckOptions{}); len(got) != 0 {
		t.Fatalf("drift after the resumed rebuild: %v", got)
	}
}

// TestRebuildWhileWriting runs a rebuild while 8 writers change the
// indexed values: the rebuild's repairs are guarded by the primaries'
// ETags, so they never write a copy of a version that changed: the only
// drift left afterwards is the corruption whose repair lost a race, and a
// second rebuild leaves none.
func TestRebuildWhileWriting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	s := localSet(t, tbl)
	depts := []string{"D0", "D1", "D2"}
	seedLocal(t, s, depts, 8)
	bags := patterntest.View[entity.DynamicEntity](t, env, tbl)
	var corrupted []drift.Finding
	for _, d := range depts {
		corrupted = append(corrupted, corrupt(t, bags, d)...)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				d, id := depts[(w+i)%len(depts)], empid((w*3+i)%8)
				_, err := s.Modify(ctx, d, id, func(e *Employee) error {
					e.LastName = []string{"Jones", "Smith", "Brown"}[(w+i)%3]
					e.Age++
					return nil
				}, entity.ModifyOptions{})
				if err != nil && !errors.Is(err, secondaryindex.ErrDuplicate) && !errors.Is(err, entity.ErrContention) {
					t.Errorf("writer: %v", err)
					return
				}
			}
		})
	}
	sum, err := s.Rebuild(ctx, secondaryindex.CheckOptions{})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	left := findings(t, s, secondaryindex.CheckOptions{})
	t.Logf("rebuild %+v; %d findings left", sum, len(left))
	for _, f := range left {
		ok := false
		for _, c := range corrupted {
			ok = ok || f.Entry == c.Entry
		}
		if !ok {
			t.Errorf("drift the corruption did not make: %v", f)
		}
	}
	if _, err := s.Rebuild(ctx, secondaryindex.CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := findings(t, s, secondaryindex.CheckOptions{}); len(got) != 0 {
		t.Fatalf("drift after the second rebuild: %v", got)
	}
}

// TestCheckFindsStrays: entries of indexes in other partitions whose
// primaries' partition has no primary at all — no partition's check
// reads them — are found by the whole-table check, in the primaries'
// table or in a table of their own, and rebuilt away.
func TestCheckFindsStrays(t *testing.T) {
	t.Parallel()
	for _, other := range []bool{false, true} {
		t.Run(map[bool]string{false: "same table", true: "entries table"}[other], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			tbl := employees(t, env)
			var entries *entity.Table[entity.DynamicEntity]
			store := patterntest.View[entity.DynamicEntity](t, env, tbl)
			if other {
				entries = patterntest.View[entity.DynamicEntity](t, env, employees(t, env))
				store = entries
			}
			qs := patterntest.Queues(t, env, 1)
			s, p := remoteSet(t, env, qs, tbl, entries, fast())
			e := Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "Jones", Email: "jones@contoso.com"}
			if err := s.Insert(ctx, &e); err != nil {
				t.Fatal(err)
			}
			dctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if err := patterntest.Drain(dctx, p, qs); err != nil {
				t.Fatal(err)
			}
			for _, pk := range []string{"Nowhere", "Sales"} {
				stray := (&entity.DynamicEntity{PartitionKey: "name_" + pk, RowKey: "name_Ghost " + empid(7)}).
					Set(secondaryindex.PropPrimaryPK, pk).Set(secondaryindex.PropPrimaryRK, empid(7))
				if err := store.Insert(ctx, stray); err != nil {
					t.Fatal(err)
				}
			}
			got := findings(t, s, secondaryindex.CheckOptions{})
			if len(got) != 2 || got[0].Kind != drift.Orphan || got[1].Kind != drift.Orphan {
				t.Fatalf("found %v, want the two strays", got)
			}
			table := ""
			if other {
				table = entries.Name()
			}
			for _, f := range got {
				if f.Entry.Table != table || f.Entry.RowKey != "name_Ghost "+empid(7) {
					t.Errorf("finding %v in table %q", f, f.Entry.Table)
				}
			}
			sum, err := s.Rebuild(ctx, secondaryindex.CheckOptions{})
			if err != nil || sum.Repaired != 2 {
				t.Fatalf("rebuild %+v, %v", sum, err)
			}
			if got := findings(t, s, secondaryindex.CheckOptions{}); len(got) != 0 {
				t.Fatalf("drift after the rebuild: %v", got)
			}
		})
	}
}
