package denormalize_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

func findings(t *testing.T, c *denormalize.Copies[Department, Employee], opts denormalize.CheckOptions) []string {
	t.Helper()
	var out []string
	for f, err := range c.Check(context.Background(), opts) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%v %s %s<-%s", f.Kind, f.Index, f.Entry.RowKey, f.Primary.RowKey))
	}
	slices.Sort(out)
	return out
}

// TestDrift corrupts copies by hand — one changed, one removed, one kept
// for a manager deleted behind the package's back, one kept by a
// department that names no manager — and checks that Check finds exactly
// those, that a Rebuild killed half-way resumes and repairs them all, and
// that nothing is left.
func TestDrift(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGuide(t, env, denormalize.Config{})
	parts := []string{"Marketing", "Sales"}
	for _, pk := range parts {
		for i := range 4 {
			if err := g.copies.InsertSource(ctx, &Employee{PartitionKey: pk, RowKey: empID(i), Name: fmt.Sprint(pk, i), Phone: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
			d := Department{PartitionKey: pk, RowKey: fmt.Sprint(deptPrefix, i), ManagerID: empID(i)}
			if i == 3 {
				d.ManagerID = ""
			}
			if err := g.copies.InsertTarget(ctx, &d); err != nil {
				t.Fatal(err)
			}
		}
	}
	opts := denormalize.CheckOptions{Partitions: parts}
	if got := findings(t, g.copies, opts); len(got) != 0 {
		t.Fatalf("drift before any corruption: %v", got)
	}
	if got := findings(t, g.copies, denormalize.CheckOptions{}); len(got) != 0 {
		t.Fatalf("drift in the whole table before any corruption: %v", got)
	}

	// Corrupt Sales by hand.
	edit := func(rk string, f func(*entity.DynamicEntity)) {
		d, err := g.bags.Get(ctx, "Sales", rk)
		if err != nil {
			t.Fatal(err)
		}
		f(&d)
		if err := g.bags.Update(ctx, &d, entity.Replace); err != nil {
			t.Fatal(err)
		}
	}
	edit(deptPrefix+"0", func(d *entity.DynamicEntity) { d.Set("ManagerPhone", "999") })
	edit(deptPrefix+"1", func(d *entity.DynamicEntity) {
		delete(d.Properties, "ManagerName")
		delete(d.Properties, "ManagerPhone")
	})
	if err := g.emps.Delete(ctx, "Sales", empID(2), entity.AnyETag); err != nil {
		t.Fatal(err)
	}
	edit(deptPrefix+"3", func(d *entity.DynamicEntity) { d.Set("ManagerName", "ghost") })

	want := []string{
		"missing manager dept 1<-empid 000001",
		"orphan manager dept 2<-empid 000002",
		"orphan manager dept 3<-",
		"stale manager dept 0<-empid 000000",
	}
	if got := findings(t, g.copies, opts); !slices.Equal(got, want) {
		t.Errorf("Check found\n%v\nwant\n%v", got, want)
	}
	if got := findings(t, g.copies, denormalize.CheckOptions{}); !slices.Equal(got, want) {
		t.Errorf("a whole-table Check found\n%v\nwant\n%v", got, want)
	}

	// A rebuild killed after its first partition, then resumed.
	kctx, kill := context.WithCancel(ctx)
	first := denormalize.CheckOptions{Partitions: parts, Checkpoint: func(string) { kill() }}
	sum, err := g.copies.Rebuild(kctx, first)
	if err == nil || sum.Next == "" {
		t.Fatalf("the killed rebuild: %+v, %v", sum, err)
	}
	if sum.Repaired != 0 {
		t.Errorf("Marketing had nothing to repair, the killed rebuild repaired %d", sum.Repaired)
	}
	sum, err = g.copies.Rebuild(ctx, denormalize.CheckOptions{Partitions: parts, Resume: sum.Next})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Drift() != 4 || sum.Repaired != 4 || sum.Missing != 1 || sum.Orphans != 2 || sum.Stale != 1 {
		t.Errorf("the resumed rebuild: %+v", sum)
	}
	if got := findings(t, g.copies, opts); len(got) != 0 {
		t.Errorf("drift after the rebuild: %v", got)
	}
	g.check(t, "Sales")
	if sum, err := g.copies.Rebuild(ctx, opts); err != nil || sum.Repaired != 0 {
		t.Errorf("a second rebuild: %+v, %v", sum, err)
	}

	for _, bad := range []string{"x", "dn1.!!", "dn1.eyJ4IjoxfQ", "dn1.eyJwIjotMX0"} {
		for _, err := range g.copies.Check(ctx, denormalize.CheckOptions{Resume: bad}) {
			if !errors.Is(err, denormalize.ErrInvalidToken) {
				t.Errorf("resume token %q: %v", bad, err)
			}
		}
	}
}

// TestDriftWhileFanningOut checks that an OtherPartition copy whose
// fan-out has not run yet is reported, and repaired by the fan-out.
func TestDriftWhileFanningOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDirectory(t, env)
	d.seed(t, "Sales", 3, "CC-1")
	p, managers, centers := d.over(t, env, patterntest.Crashy(), denormalize.Config{})
	if _, err := centers.ModifySource(ctx, "departments", "Sales", func(e *Entry) error { e.CostCenter = "CC-2"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	var stale []drift.Finding
	for f, err := range centers.Check(ctx, denormalize.CheckOptions{Partitions: []string{"Sales"}}) {
		if err != nil {
			t.Fatal(err)
		}
		stale = append(stale, f)
	}
	if len(stale) != 3 || stale[0].Kind != drift.Stale || stale[0].Entry.Table != d.emps.Name() || stale[0].Primary.RowKey != "Sales" {
		t.Errorf("before the fan-out: %v", stale)
	}
	for f, err := range managers.Check(ctx, denormalize.CheckOptions{}) {
		t.Errorf("the managers' copies drifted: %v %v", f, err)
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := patterntest.Drain(dctx, p, d.qs); err != nil {
		t.Fatal(err)
	}
	for f, err := range centers.Check(ctx, denormalize.CheckOptions{}) {
		t.Errorf("after the fan-out: %v %v", f, err)
	}
}
