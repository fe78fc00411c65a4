package denormalize_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/denormalize"
)

// seedGuide inserts two employees of Sales and department "dept Sales"
// managed by the first, through g's Copies.
func seedGuide(t *testing.T, g guide) {
	t.Helper()
	ctx := context.Background()
	for _, e := range []Employee{
		{PartitionKey: "Sales", RowKey: empID(1), Name: "Jones, Jeff", Phone: "425-555-0101"},
		{PartitionKey: "Sales", RowKey: empID(2), Name: "Smith, Sue", Phone: "425-555-0102"},
	} {
		if err := g.copies.InsertSource(ctx, &e); err != nil {
			t.Fatal(err)
		}
	}
	d := Department{PartitionKey: "Sales", RowKey: "dept Sales", ManagerID: empID(1), Budget: 1000}
	if err := g.copies.InsertTarget(ctx, &d); err != nil {
		t.Fatal(err)
	}
}

// TestModifyMode checks that ModifySource and ModifyTarget write whole
// entities: Merge and unknown modes are refused before any request and
// before the change runs; Replace and 0 are accepted, and a target's copy
// that its new reference no longer names is removed.
func TestModifyMode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	g := newGuide(t, env.With(meter.Policy()), denormalize.Config{})
	seedGuide(t, g)

	for _, mode := range []entity.UpdateMode{entity.Merge, 7} {
		for _, op := range []string{"ModifySource", "ModifyTarget"} {
			before := meter.Snapshot()
			called := false
			var err error
			if op == "ModifySource" {
				_, err = g.copies.ModifySource(ctx, "Sales", empID(1), func(e *Employee) error { called = true; e.Phone = "x"; return nil }, entity.ModifyOptions{Mode: mode})
			} else {
				_, err = g.copies.ModifyTarget(ctx, "Sales", "dept Sales", func(d *Department) error { called = true; d.Budget++; return nil }, entity.ModifyOptions{Mode: mode})
			}
			var me *denormalize.ModeError
			if !errors.As(err, &me) || !errors.Is(err, entity.ErrInvalid) || me.Op != op || me.Mode != mode {
				t.Errorf("%s, mode %d: %v, want a *ModeError matching entity.ErrInvalid", op, mode, err)
			} else if want := "denormalize: " + op + " with Merge: Copies writes sources and targets whole; use Replace"; mode == entity.Merge && err.Error() != want {
				t.Errorf("%s: %q, want %q", op, err, want)
			}
			if n := meter.Snapshot().Sub(before).Total(); n != 0 || called {
				t.Errorf("%s, mode %d: %d requests sent, change called: %v; want none", op, mode, n, called)
			}
		}
	}
	for i, mode := range []entity.UpdateMode{0, entity.Replace} {
		phone := fmt.Sprintf("425-555-020%d", i)
		e, err := g.copies.ModifySource(ctx, "Sales", empID(1), func(e *Employee) error { e.Phone = phone; return nil }, entity.ModifyOptions{Mode: mode})
		if err != nil {
			t.Fatalf("ModifySource, mode %d: %v", mode, err)
		}
		if e.Phone != phone || e.Name != "Jones, Jeff" {
			t.Errorf("ModifySource, mode %d wrote %+v", mode, e)
		}
		d, err := g.depts.Get(ctx, "Sales", "dept Sales")
		if err != nil || d.ManagerPhone != phone {
			t.Errorf("ModifySource, mode %d: the department holds %+v, %v", mode, d, err)
		}
	}
	// A department that names no manager holds no copy: only a write of
	// the whole entity removes the copied properties.
	for _, mode := range []entity.UpdateMode{0, entity.Replace} {
		if _, err := g.copies.ModifyTarget(ctx, "Sales", "dept Sales", func(d *Department) error { d.ManagerID = empID(2); return nil }, entity.ModifyOptions{Mode: mode}); err != nil {
			t.Fatalf("ModifyTarget, mode %d: %v", mode, err)
		}
		d, err := g.copies.ModifyTarget(ctx, "Sales", "dept Sales", func(d *Department) error { d.ManagerID = ""; d.Budget++; return nil }, entity.ModifyOptions{Mode: mode})
		if err != nil {
			t.Fatalf("ModifyTarget, mode %d: %v", mode, err)
		}
		stored, err := g.bags.Get(ctx, "Sales", "dept Sales")
		if err != nil {
			t.Fatal(err)
		}
		_, name := stored.Properties["ManagerName"]
		_, phone := stored.Properties["ManagerPhone"]
		if d.ManagerName != "" || name || phone {
			t.Errorf("ModifyTarget, mode %d: a department without manager keeps a copy: %+v, stored %v", mode, d, stored.Properties)
		}
	}
	if d, _ := g.depts.Get(ctx, "Sales", "dept Sales"); d.Budget != 1002 {
		t.Errorf("budget %d after two changes, want 1002", d.Budget)
	}
	g.check(t, "Sales")
}

