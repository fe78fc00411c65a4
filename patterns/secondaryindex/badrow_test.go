package secondaryindex_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestOneBadRow: among employees and entries the Set wrote, one employee
// is given an Age that is not a number and one entry a FirstName that is
// not a string, by writes around the Set. Neither stops the others: a
// lookup yields the bad entry's (or, verifying, the bad employee's) error
// naming its keys and goes on with the rest; Check yields the bad
// employee's error and goes on to report the drift made elsewhere; Rebuild
// repairs all of it, leaves the bad employee's entries alone, returns the
// bad row's error with a complete Summary, and a second Rebuild repairs
// nothing. States are read with a raw client.
func TestOneBadRow(t *testing.T) {
	t.Parallel()
	for _, placement := range []secondaryindex.Placement{secondaryindex.SamePartition, secondaryindex.OtherPartition} {
		t.Run(placement.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			tbl := employees(t, env)
			raw := rawTable(t, tbl.Name())
			var s *secondaryindex.Set[Employee]
			settle := func() {}
			epk := map[string]string{"email": "Sales", "name": "Sales"}
			if placement == secondaryindex.SamePartition {
				s = localSet(t, tbl)
			} else {
				qs := patterntest.Queues(t, env, 1)
				s, _ = remoteSet(t, env, qs, tbl, nil, fast())
				settle = func() {
					if err := drainSet(ctx, t, env, qs, tbl); err != nil {
						t.Fatal(err)
					}
				}
				epk = map[string]string{"email": "email_Sales", "name": "name_Sales"}
			}
			for i := range 5 {
				e := Employee{PartitionKey: "Sales", RowKey: empid(i), FirstName: "F", LastName: "Jones", Email: string(rune('a'+i)) + "@x.com"}
				if err := s.Insert(ctx, &e); err != nil {
					t.Fatal(err)
				}
			}
			settle()
			rawMerge(t, raw, "Sales", empid(2), map[string]any{"Age": "old"})
			rawMerge(t, raw, epk["name"], "name_Jones "+empid(3), map[string]any{"FirstName": 7})
			rawDelete(t, raw, epk["email"], "email_e@x.com")

			var got []string
			var bad error
			for e, err := range s.LookupAll(ctx, "name", "Sales", "Jones", secondaryindex.LookupOptions{}) {
				if err != nil {
					bad = err
					continue
				}
				got = append(got, e.RowKey)
			}
			var se *secondaryindex.StepError
			if len(got) != 4 || !errors.As(bad, &se) || se.RowKey != "name_Jones "+empid(3) {
				t.Errorf("lookup past a bad entry: %v, %v", got, bad)
			}
			got, bad = nil, nil
			for e, err := range s.LookupPrefix(ctx, "email", "Sales", "", secondaryindex.LookupOptions{Verify: true}) {
				if err != nil {
					bad = err
					continue
				}
				got = append(got, e.RowKey)
			}
			if len(got) != 3 || !errors.As(bad, &se) || se.RowKey != empid(2) || !errors.Is(bad, entity.ErrDecode) {
				t.Errorf("verifying lookup past a bad employee: %v, %v", got, bad)
			}

			var rowErrs, missing int
			for f, err := range s.Check(ctx, secondaryindex.CheckOptions{}) {
				if err != nil {
					if !errors.As(err, &se) || se.RowKey != empid(2) {
						t.Fatalf("check: %v", err)
					}
					rowErrs++
					continue
				}
				if f.Primary.RowKey == empid(4) {
					missing++
				}
			}
			if rowErrs != 1 || missing != 1 {
				t.Errorf("check: %d bad rows, %d findings of %s; want 1 and 1", rowErrs, missing, empid(4))
			}
			for run, want := range []int{2, 0} {
				sum, err := s.Rebuild(ctx, secondaryindex.CheckOptions{})
				if !errors.As(err, &se) || se.RowKey != empid(2) || sum.Next != "" || sum.Repaired != want {
					t.Errorf("rebuild %d: %+v, %v; want %d repaired and the bad row's error", run+1, sum, err, want)
				}
			}
			if rawGet(t, raw, epk["email"], "email_e@x.com") == nil {
				t.Error("the missing entry was not rebuilt")
			}
			if rawGet(t, raw, epk["email"], "email_c@x.com") == nil || rawGet(t, raw, epk["name"], "name_Jones "+empid(2)) == nil {
				t.Error("the bad employee's entries were removed")
			}
			if e := rawGet(t, raw, epk["name"], "name_Jones "+empid(3)); e == nil || e["FirstName"] != "F" {
				t.Errorf("the bad entry: %v", e)
			}
		})
	}
}
