package indexentity_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/seamtest"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestMoveToBesideAnotherWriter archives employee 000002 of three
// Joneses with MoveTo, loses the reply of each of its requests in turn —
// the read, the copy to the archive, the delete's requests — and has a
// second writer insert, replace (renaming to Smith), merge or delete the
// employee through a healthy Set inside azcore's retry window
// (seamtest.EveryReply), in both placements. The documentation promises
// an idempotent step that never loses a primary: MoveTo answers nil or an
// unknown outcome (entity.ErrOutcomeUnknown), and run again, as an
// eventual handler's redelivery would, answers nil. Then, once the outbox
// relayed and the queue drained, read raw: the employee is in the archive
// (or, for a second writer that inserted it again after the move, in the
// table, holding the second writer's values); a change of the second
// writer that succeeded is in the archive or the table, never lost; every
// list names exactly the employees the table holds, nothing is left in
// the queues, and Check finds no drift.
func TestMoveToBesideAnotherWriter(t *testing.T) {
	t.Parallel()
	for _, placement := range []indexentity.Placement{indexentity.SamePartition, indexentity.OtherPartition} {
		t.Run(placement.String(), func(t *testing.T) {
			t.Parallel()
			seamtest.EveryReply(t, env, seamtest.Race{Timeout: 2 * time.Minute, Prepare: func(t *testing.T) seamtest.RaceRun {
				if !strings.HasSuffix(t.Name(), "/no_fault") {
					t.Parallel() // each run has its own tables and queue
				}
				w := newWorld(t, placement, 1)
				w.seedRemote(t, "Jones", "Jones", "Jones")
				archive := patterntest.Table[Employee](t, env)
				other, _ := w.set(t, env, patterntest.Crashy(), indexentity.Config{Retry: hot})
				var compErr error
				competed := false
				return seamtest.RaceRun{
					Work: func(ctx context.Context, e *integration.Env) error {
						s, _ := w.set(t, e, patterntest.Crashy(), indexentity.Config{Retry: hot})
						return s.MoveTo(ctx, "Sales", "000002", patterntest.View[Employee](t, e, archive))
					},
					Compete: func(ctx context.Context, kind string, _ *http.Request) error {
						competed = true
						switch kind {
						case seamtest.Insert:
							compErr = other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000002", FirstName: "theirs", LastName: "Jones"})
						case seamtest.Replace:
							cur, err := w.emps.Get(ctx, "Sales", "000002")
							if err != nil {
								compErr = err
								break
							}
							cur.FirstName, cur.LastName = "theirs", "Smith"
							compErr = other.Update(ctx, &cur)
						case seamtest.Merge:
							_, compErr = other.Modify(ctx, "Sales", "000002", func(e *Employee) error { e.City = "Paris"; return nil }, entity.ModifyOptions{})
						default:
							compErr = other.Delete(ctx, "Sales", "000002", "")
						}
						return compErr
					},
					Check: func(t *testing.T, kind string, err error) {
						ctx := context.Background()
						if err != nil {
							if !errors.Is(err, entity.ErrOutcomeUnknown) {
								t.Errorf("MoveTo beside %s: %v, want nil or an unknown outcome", kind, err)
							}
							if err := other.MoveTo(ctx, "Sales", "000002", archive); err != nil {
								t.Fatalf("MoveTo again beside %s: %v", kind, err)
							}
						}
						if err := w.recover(ctx, t, patterntest.Crashy()); err != nil {
							t.Fatal(err)
						}
						final := rawGet(t, w.emps.Name(), "Sales", "000002")
						moved := rawGet(t, archive.Name(), "Sales", "000002")
						succeeded := competed && compErr == nil
						reinserted := kind == seamtest.Insert && succeeded && err == nil
						switch {
						case moved == nil && (kind != seamtest.Delete || !succeeded || final != nil):
							t.Errorf("MoveTo beside %s (theirs: %v): the employee is not in the archive; table: %v", kind, compErr, final)
						case final != nil && !reinserted:
							t.Errorf("MoveTo beside %s (theirs: %v): the employee is still in the table: %v", kind, compErr, final)
						case final != nil && final["FirstName"] != "theirs":
							t.Errorf("MoveTo beside %s: the table holds %v after the move", kind, final)
						}
						if succeeded {
							holds := func(m map[string]any) bool {
								switch kind {
								case seamtest.Merge:
									return m != nil && m["City"] == "Paris"
								case seamtest.Delete:
									return true
								}
								return m != nil && m["FirstName"] == "theirs"
							}
							if !holds(final) && !holds(moved) {
								t.Errorf("MoveTo beside %s: the second writer's change is lost: table %v, archive %v", kind, final, moved)
							}
						}
						w.check(t, "Jones", "Smith")
						if err != nil || competed && compErr != nil {
							t.Logf("MoveTo beside %s: %v (theirs: %v)", kind, err, compErr)
						}
					},
				}
			}})
		})
	}
}

