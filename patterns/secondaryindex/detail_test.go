package secondaryindex_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestStaleDetailNamesKeys: an entry that names another primary (written
// around the Set) is a Stale finding whose detail quotes that primary's
// keys as every error of tablekit does (PartitionKey "…", RowKey "…"),
// for a SamePartition and a TableWide index alike.
func TestStaleDetailNamesKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const want = `the entry names primary PartitionKey "Dept09", RowKey "empid_000099"`
	for _, wide := range []bool{false, true} {
		t.Run(map[bool]string{false: "SamePartition", true: "TableWide"}[wide], func(t *testing.T) {
			t.Parallel()
			tbl := employees(t, env)
			var s *secondaryindex.Set[Employee]
			epk, erk := "Sales", "email_j@contoso.com"
			if wide {
				qs := patterntest.Queues(t, env, 1)
				ws, proc := wideSet(t, qs, tbl, nil, fast())
				s = ws
				defer drainWide(t, proc, qs)
				epk = "email_" + keys.Bucket("j@contoso.com", wideBuckets)
				e := Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "Jones", Email: "j@contoso.com"}
				if err := s.Insert(ctx, &e); err != nil {
					t.Fatal(err)
				}
				drainWide(t, proc, qs)
			} else {
				s = localSet(t, tbl)
				e := Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "Jones", Email: "j@contoso.com"}
				if err := s.Insert(ctx, &e); err != nil {
					t.Fatal(err)
				}
			}
			rawMerge(t, rawTable(t, tbl.Name()), epk, erk, map[string]any{secondaryindex.PropPrimaryPK: "Dept09", secondaryindex.PropPrimaryRK: empid(99)})
			n := 0
			for _, f := range findings(t, s, secondaryindex.CheckOptions{Partitions: []string{"Sales"}}) {
				if f.Index != "email" || f.Kind != drift.Stale {
					continue
				}
				n++
				if f.Detail != want {
					t.Errorf("detail %q, want %q", f.Detail, want)
				}
			}
			if n != 1 {
				t.Errorf("%d Stale findings of the email index, want 1", n)
			}
		})
	}
}
