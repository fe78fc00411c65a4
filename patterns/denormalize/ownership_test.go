package denormalize_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestOwnership writes sources beside the Copies, through a plain
// entity.Table of the same table, as the package doc's Ownership section
// predicts: a change of a property no relation copies is no drift; a
// change of a copied property leaves every target that refers to the
// source Stale; an insert of a source that a target already refers to
// leaves it Missing. Check reports exactly those, Rebuild repairs them,
// and a second Rebuild finds nothing; plain clients then read every copy
// agreeing.
func TestOwnership(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGuide(t, env, denormalize.Config{})
	seedGuide(t, g)
	if err := g.copies.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: "dept B", ManagerID: empID(3)}); err != nil {
		t.Fatal(err)
	}
	opts := denormalize.CheckOptions{Partitions: []string{"Sales"}}

	if _, err := g.emps.Modify(ctx, "Sales", empID(1), func(e *Employee) error { e.Title = "boss"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := findings(t, g.copies, opts); len(got) != 0 {
		t.Errorf("after a plain write of an uncopied property: %v, want no drift", got)
	}

	if _, err := g.emps.Modify(ctx, "Sales", empID(1), func(e *Employee) error { e.Phone = "425-555-0199"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := g.emps.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(3), Name: "Cy", Phone: "3"}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"missing manager dept B<-empid 000003",
		"stale manager dept Sales<-empid 000001",
	}
	if got := findings(t, g.copies, opts); !slices.Equal(got, want) {
		t.Errorf("Check after plain writes of sources found\n%v\nwant\n%v", got, want)
	}
	sum, err := g.copies.Rebuild(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Stale != 1 || sum.Missing != 1 || sum.Orphans != 0 || sum.Repaired != 2 {
		t.Errorf("Rebuild: %+v, want 1 stale and 1 missing repaired", sum)
	}
	if sum, err := g.copies.Rebuild(ctx, opts); err != nil || sum.Drift() != 0 || sum.Repaired != 0 {
		t.Errorf("a second Rebuild: %+v, %v; want nothing", sum, err)
	}
	_, depts := rawCheckGuide(t, g.emps.Name())
	if d := depts["dept Sales"]; d["ManagerPhone"] != "425-555-0199" {
		t.Errorf("dept Sales after the Rebuild: %v", d)
	}
}

// TestOwnershipOtherPartition: a source of an OtherPartition relation
// written through a plain entity.Table sends no fan-out message, so the
// copies stay behind for good: Check reports each target Stale, Rebuild
// (or Push) repairs it, and a second Rebuild finds nothing.
func TestOwnershipOtherPartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDirectory(t, env)
	d.seed(t, "Sales", 2, "CC-1")
	p, managers, _ := d.over(t, env, patterntest.Fast(), denormalize.Config{})
	if _, err := d.emps.Modify(ctx, "Sales", empID(0), func(e *Employee) error { e.Phone = "new"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	if work, _ := queued(t, d.qs); work != 0 {
		t.Errorf("a plain write queued %d messages", work)
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := patterntest.Drain(dctx, p, d.qs); err != nil {
		t.Fatal(err)
	}
	var got []string
	for f, err := range managers.Check(ctx, denormalize.CheckOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%v %s %s/%s<-%s/%s", f.Kind, f.Index, f.Entry.PartitionKey, f.Entry.RowKey, f.Primary.PartitionKey, f.Primary.RowKey))
	}
	if want := []string{"stale manager departments/Sales<-Sales/empid 000000"}; !slices.Equal(got, want) {
		t.Errorf("Check after a plain write of a source, the queue drained: %v, want %v", got, want)
	}
	sum, err := managers.Rebuild(ctx, denormalize.CheckOptions{})
	if err != nil || sum.Stale != 1 || sum.Repaired != 1 {
		t.Errorf("Rebuild: %+v, %v; want 1 stale repaired", sum, err)
	}
	if sum, err := managers.Rebuild(ctx, denormalize.CheckOptions{}); err != nil || sum.Drift() != 0 || sum.Repaired != 0 {
		t.Errorf("a second Rebuild: %+v, %v; want nothing", sum, err)
	}
	rawCheckDirectory(t, d)
}

// Phone is the payload of a message whose handler sets a manager's phone
// through the Copies, or (Leave) deletes them.
type Phone struct {
	PK, RK string
	Phone  string
	Leave  bool
}

// TestHandlerSteps runs the Copies' writes as steps of a handler of
// package eventual, each message delivered twice (enqueued twice with one
// ID, as a resent enqueue or a relay after a crash does): a ModifySource
// that sets a value, a DeleteSource (a missing source counts as deleted),
// and a Push and a Refresh (repairs that write only what differs) — each
// twice, none fails or is poisoned, and plain clients read every copy
// agreeing.
func TestHandlerSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newSameGuide(t)
	seedGuide(t, g.guide)
	p, c := g.over(t, env)
	kind := eventual.NewKind[Phone]("denormalize.test.Phone.v1")
	var runs atomic.Int32
	err := eventual.Handle(p, kind, func(ctx context.Context, m Phone) error {
		runs.Add(1)
		if m.Leave {
			return c.DeleteSource(ctx, m.PK, m.RK)
		}
		if _, err := c.ModifySource(ctx, m.PK, m.RK, func(e *Employee) error { e.Phone = m.Phone; return nil }, entity.ModifyOptions{}); err != nil {
			return err
		}
		if err := c.Push(ctx, m.PK, m.RK); err != nil {
			return err
		}
		_, err := c.Refresh(ctx, "Sales", "dept Sales")
		return err
	}, eventual.HandleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	send := func(id string, m Phone) {
		msg, err := kind.Message(m)
		if err != nil {
			t.Fatal(err)
		}
		msg.ID = id
		if err := p.Enqueue(ctx, msg, msg); err != nil {
			t.Fatal(err)
		}
	}
	send("phone", Phone{PK: "Sales", RK: empID(1), Phone: "425-555-0199"})
	send("leave", Phone{PK: "Sales", RK: empID(2), Leave: true})
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := patterntest.Drain(dctx, p, g.qs); err != nil {
		t.Fatal(err)
	}
	if n := runs.Load(); n != 4 {
		t.Errorf("the handler ran %d times, want 4 (each message twice)", n)
	}
	if _, poison := queued(t, g.qs); poison != 0 {
		t.Errorf("%d messages poisoned", poison)
	}
	emps, depts := rawCheckGuide(t, g.emps.Name())
	if _, ok := emps[empID(2)]; ok {
		t.Error("the employee who left is still there")
	}
	if d := depts["dept Sales"]; d["ManagerPhone"] != "425-555-0199" {
		t.Errorf("dept Sales: %v", d)
	}
}