// TestModifyRetry checks that opts.Retry bounds the rounds of ModifySource
// and ModifyTarget when set, and that its zero value means Config.Retry:
// a writer that changes the entity between the read and the transaction
// costs a round.
func TestModifyRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGuide(t, env, denormalize.Config{})
	seedGuide(t, g)
	once := g.over(t, env, denormalize.Config{Retry: entity.RetryPolicy{Attempts: 1}})

	// racedSource and racedTarget return a change that another writer
	// precedes, changing the same entity, the first races times it is
	// called.
	racedSource := func(races int, phone string, calls *int) func(*Employee) error {
		return func(e *Employee) error {
			*calls++
			if *calls <= races {
				if _, err := g.copies.ModifySource(ctx, "Sales", empID(1), func(e *Employee) error { e.Edits++; return nil }, entity.ModifyOptions{}); err != nil {
					return err
				}
			}
			e.Phone = phone
			return nil
		}
	}
	racedTarget := func(races int, manager string, calls *int) func(*Department) error {
		return func(d *Department) error {
			*calls++
			if *calls <= races {
				if _, err := g.copies.ModifyTarget(ctx, "Sales", "dept Sales", func(d *Department) error { d.Budget++; return nil }, entity.ModifyOptions{}); err != nil {
					return err
				}
			}
			d.ManagerID = manager
			return nil
		}
	}
	stored := func() (Employee, Department) {
		t.Helper()
		e, err := g.emps.Get(ctx, "Sales", empID(1))
		if err != nil {
			t.Fatal(err)
		}
		d, err := g.depts.Get(ctx, "Sales", "dept Sales")
		if err != nil {
			t.Fatal(err)
		}
		return e, d
	}

	cases := []struct {
		name  string
		c     *denormalize.Copies[Department, Employee]
		opts  entity.ModifyOptions
		races int
		fails bool
	}{
		{"opts.Retry.Attempts=1 overrides Config's default", g.copies, entity.ModifyOptions{Retry: entity.RetryPolicy{Attempts: 1}}, 1, true},
		{"zero opts.Retry means Config's default (10 rounds)", g.copies, entity.ModifyOptions{}, 3, false},
		{"zero opts.Retry means Config.Retry.Attempts=1", once.copies, entity.ModifyOptions{}, 1, true},
		{"opts.Retry.Attempts=3 overrides Config.Retry.Attempts=1", once.copies, entity.ModifyOptions{Retry: entity.RetryPolicy{Attempts: 3}}, 2, false},
	}
	for i, c := range cases {
		// Each case starts with the department managed by employee 1.
		if _, err := g.copies.ModifyTarget(ctx, "Sales", "dept Sales", func(d *Department) error { d.ManagerID = empID(1); return nil }, entity.ModifyOptions{}); err != nil {
			t.Fatal(err)
		}

		// ModifySource: employee 1's new phone, and its copy.
		e0, d0 := stored()
		phone := fmt.Sprintf("425-555-03%02d", i)
		calls := 0
		got, err := c.c.ModifySource(ctx, "Sales", empID(1), racedSource(c.races, phone, &calls), c.opts)
		e1, d1 := stored()
		if e1.Edits != e0.Edits+int64(c.races) {
			t.Errorf("ModifySource, %s: edits %d, want the other writer's %d", c.name, e1.Edits, e0.Edits+int64(c.races))
		}
		if c.fails {
			if !errors.Is(err, entity.ErrContention) {
				t.Errorf("ModifySource, %s: %v, want entity.ErrContention", c.name, err)
			}
			if calls != 1 || e1.Phone != e0.Phone || d1.ManagerPhone != d0.ManagerPhone {
				t.Errorf("ModifySource, %s: %d rounds, phone %q, copy %q; want 1 round and %q kept", c.name, calls, e1.Phone, d1.ManagerPhone, e0.Phone)
			}
		} else if err != nil {
			t.Errorf("ModifySource, %s: %v", c.name, err)
		} else if calls != c.races+1 || got.Phone != phone || e1.Phone != phone || d1.ManagerPhone != phone || got.ETag != e1.ETag {
			t.Errorf("ModifySource, %s: %d rounds, got %+v, stored %+v, copy %q; want %d rounds and phone %q", c.name, calls, got, e1, d1.ManagerPhone, c.races+1, phone)
		}

		// ModifyTarget: employee 2 becomes the manager, and the copy
		// follows.
		e0, d0 = stored()
		manager := empID(2)
		calls = 0
		gotD, err := c.c.ModifyTarget(ctx, "Sales", "dept Sales", racedTarget(c.races, manager, &calls), c.opts)
		_, d1 = stored()
		if d1.Budget != d0.Budget+int64(c.races) {
			t.Errorf("ModifyTarget, %s: budget %d, want the other writer's %d", c.name, d1.Budget, d0.Budget+int64(c.races))
		}
		if c.fails {
			if !errors.Is(err, entity.ErrContention) {
				t.Errorf("ModifyTarget, %s: %v, want entity.ErrContention", c.name, err)
			}
			if calls != 1 || d1.ManagerID != empID(1) || d1.ManagerPhone != e0.Phone {
				t.Errorf("ModifyTarget, %s: %d rounds, stored %+v; want 1 round and manager %s kept with phone %q", c.name, calls, d1, empID(1), e0.Phone)
			}
		} else if err != nil {
			t.Errorf("ModifyTarget, %s: %v", c.name, err)
		} else if calls != c.races+1 || gotD.ManagerID != manager || d1.ManagerID != manager || d1.ManagerPhone != "425-555-0102" || gotD.ETag != d1.ETag {
			t.Errorf("ModifyTarget, %s: %d rounds, got %+v, stored %+v; want %d rounds and manager %q", c.name, calls, gotD, d1, c.races+1, manager)
		}
		g.check(t, "Sales")
	}
}
