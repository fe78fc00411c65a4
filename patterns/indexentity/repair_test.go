package indexentity_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/indexentity"
)

// TestRepairTouchesOnlyItsList: employee 000006 holds "Hall", whose list
// is damaged, and a readable list "Ghost" names it too. Repairing the
// Orphan finding in Ghost's list takes 000006 off it and leaves Hall's
// damaged list as it was (it is a finding of its own), in every
// placement; then a Rebuild repairs the rest, and a second Rebuild finds
// nothing. The lists are read back with raw clients.
func TestRepairTouchesOnlyItsList(t *testing.T) {
	t.Parallel()
	for _, c := range driftCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, c)
			f.insert(t,
				Employee{PartitionKey: "Sales", RowKey: "000001", LastName: "Jones"},
				Employee{PartitionKey: "Sales", RowKey: "000006", LastName: "Hall"},
			)
			f.setList(t, "Sales", "Hall", ptr("garbage"))
			f.setList(t, "Sales", "Ghost", ptr("000006\n"))
			hall, _ := f.rawList(t, "Sales", "Hall")

			var orphan *drift.Finding
			for _, x := range findings(t, f.s, indexentity.CheckOptions{}) {
				if x.Kind == drift.Orphan && x.Primary.RowKey == "000006" {
					orphan = &x
				}
			}
			if orphan == nil {
				t.Fatal("no orphan finding for 000006 in Ghost's list")
			}
			if err := f.s.Repair(ctx, *orphan); err != nil {
				t.Fatalf("Repair of the orphan: %v", err)
			}
			if got, ok := f.rawList(t, "Sales", "Ghost"); ok && got != "tablekit.indexentity.v1\n" {
				t.Errorf("Ghost's list after the repair: %q", got)
			}
			if got, _ := f.rawList(t, "Sales", "Hall"); got != hall {
				t.Errorf("Hall's list changed from %q to %q", hall, got)
			}

			sum, err := f.s.Rebuild(ctx, indexentity.CheckOptions{})
			if err != nil || sum.Stale != 1 || sum.Repaired == 0 {
				t.Fatalf("Rebuild: %+v, %v", sum, err)
			}
			again, err := f.s.Rebuild(ctx, indexentity.CheckOptions{})
			if err != nil || again.Drift() != 0 || again.Repaired != 0 {
				t.Errorf("a second Rebuild: %+v, %v", again, err)
			}
			if got, err := f.s.Members(ctx, "lastname", "Sales", "Hall"); err != nil || !slices.Equal(got, []string{"000006"}) {
				t.Errorf("Hall's list: %v, %v", got, err)
			}
		})
	}
}
