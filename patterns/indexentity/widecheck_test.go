package indexentity_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestWideCheckReadsListsOnce: employees of five departments share one
// city, so the primaries of every partition name the same TableWide list
// (one bucket). A check of the five partitions reads each partition once
// and the list once, not once per partition: six queries, counted as the
// service answered them. Its verdict is unchanged: no drift, then the
// one member taken off the list around the Set is found Missing.
func TestWideCheckReadsListsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	answered := &patterntest.Answered{}
	w := newWideWorld(t, 1)
	s, p := w.set(t, env.With(answered), patterntest.Fast())
	depts := []string{"HR", "IT", "Ops", "Sales", "Support"}
	for _, dept := range depts {
		for _, rk := range []string{"000001", "000002"} {
			if err := s.Insert(ctx, &Employee{PartitionKey: dept, RowKey: rk, City: "Oslo"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := patterntest.Drain(ctx, p, w.qs); err != nil {
		t.Fatal(err)
	}
	answered.Reset()
	if fs := findings(t, s, indexentity.CheckOptions{Partitions: depts}); len(fs) != 0 {
		t.Fatalf("findings after the queue drained: %v", fs)
	}
	if q, n := answered.Count(cost.Table, cost.OpQuery), answered.Total(); q != len(depts)+1 || n != q {
		t.Errorf("the check made %d queries (%d requests), want %d: a scan per partition and the list once", q, n, len(depts)+1)
	}
	// The verdict per partition still holds: IT's 000002, deleted
	// through the Set and written again beside it, is Missing.
	if err := s.Delete(ctx, "IT", "000002", ""); err != nil {
		t.Fatal(err)
	}
	if err := patterntest.Drain(ctx, p, w.qs); err != nil {
		t.Fatal(err)
	}
	if err := w.emps.Insert(ctx, &Employee{PartitionKey: "IT", RowKey: "000002", City: "Oslo"}); err != nil {
		t.Fatal(err)
	}
	fs := findings(t, s, indexentity.CheckOptions{Partitions: depts})
	if len(fs) != 1 || fs[0].Kind != drift.Missing || fs[0].Primary.PartitionKey != "IT" || fs[0].Primary.RowKey != "000002" {
		t.Errorf("findings of a primary written around the Set: %v", fs)
	}
}
