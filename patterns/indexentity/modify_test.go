package indexentity_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestModifyMode checks that Modify writes the primary whole: Merge and
// unknown modes are refused before any request, Replace and 0 accepted.
func TestModifyMode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	emps := patterntest.Table[Employee](t, env.With(meter.Policy()))
	s, err := indexentity.New(emps, indexentity.Config{}, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000152", FirstName: "Don", LastName: "Jones"}); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []entity.UpdateMode{entity.Merge, 7} {
		before := meter.Snapshot()
		called := false
		_, err := s.Modify(ctx, "Sales", "000152", func(e *Employee) error { called = true; e.LastName = "Smith"; return nil }, entity.ModifyOptions{Mode: mode})
		var me *indexentity.ModeError
		if !errors.As(err, &me) || !errors.Is(err, entity.ErrInvalid) || me.Mode != mode {
			t.Errorf("mode %d: %v, want a *ModeError matching entity.ErrInvalid", mode, err)
		}
		if n := meter.Snapshot().Sub(before).Total(); n != 0 || called {
			t.Errorf("mode %d: %d requests sent, change called: %v; want none", mode, n, called)
		}
	}
	for _, c := range []struct {
		mode entity.UpdateMode
		name string
	}{{0, "Smith"}, {entity.Replace, "Brown"}} {
		got, err := s.Modify(ctx, "Sales", "000152", func(e *Employee) error { e.LastName = c.name; return nil }, entity.ModifyOptions{Mode: c.mode})
		if err != nil {
			t.Fatalf("mode %d: %v", c.mode, err)
		}
		if got.LastName != c.name || got.FirstName != "Don" {
			t.Errorf("mode %d wrote %+v", c.mode, got)
		}
		if rks := lookup(t, s, "lastname", "Sales", c.name); !slices.Equal(rks, []string{"000152"}) {
			t.Errorf("mode %d: %s lists %v", c.mode, c.name, rks)
		}
	}
	noDrift(t, s)
}

// TestModifyRetry checks that opts.Retry bounds Modify's rounds when set
// and that its zero value means Config.Retry: a writer that changes the
// entity between Modify's read and its transaction costs a round.
func TestModifyRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	other, emps := newLocal(t, indexentity.Config{})
	if err := other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000152", FirstName: "Don", LastName: "Jones"}); err != nil {
		t.Fatal(err)
	}
	setWith := func(r entity.RetryPolicy) *indexentity.Set[Employee] {
		s, err := indexentity.New(emps, indexentity.Config{Retry: r}, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// raced returns a change that sets the last name to name, after
	// another writer appended "+" to the first name the first `races`
	// times it is called.
	raced := func(races int, name string, calls *int) func(*Employee) error {
		return func(e *Employee) error {
			*calls++
			if *calls <= races {
				if _, err := other.Modify(ctx, "Sales", "000152", func(e *Employee) error { e.FirstName += "+"; return nil }, entity.ModifyOptions{}); err != nil {
					return err
				}
			}
			e.LastName = name
			return nil
		}
	}
	stored := func() Employee {
		t.Helper()
		e, err := emps.Get(ctx, "Sales", "000152")
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	defaults := setWith(entity.RetryPolicy{})
	once := setWith(entity.RetryPolicy{Attempts: 1})
	cases := []struct {
		name  string
		s     *indexentity.Set[Employee]
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
		name := "Name" + string(rune('A'+i))
		calls := 0
		got, err := c.s.Modify(ctx, "Sales", "000152", raced(c.races, name, &calls), c.opts)
		after := stored()
		if want := before.FirstName + "++++"[:c.races]; after.FirstName != want {
			t.Errorf("%s: first name %q, want the other writer's %q", c.name, after.FirstName, want)
		}
		if c.fails {
			if !errors.Is(err, entity.ErrContention) {
				t.Errorf("%s: %v, want entity.ErrContention", c.name, err)
			}
			if calls != 1 || after.LastName != before.LastName {
				t.Errorf("%s: %d rounds, last name %q; want 1 round and the name kept", c.name, calls, after.LastName)
			}
			if rks := lookup(t, c.s, "lastname", "Sales", name); len(rks) != 0 {
				t.Errorf("%s: the refused name lists %v", c.name, rks)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if calls != c.races+1 || got.LastName != name || after.LastName != name || got.ETag != after.ETag {
			t.Errorf("%s: %d rounds, got %+v, stored %+v; want %d rounds and last name %q", c.name, calls, got, after, c.races+1, name)
		}
	}
	if rks := lookup(t, other, "lastname", "Sales", "NameD"); !slices.Equal(rks, []string{"000152"}) {
		t.Errorf("NameD lists %v", rks)
	}
	noDrift(t, other)
}
