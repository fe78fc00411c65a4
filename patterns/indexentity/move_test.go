package indexentity_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestMoveCrashAtEveryStep archives employee 000002 of three Joneses with
// MoveTo and kills the process before and after each storage request in
// turn; recovery runs MoveTo again (a handler's redelivery), relays the
// outbox and drains the queue. Read back with plain clients, the
// employee is in the archive and not in the table — none lost — and
// Jones's list names the other two exactly: no orphan membership, and
// the drift checker finds nothing.
func TestMoveCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	for _, placement := range []indexentity.Placement{indexentity.SamePartition, indexentity.OtherPartition} {
		t.Run(placement.String(), func(t *testing.T) {
			t.Parallel()
			n := crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
				w := newWorld(t, placement, 1)
				w.seedRemote(t, "Jones", "Jones", "Jones")
				archive := patterntest.Table[Employee](t, env)
				move := func(ctx context.Context, e *integration.Env) error {
					s, _ := w.set(t, e, patterntest.Crashy(), indexentity.Config{Retry: hot})
					return s.MoveTo(ctx, "Sales", "000002", patterntest.View[Employee](t, e, archive))
				}
				return crashtest.Run{
					Work: move,
					Crashed: func(t *testing.T, passed int) {
						in, out := rawGet(t, w.emps.Name(), "Sales", "000002"), rawGet(t, archive.Name(), "Sales", "000002")
						if in == nil && out == nil {
							t.Errorf("after %d requests the employee is in neither table", passed)
						}
					},
					Recover: func(ctx context.Context) error {
						if err := move(ctx, env); err != nil {
							return err
						}
						return w.recover(ctx, t, patterntest.Crashy())
					},
					Check: func(t *testing.T) {
						if rawGet(t, w.emps.Name(), "Sales", "000002") != nil {
							t.Error("the employee is still in the table")
						}
						if got := rawGet(t, archive.Name(), "Sales", "000002"); got == nil || got["LastName"] != "Jones" {
							t.Errorf("archived: %v", got)
						}
						w.check(t, "Jones")
						s, _ := w.set(t, env, patterntest.Fast(), indexentity.Config{})
						if got, _ := s.Members(context.Background(), "lastname", "Sales", "Jones"); !slices.Equal(got, []string{"000001", "000003"}) {
							t.Errorf("Jones's list: %v", got)
						}
					},
				}
			}})
			if n < 3 {
				t.Errorf("the scenario made %d requests, want at least 3", n)
			}
		})
	}
}

// TestMoveToRefused: MoveTo to the primaries' own table, or to nil, is a
// *ConfigError before any request; moving a primary that is not there is
// done.
func TestMoveToRefused(t *testing.T) {
	t.Parallel()
	emps := patterntest.Table[Employee](t, env)
	s, err := indexentity.New(emps, indexentity.Config{}, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000001", LastName: "Jones"}); err != nil {
		t.Fatal(err)
	}
	var ce *indexentity.ConfigError
	for name, dst := range map[string]*entity.Table[Employee]{"itself": emps, "nil": nil} {
		if err := s.MoveTo(ctx, "Sales", "000001", dst); !errors.As(err, &ce) {
			t.Errorf("MoveTo %s: %v; want a *ConfigError", name, err)
		}
	}
	if rawGet(t, emps.Name(), "Sales", "000001") == nil {
		t.Error("a refused move deleted the employee")
	}
	if err := s.MoveTo(ctx, "Sales", "000404", patterntest.Table[Employee](t, env)); err != nil {
		t.Errorf("moving a primary that is not there: %v", err)
	}
}

// TestPlainWriteBesideSet writes the primaries through a plain
// entity.Table beside the Set — an insert, a rename, a delete — which the
// ownership rule forbids, and checks that Check reports exactly the drift
// the package documentation predicts: Missing for the inserted employee
// and for the renamed one's new value, Orphan for the renamed one's old
// value and for the deleted one; and that Repair fixes all of it.
func TestPlainWriteBesideSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	emps := patterntest.Table[Employee](t, env)
	s, err := indexentity.New(emps, indexentity.Config{}, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"Jones", "Jones", "Smith"} {
		if err := s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "00000" + string(rune('1'+i)), LastName: name}); err != nil {
			t.Fatal(err)
		}
	}
	// Beside the Set: insert 000009 Jones, rename 000001 to Brown, delete 000003.
	if err := emps.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000009", LastName: "Jones"}); err != nil {
		t.Fatal(err)
	}
	if _, err := emps.Modify(ctx, "Sales", "000001", func(e *Employee) error { e.LastName = "Brown"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := emps.Delete(ctx, "Sales", "000003", entity.AnyETag); err != nil {
		t.Fatal(err)
	}
	type got struct {
		kind        drift.Kind
		primary, rk string
	}
	var fs []got
	for _, f := range findings(t, s, indexentity.CheckOptions{}) {
		fs = append(fs, got{f.Kind, f.Primary.RowKey, f.Entry.RowKey})
	}
	want := []got{
		{drift.Missing, "000001", "lastname_Brown"},
		{drift.Orphan, "000001", "lastname_Jones"},
		{drift.Orphan, "000003", "lastname_Smith"},
		{drift.Missing, "000009", "lastname_Jones"},
	}
	cmp := func(a, b got) int {
		if a.primary != b.primary {
			return strings.Compare(a.primary, b.primary)
		}
		return strings.Compare(a.rk, b.rk)
	}
	slices.SortFunc(fs, cmp)
	if !slices.Equal(fs, want) {
		t.Errorf("findings %v, want %v", fs, want)
	}
	for _, f := range findings(t, s, indexentity.CheckOptions{}) {
		if err := s.Repair(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	noDrift(t, s)
	for value, members := range map[string]string{"Jones": "000002\n000009\n", "Brown": "000001\n"} {
		if l := rawGet(t, emps.Name(), "Sales", "lastname_"+value); l == nil || l["Members"] != members {
			t.Errorf("%s's list after Repair: %v, want members %q", value, l, members)
		}
	}
	if l := rawGet(t, emps.Name(), "Sales", "lastname_Smith"); l != nil && l["Members"] != "" {
		t.Errorf("Smith's list after Repair: %v", l)
	}
}
