package indextest

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// Inline runs, for each of the Other and Wide placements the adapter's
// package has, a Set whose processor is inline (eventual.NewInline): no
// queue and no worker. The writer runs the index's handler after each
// transaction, so as soon as each write returns — inserts, a change of
// value, a delete — every lookup (listed and found) returns exactly the
// holders of its value, Check finds nothing, and the store, read raw,
// holds no outbox intent: nothing was left for a worker. (The failures
// between a write's commit and its handler, which Relay finishes, are
// secondaryindex's inline tests and eventual's.)
func Inline(t *testing.T, a Adapter) {
	for _, p := range []Placement{Other, Wide} {
		if !a.hasPlacement(p) {
			continue
		}
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			inline(t, &a, Layout{Placement: p})
		})
	}
}

func inline(t *testing.T, a *Adapter, l Layout) {
	ctx := context.Background()
	st := a.NewStore(t)
	p, err := eventual.NewInline(patterntest.Fast())
	if err != nil {
		t.Fatal(err)
	}
	s := a.Open(t, a.Env, st, l, p)
	all := orders(false)
	for _, o := range all {
		if err := s.Insert(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, held []*entity.DynamicEntity) {
		t.Helper()
		want := Holders(held)
		for _, v := range []string{"pending", "shipped", "paid", "cancelled"} {
			if _, ok := want[v]; !ok {
				want[v] = nil // a value no order holds finds none
			}
		}
		Lookups(t, s, l, partitions(), want)
		NoDrift(t, what, s)
		for _, table := range []*entity.Table[entity.DynamicEntity]{st.Primaries, st.Entries} {
			for pager := a.Env.TableService.NewClient(table.Name()).NewListEntitiesPager(nil); pager.More(); {
				page, err := pager.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, raw := range page.Entities {
					if strings.Contains(string(raw), `"RowKey":"`+eventual.OutboxPrefix) {
						t.Errorf("%s: an outbox intent is left, as if for a worker: %s", what, raw)
					}
				}
			}
		}
	}
	check("after the inserts", all)

	// A change of value and a delete, each exact when it returns.
	changed := all[4]
	if err := s.Modify(ctx, changed.PartitionKey, changed.RowKey, func(e *entity.DynamicEntity) error {
		e.Properties["Status"] = "cancelled"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	changed.Properties["Status"] = "cancelled"
	gone := all[5]
	if err := s.Delete(ctx, gone.PartitionKey, gone.RowKey); err != nil {
		t.Fatal(err)
	}
	var held []*entity.DynamicEntity
	for _, o := range all {
		if o != gone {
			held = append(held, o)
		}
	}
	check("after a change and a delete", held)
}
