package secondaryindex_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestOtherPartition walks §6.2: the employee's entries in partitions
// email_Sales and name_Sales (of the same table, or of another), written
// by the queue's worker after the employee; a verified lookup never
// returns an employee whose value differs, before or after the queue
// drained; after it drained, the check finds no drift.
func TestOtherPartition(t *testing.T) {
	t.Parallel()
	for _, other := range []bool{false, true} {
		name := "same table"
		if other {
			name = "entries table"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			tbl := employees(t, env)
			var entries *entity.Table[entity.DynamicEntity]
			if other {
				entries = patterntest.View[entity.DynamicEntity](t, env, employees(t, env))
			}
			qs := patterntest.Queues(t, env, 1)
			s, p := remoteSet(t, env, qs, tbl, entries, fast())
			jones := Employee{PartitionKey: "Sales", RowKey: empid(123), FirstName: "John", LastName: "Jones", Email: "jonesj@contoso.com", Age: 34}
			if err := s.Insert(ctx, &jones); err != nil {
				t.Fatal(err)
			}
			// The unique entry is written before the employee (its
			// reservation); the name entry waits for the worker.
			got, err := s.Lookup(ctx, "email", "Sales", "jonesj@contoso.com", secondaryindex.LookupOptions{Verify: true})
			if err != nil || got.RowKey != jones.RowKey || got.ETag != jones.ETag {
				t.Fatalf("verified lookup before the worker ran: %+v, %v", got, err)
			}
			if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 1 || fs[0].Index != "name" {
				t.Errorf("before the worker ran, the check found %v, want the name entry missing", fs)
			}
			dctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if err := patterntest.Drain(dctx, p, qs); err != nil {
				t.Fatal(err)
			}
			if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
				t.Fatalf("drift after the queue drained: %v", fs)
			}
			var names []string
			for e, err := range s.LookupAll(ctx, "name", "Sales", "Jones", secondaryindex.LookupOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, e.RowKey+" "+e.FirstName)
			}
			if !slices.Equal(names, []string{"empid_000123 John"}) {
				t.Errorf("LookupAll Jones = %q", names)
			}

			// A new email: until the worker runs, the old entry still
			// finds Jones without Verify, never with it.
			if _, err := s.Modify(ctx, "Sales", jones.RowKey, func(e *Employee) error {
				e.Email, e.LastName = "john@contoso.com", "Jonas"
				return nil
			}, entity.ModifyOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Lookup(ctx, "email", "Sales", "jonesj@contoso.com", secondaryindex.LookupOptions{Verify: true}); !errors.Is(err, entity.ErrNotFound) {
				t.Errorf("verified lookup of the old email: %v", err)
			}
			for e, err := range s.LookupAll(ctx, "name", "Sales", "Jones", secondaryindex.LookupOptions{Verify: true}) {
				t.Errorf("verified lookup of the old name found %+v, %v", e, err)
			}
			if err := patterntest.Drain(dctx, p, qs); err != nil {
				t.Fatal(err)
			}
			if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
				t.Fatalf("drift after the change drained: %v", fs)
			}
			if _, err := s.Lookup(ctx, "email", "Sales", "jonesj@contoso.com", secondaryindex.LookupOptions{}); !errors.Is(err, entity.ErrNotFound) {
				t.Errorf("the old email's entry is still there: %v", err)
			}
			if got, err := s.Lookup(ctx, "email", "Sales", "john@contoso.com", secondaryindex.LookupOptions{}); err != nil || got.LastName != "Jonas" {
				t.Errorf("lookup of the new email: %+v, %v", got, err)
			}

			if err := s.Delete(ctx, "Sales", jones.RowKey, ""); err != nil {
				t.Fatal(err)
			}
			if err := patterntest.Drain(dctx, p, qs); err != nil {
				t.Fatal(err)
			}
			if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
				t.Fatalf("drift after the delete drained: %v", fs)
			}
			left := rowKeys(t, tbl, "")
			if other {
				left = append(left, rowKeys(t, entries, "")...)
			}
			if len(left) != 0 {
				t.Errorf("left after the delete: %q", left)
			}
			if n := poisoned(t, qs); n != 0 {
				t.Errorf("%d messages poisoned", n)
			}
		})
	}
}

// TestMixedPlacement: the email in the employee's partition, the last
// name in another: one transaction holds the employee, its email entries
// and the outbox intent of the name's message. A verified lookup with
// Repair removes the stale name entry it skips before the worker runs.
func TestMixedPlacement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	qs := patterntest.Queues(t, env, 1)
	p, err := eventual.New(qs, nil, fast())
	if err != nil {
		t.Fatal(err)
	}
	s, err := secondaryindex.New(tbl, withProcessor(remoteConfig(nil), p), emailIndex(secondaryindex.SamePartition), nameIndex(secondaryindex.OtherPartition))
	if err != nil {
		t.Fatal(err)
	}
	e := Employee{PartitionKey: "Sales", RowKey: empid(1), FirstName: "John", LastName: "Jones", Email: "jones@contoso.com"}
	if err := s.Insert(ctx, &e); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := patterntest.Drain(dctx, p, qs); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Modify(ctx, "Sales", empid(1), func(e *Employee) error {
		e.Email, e.LastName = "jonas@contoso.com", "Jonas"
		return nil
	}, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	// The email changed with the employee; the name waits for the worker.
	if got, err := s.Lookup(ctx, "email", "Sales", "jonas@contoso.com", secondaryindex.LookupOptions{}); err != nil || got.LastName != "Jonas" {
		t.Errorf("the new email: %+v, %v", got, err)
	}
	stale := 0
	for _, err := range s.LookupAll(ctx, "name", "Sales", "Jones", secondaryindex.LookupOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		stale++
	}
	for e, err := range s.LookupAll(ctx, "name", "Sales", "Jones", secondaryindex.LookupOptions{Verify: true, Repair: true}) {
		t.Errorf("a verified lookup of the old name returned %+v, %v", e, err)
	}
	for e, err := range s.LookupAll(ctx, "name", "Sales", "Jones", secondaryindex.LookupOptions{}) {
		t.Errorf("the repaired old name entry is still there: %+v, %v", e, err)
	}
	if stale != 1 {
		t.Errorf("before the worker ran, the old name had %d entries, want 1 (stale)", stale)
	}
	if err := patterntest.Drain(dctx, p, qs); err != nil {
		t.Fatal(err)
	}
	if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
		t.Fatalf("drift: %v", fs)
	}
	if err := s.Delete(ctx, "Sales", empid(1), ""); err != nil {
		t.Fatal(err)
	}
	if err := patterntest.Drain(dctx, p, qs); err != nil {
		t.Fatal(err)
	}
	if left := rowKeys(t, tbl, ""); len(left) != 0 {
		t.Errorf("left after the delete: %q", left)
	}
}
