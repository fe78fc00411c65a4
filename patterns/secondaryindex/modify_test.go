package secondaryindex_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// retrySet is localSet with Config.Retry set to r.
func retrySet(t testing.TB, tbl *entity.Table[Employee], r entity.RetryPolicy) *secondaryindex.Set[Employee] {
	t.Helper()
	s, err := secondaryindex.New(tbl, secondaryindex.Config{PrimaryPrefix: "empid_", Retry: r},
		emailIndex(secondaryindex.SamePartition), nameIndex(secondaryindex.SamePartition))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestModifyMode checks that Modify writes the primary whole: Merge and
// unknown modes are refused before any request, Replace and 0 accepted.
func TestModifyMode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	meter := cost.NewMeter()
	s := localSet(t, patterntest.View[Employee](t, env.With(meter.Policy()), tbl))
	jones := Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "Jones", Email: "jonesj@contoso.com", Age: 34}
	if err := s.Insert(ctx, &jones); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []entity.UpdateMode{entity.Merge, 7} {
		before := meter.Snapshot()
		called := false
		_, err := s.Modify(ctx, "Sales", empid(1), func(e *Employee) error { called = true; e.Age++; return nil }, entity.ModifyOptions{Mode: mode})
		var me *secondaryindex.ModeError
		if !errors.As(err, &me) || !errors.Is(err, entity.ErrInvalid) || me.Mode != mode {
			t.Errorf("mode %d: %v, want a *ModeError matching entity.ErrInvalid", mode, err)
		}
		if n := meter.Snapshot().Sub(before).Total(); n != 0 || called {
			t.Errorf("mode %d: %d requests sent, change called: %v; want none", mode, n, called)
		}
	}
	for _, mode := range []entity.UpdateMode{0, entity.Replace} {
		got, err := s.Modify(ctx, "Sales", empid(1), func(e *Employee) error { e.Age++; return nil }, entity.ModifyOptions{Mode: mode})
		if err != nil {
			t.Fatalf("mode %d: %v", mode, err)
		}
		if got.Age != jones.Age+1 || got.Email != jones.Email {
			t.Errorf("mode %d wrote %+v", mode, got)
		}
		jones = got
	}
	if jones.Age != 36 {
		t.Errorf("age %d after two changes, want 36", jones.Age)
	}
}

// TestModifyRetry checks that opts.Retry bounds Modify's rounds when set
// and that its zero value means Config.Retry: a writer that changes the
// primary between Modify's read and its transaction costs a round.
func TestModifyRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	other := localSet(t, tbl)
	jones := Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "Jones", Email: "jonesj@contoso.com", Age: 30}
	if err := other.Insert(ctx, &jones); err != nil {
		t.Fatal(err)
	}
	// raced returns a change that sets the email to email, after another
	// writer added a year to the age the first `races` times it is called.
	raced := func(races int, email string, calls *int) func(*Employee) error {
		return func(e *Employee) error {
			*calls++
			if *calls <= races {
				if _, err := other.Modify(ctx, "Sales", empid(1), func(e *Employee) error { e.Age++; return nil }, entity.ModifyOptions{}); err != nil {
					return err
				}
			}
			e.Email = email
			return nil
		}
	}
	stored := func() Employee {
		t.Helper()
		e, err := tbl.Get(ctx, "Sales", empid(1))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	defaults := retrySet(t, tbl, entity.RetryPolicy{})
	once := retrySet(t, tbl, entity.RetryPolicy{Attempts: 1})
	cases := []struct {
		name  string
		s     *secondaryindex.Set[Employee]
		opts  entity.ModifyOptions
		races int
		fails bool
	}{
		{"opts.Retry.Attempts=1 overrides Config's default", defaults, entity.ModifyOptions{Retry: entity.RetryPolicy{Attempts: 1}}, 1, true},
		{"zero opts.Retry means Config's default (10 rounds)", defaults, entity.ModifyOptions{}, 3, false},
		{"zero opts.Retry means Config.Retry.Attempts=1", once, entity.ModifyOptions{}, 1, true},
		{"opts.Retry.Attempts=3 overrides Config.Retry.Attempts=1", once, entity.ModifyOptions{Retry: entity.RetryPolicy{Attempts: 3}}, 2, false},
	}
	for i, c := range cases {
		before := stored()
		email := "jones" + string(rune('a'+i)) + "@contoso.com"
		calls := 0
		got, err := c.s.Modify(ctx, "Sales", empid(1), raced(c.races, email, &calls), c.opts)
		after := stored()
		if after.Age != before.Age+int32(c.races) {
			t.Errorf("%s: age %d, want the other writer's %d", c.name, after.Age, before.Age+int32(c.races))
		}
		if c.fails {
			if !errors.Is(err, entity.ErrContention) {
				t.Errorf("%s: %v, want entity.ErrContention", c.name, err)
			}
			if calls != 1 || after.Email != before.Email {
				t.Errorf("%s: %d rounds, email %q; want 1 round and the email kept", c.name, calls, after.Email)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if calls != c.races+1 || got.Email != email || after.Email != email || got.ETag != after.ETag {
			t.Errorf("%s: %d rounds, got %+v, stored %+v; want %d rounds and email %q", c.name, calls, got, after, c.races+1, email)
		}
	}
	// The refused changes left no entries: only the last email is indexed.
	want := []string{"Sales/email_jonesd@contoso.com", "Sales/empid_000001", "Sales/name_Jones empid_000001"}
	if got := rowKeys(t, tbl, ""); !slices.Equal(got, want) {
		t.Errorf("stored %q, want %q", got, want)
	}
	if fs := findings(t, defaults, secondaryindex.CheckOptions{}); len(fs) != 0 {
		t.Errorf("drift: %v", fs)
	}
}