// TestRepairCrashAtEveryRequest damages Jones's list around the Set — it
// names Smith's 000002 and an 000099 that does not exist, and lacks Jones
// 000003 — and repairs the three findings with Repair, killing the
// process before each of its requests and once the service executed it
// (crashtest.EveryStep), in every placement. A fresh Set then repairs the
// same findings again, and the outbox relays and the queue drains. Read
// raw: no employee was changed by the repair, every list names exactly
// the employees the table says (none lost, no orphan), nothing is left in
// the queues, and Check finds no drift.
func TestRepairCrashAtEveryRequest(t *testing.T) {
	t.Parallel()
	for _, c := range driftCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			n := crashtest.EveryStep(t, env, crashtest.Scenario{Timeout: 2 * time.Minute, Prepare: func(t *testing.T) crashtest.Run {
				f := newFixture(t, c)
				f.insert(t,
					Employee{PartitionKey: "Sales", RowKey: "000001", FirstName: "One", LastName: "Jones"},
					Employee{PartitionKey: "Sales", RowKey: "000002", FirstName: "Two", LastName: "Smith"},
					Employee{PartitionKey: "Sales", RowKey: "000003", FirstName: "Three", LastName: "Jones", City: "Paris"},
				)
				f.setList(t, "Sales", "Jones", ptr("000001\n000002\n000099\n"))
				fs := findings(t, f.s, indexentity.CheckOptions{})
				var got []string
				for _, x := range fs {
					got = append(got, brief(x))
				}
				slices.Sort(got)
				if want := []string{"missing Sales/000003", "orphan Sales/000002", "orphan Sales/000099"}; !slices.Equal(got, want) {
					t.Fatalf("findings %q, want %q", got, want)
				}
				primaries := map[string]map[string]any{}
				for _, rk := range []string{"000001", "000002", "000003"} {
					primaries[rk] = employeeFields(rawGet(t, f.w.emps.Name(), "Sales", rk))
				}
				unchanged := func(t *testing.T, when string) {
					for rk, want := range primaries {
						if got := employeeFields(rawGet(t, f.w.emps.Name(), "Sales", rk)); !maps.Equal(got, want) {
							t.Errorf("%s %s is %v, want %v", when, rk, got, want)
						}
					}
					if m := rawGet(t, f.w.emps.Name(), "Sales", "000099"); m != nil {
						t.Errorf("%s an employee 000099 exists: %v", when, m)
					}
				}
				repair := func(ctx context.Context, e *integration.Env) error {
					s, _ := f.w.set(t, e, patterntest.Crashy(), indexentity.Config{Retry: hot})
					for _, x := range fs {
						if err := s.Repair(ctx, x); err != nil {
							return err
						}
					}
					return nil
				}
				return crashtest.Run{
					Work: repair,
					Crashed: func(t *testing.T, passed int) {
						unchanged(t, fmt.Sprintf("after %d requests", passed))
					},
					Recover: func(ctx context.Context) error {
						if err := repair(ctx, env); err != nil {
							return err
						}
						return f.w.recover(ctx, t, patterntest.Crashy())
					},
					Check: func(t *testing.T) {
						unchanged(t, "in the end")
						f.w.check(t, "Jones", "Smith")
						s, _ := f.w.set(t, env, patterntest.Fast(), indexentity.Config{})
						if got, err := s.Members(context.Background(), "lastname", "Sales", "Jones"); err != nil || !slices.Equal(got, []string{"000001", "000003"}) {
							t.Errorf("Jones's list: %v, %v", got, err)
						}
					},
				}
			}})
			if n < 2 {
				t.Errorf("the repairs made %d requests", n)
			}
		})
	}
}

// employeeFields is an employee's own properties as stored.
func employeeFields(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := map[string]any{}
	for _, k := range []string{"FirstName", "LastName", "City"} {
		out[k] = m[k]
	}
	return out
}
