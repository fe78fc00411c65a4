package secondaryindex_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestDuplicateUniqueValue gives a unique email to a second employee by
// a write around the Set (a raw merge of empid_2's Email), in both
// placements. Rebuild keeps the entry with the employee it names — it
// never moves it from one holder to the other and back — and reports
// the second holder as a drift.Duplicate finding it does not repair: a
// second and a third Rebuild repair nothing, and the lookup finds the
// same employee every time. When the entry is gone, the holder with the
// lowest RowKey gets it. The final state is read with a raw client.
func TestDuplicateUniqueValue(t *testing.T) {
	t.Parallel()
	for _, placement := range []secondaryindex.Placement{secondaryindex.SamePartition, secondaryindex.OtherPartition} {
		t.Run(placement.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			tbl := employees(t, env)
			raw := rawTable(t, tbl.Name())
			var s *secondaryindex.Set[Employee]
			settle := func() {}
			epk := "Sales"
			qs := patterntest.Queues(t, env, 1)
			if placement == secondaryindex.SamePartition {
				s = localSet(t, tbl)
			} else {
				s, _ = remoteSet(t, env, qs, tbl, nil, fast())
				settle = func() {
					if err := drainSet(ctx, t, env, qs, tbl); err != nil {
						t.Fatal(err)
					}
				}
				epk = "email_Sales"
			}
			for i, email := range []string{"a@x.com", "b@x.com", "c@x.com", "d@x.com"} {
				e := Employee{PartitionKey: "Sales", RowKey: empid(i + 1), LastName: "L", Email: email}
				if err := s.Insert(ctx, &e); err != nil {
					t.Fatal(err)
				}
			}
			settle()
			// empid_2 takes a@x.com from empid_1's side; empid_3 takes
			// d@x.com, whose entry names empid_4, the higher key.
			rawMerge(t, raw, "Sales", empid(2), map[string]any{"Email": "a@x.com"})
			rawMerge(t, raw, "Sales", empid(3), map[string]any{"Email": "d@x.com"})

			holder := func(value string) string {
				t.Helper()
				e := rawGet(t, raw, epk, "email_"+value)
				if e == nil {
					return ""
				}
				rk, _ := e[secondaryindex.PropPrimaryRK].(string)
				return rk
			}
			fs := findings(t, s, secondaryindex.CheckOptions{})
			var dups []drift.Finding
			for _, f := range fs {
				if f.Kind == drift.Duplicate {
					dups = append(dups, f)
				}
			}
			if len(fs) != 4 || len(dups) != 2 || dups[0].Primary.RowKey != empid(2) || dups[1].Primary.RowKey != empid(3) {
				t.Fatalf("findings %v: want two orphans (b, c) and two duplicates (empid_2, empid_3)", fs)
			}
			if err := s.Repair(ctx, dups[0]); !errors.Is(err, secondaryindex.ErrDuplicate) {
				t.Errorf("Repair of a duplicate: %v, want ErrDuplicate", err)
			}
			for run := range 3 {
				sum, err := s.Rebuild(ctx, secondaryindex.CheckOptions{})
				if err != nil {
					t.Fatal(err)
				}
				wantRepaired := 0
				if run == 0 {
					wantRepaired = 2 // the orphans of b@x.com and c@x.com
				}
				if sum.Repaired != wantRepaired || sum.Duplicates != 2 || sum.Drift() != 2+wantRepaired || sum.Next != "" {
					t.Errorf("rebuild %d: %+v, want %d repaired and the 2 duplicates", run+1, sum, wantRepaired)
				}
				if a, d := holder("a@x.com"), holder("d@x.com"); a != empid(1) || d != empid(4) {
					t.Errorf("after rebuild %d the entries name %q and %q, want %s and %s", run+1, a, d, empid(1), empid(4))
				}
				got, err := s.Lookup(ctx, "email", "Sales", "a@x.com", secondaryindex.LookupOptions{})
				if err != nil || got.RowKey != empid(1) {
					t.Errorf("after rebuild %d a@x.com finds %q, %v", run+1, got.RowKey, err)
				}
				if h := holder("b@x.com") + holder("c@x.com"); h != "" {
					t.Errorf("after rebuild %d an orphan is left: %q", run+1, h)
				}
			}
			// The entry gone: the lowest RowKey among the holders gets it,
			// and the next rebuild repairs nothing.
			rawDelete(t, raw, epk, "email_a@x.com")
			for run, want := range []int{1, 0} {
				sum, err := s.Rebuild(ctx, secondaryindex.CheckOptions{})
				if err != nil || sum.Repaired != want || sum.Duplicates != 2 {
					t.Errorf("rebuild after the entry's delete %d: %+v, %v", run+1, sum, err)
				}
				if a := holder("a@x.com"); a != empid(1) {
					t.Errorf("the entry names %q, want %s", a, empid(1))
				}
			}
			if placement == secondaryindex.SamePartition {
				return
			}
			// A write through the Set of a holder without the entry (its
			// value unchanged): its message leaves the entry with its
			// holder, and is handled, not poisoned.
			if _, err := s.Modify(ctx, "Sales", empid(3), func(e *Employee) error { e.Age++; return nil }, entity.ModifyOptions{}); err != nil {
				t.Fatal(err)
			}
			settle()
			if n := poisoned(t, qs); n != 0 {
				t.Errorf("%d messages poisoned", n)
			}
			if d := holder("d@x.com"); d != empid(4) {
				t.Errorf("after empid_3's write the entry names %q, want %s", d, empid(4))
			}
		})
	}
}
