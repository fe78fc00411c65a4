package indexentity_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestTableWideCrashAtEveryStep runs, on a Set with a TableWide index,
// an insert with the caller's Note in the same transaction, then a MoveTo
// of another employee to an archive, and kills the process before and
// after each storage request in turn; recovery runs the MoveTo again (a
// handler's redelivery), relays the outbox and drains the queue. Read
// back with plain clients: the Note's effect is there exactly when the
// inserted employee is, the moved one is in the archive and not in the
// table, each city's table-wide list names exactly the employees holding
// it, and the drift checker finds nothing.
func TestTableWideCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	n := crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		w := newWideWorld(t, 2)
		seed, p := w.set(t, env, patterntest.Fast())
		for _, e := range []Employee{{PartitionKey: "Sales", RowKey: "000001", City: "Paris"}, {PartitionKey: "HR", RowKey: "000002", City: "Paris"}} {
			if err := seed.Insert(context.Background(), &e); err != nil {
				t.Fatal(err)
			}
		}
		if err := patterntest.Drain(context.Background(), p, w.qs); err != nil {
			t.Fatal(err)
		}
		notes := patterntest.Table[Delivered](t, env)
		archive := patterntest.Table[Employee](t, env)
		move := func(ctx context.Context, e *integration.Env) error {
			s, _ := w.set(t, e, patterntest.Crashy())
			return s.MoveTo(ctx, "HR", "000002", patterntest.View[Employee](t, e, archive))
		}
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				s, _ := w.set(t, kenv, patterntest.Crashy())
				if err := s.Insert(ctx, &Employee{PartitionKey: "IT", RowKey: "000003", City: "Paris"},
					indexentity.WriteOptions{Messages: []eventual.Message{note(t, "hired-000003", "hired")}}); err != nil {
					return err
				}
				return move(ctx, kenv)
			},
			Recover: func(ctx context.Context) error {
				if err := move(ctx, env); err != nil {
					return err
				}
				s, p := w.set(t, env, patterntest.Crashy())
				handleNotes(t, p, patterntest.View[Delivered](t, env, notes))
				if _, err := s.Relay(ctx); err != nil {
					return err
				}
				return patterntest.Drain(ctx, p, w.qs)
			},
			Check: func(t *testing.T) {
				inserted := rawGet(t, w.emps.Name(), "IT", "000003") != nil
				if effect := rawGet(t, notes.Name(), "effects", "hired-000003"); inserted != (effect != nil) {
					t.Errorf("employee inserted: %v; note's effect: %v", inserted, effect)
				}
				if rawGet(t, w.emps.Name(), "HR", "000002") != nil || rawGet(t, archive.Name(), "HR", "000002") == nil {
					t.Error("HR/000002 is not moved to the archive")
				}
				s, _ := w.set(t, env, patterntest.Fast())
				want := wideExpect(t, w.emps.Name())
				if got := wideLookup(t, s, "Paris", indexentity.LookupOptions{}); !slices.Equal(got, want["Paris"]) {
					t.Errorf("Paris: %v, want %v", got, want["Paris"])
				}
				noDrift(t, s)
			},
		}
	}})
	if n < 8 {
		t.Errorf("the scenario made %d requests, want at least 8", n)
	}
}
