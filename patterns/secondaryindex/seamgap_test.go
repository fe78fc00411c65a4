package secondaryindex_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/seamtest"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestMoveToBesideAnotherWriter archives an employee indexed table-wide
// and in its partition with MoveTo, loses the reply of each of its
// requests in turn — the read, the copy to the archive, the delete's
// transaction, its message — and has a second writer insert, replace,
// merge or delete the employee through a healthy Set inside azcore's
// retry window (seamtest.EveryReply). The documentation promises an
// idempotent step that never loses a primary: MoveTo answers nil or an
// unknown outcome (entity.ErrOutcomeUnknown), and run again, as an
// eventual handler's redelivery would, answers nil. Then, once the outbox
// relayed and the queue drained, read raw: the employee is in the archive
// (or, for a second writer that inserted it again after the move, in the
// table, holding the second writer's values); a change of the second
// writer that succeeded is in the archive or the table, never lost; the
// table holds no entry of an employee no longer there, nothing is
// poisoned, and Check finds no drift.
func TestMoveToBesideAnotherWriter(t *testing.T) {
	t.Parallel()
	// Eight runs at once: each has its own tables and queue.
	seamtest.EveryReply(t, env, seamtest.Race{Timeout: 2 * time.Minute, Parallel: 8, Prepare: func(t *testing.T) seamtest.RaceRun {
		ctx := context.Background()
		tbl, archive := employees(t, env), employees(t, env)
		qs := patterntest.Queues(t, env, 1)
		other, p := movedSet(t, env, qs, tbl, crashy())
		if err := other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(1), FirstName: "orig", LastName: "Orig", Email: "orig@x.com", Age: 30}); err != nil {
			t.Fatal(err)
		}
		drainWide(t, p, qs)
		var compErr error
		competed := false
		return seamtest.RaceRun{
			Work: func(ctx context.Context, e *integration.Env) error {
				s, _ := movedSet(t, e, qs, tbl, crashy())
				return s.MoveTo(ctx, "Sales", empid(1), patterntest.View[Employee](t, e, archive))
			},
			Compete: func(ctx context.Context, kind string, _ *http.Request) error {
				competed = true
				switch kind {
				case seamtest.Insert:
					compErr = other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(1), FirstName: "theirs", LastName: "Theirs", Email: "theirs@x.com", Age: 30})
				case seamtest.Replace:
					cur, err := tbl.Get(ctx, "Sales", empid(1))
					if err != nil {
						compErr = err
						break
					}
					cur.FirstName, cur.Email = "theirs", "theirs@x.com"
					compErr = other.Update(ctx, &cur)
				case seamtest.Merge:
					_, compErr = other.Modify(ctx, "Sales", empid(1), func(e *Employee) error { e.Age += 100; return nil }, entity.ModifyOptions{})
				default:
					compErr = other.Delete(ctx, "Sales", empid(1), "")
				}
				return compErr
			},
			Check: func(t *testing.T, kind string, err error) {
				ctx := context.Background()
				if err != nil {
					if !errors.Is(err, entity.ErrOutcomeUnknown) {
						t.Errorf("MoveTo beside %s: %v, want nil or an unknown outcome", kind, err)
					}
					if err := other.MoveTo(ctx, "Sales", empid(1), archive); err != nil {
						t.Fatalf("MoveTo again beside %s: %v", kind, err)
					}
				}
				if _, err := other.Relay(ctx); err != nil {
					t.Fatal(err)
				}
				_, p := movedSet(t, env, qs, tbl, crashy())
				drainWide(t, p, qs)
				final := rawGet(t, rawTable(t, tbl.Name()), "Sales", empid(1))
				moved := rawGet(t, rawTable(t, archive.Name()), "Sales", empid(1))
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
							return m != nil && m["Age"] == float64(130)
						case seamtest.Delete:
							return true
						}
						return m != nil && m["FirstName"] == "theirs"
					}
					if !holds(final) && !holds(moved) {
						t.Errorf("MoveTo beside %s: the second writer's change is lost: table %v, archive %v", kind, final, moved)
					}
				}
				rows := indexRows(t, tbl.Name())
				if final == nil && len(rows) != 0 {
					t.Errorf("MoveTo beside %s: orphan rows %q", kind, rows)
				}
				if n := poisoned(t, qs); n != 0 {
					t.Errorf("MoveTo beside %s: %d messages poisoned", kind, n)
				}
				if fs := findings(t, other, secondaryindex.CheckOptions{}); len(fs) != 0 {
					t.Errorf("MoveTo beside %s: drift %v", kind, fs)
				}
				if err != nil || competed && compErr != nil {
					t.Logf("MoveTo beside %s: %v (theirs: %v)", kind, err, compErr)
				}
			},
		}
	}})
}

// TestRepairCrashAtEveryRequest breaks the index around the Set in three
// ways — an employee's email entry deleted (Missing), an employee
// deleted without its entries (Orphans), an employee's first name changed
// plainly (Stale copies) — and repairs every finding with Repair, killing
// the process before each of its requests and once the service executed
// it (crashtest.EveryStep), in both placements. A fresh Set then repairs
// the same findings again, and the outbox relays and the queue drains.
// Read raw: no employee was changed or brought back by the repair, every
// entry of the employees that are there is (the index rows are exactly
// the ones before the damage, less the deleted employee's), nothing is
// poisoned, and Check finds no drift.
func TestRepairCrashAtEveryRequest(t *testing.T) {
	t.Parallel()
	for _, placement := range []secondaryindex.Placement{secondaryindex.SamePartition, secondaryindex.OtherPartition} {
		t.Run(placement.String(), func(t *testing.T) {
			t.Parallel()
			n := crashtest.EveryStep(t, env, crashtest.Scenario{Timeout: 2 * time.Minute, Prepare: func(t *testing.T) crashtest.Run {
				ctx := context.Background()
				r := &seamRun{placement: placement, op: "repair", tbl: employees(t, env)}
				if placement == secondaryindex.OtherPartition {
					r.qs = patterntest.Queues(t, env, 1)
				}
				r.other = r.set(t, env)
				seed := localSet(t, r.tbl)
				if placement == secondaryindex.OtherPartition {
					// The same indexes through remoteSet: an insert is sent
					// within Grace/2 of its reservation, or not at all, and
					// -race on a loaded machine is slow.
					seed, _ = remoteSet(t, env, r.qs, r.tbl, nil, crashy())
				}
				for i, e := range []Employee{
					{FirstName: "One", LastName: "Orig", Email: "orig@x.com", Age: 30},
					{FirstName: "Two", LastName: "Second", Email: "two@x.com", Age: 31},
					{FirstName: "Three", LastName: "Third", Email: "three@x.com", Age: 32},
				} {
					e.PartitionKey, e.RowKey = "Sales", empid(i+1)
					if err := seed.Insert(ctx, &e); err != nil {
						t.Fatal(err)
					}
				}
				r.settle(t)
				name := r.tbl.Name()
				raw := rawTable(t, name)
				var want []string // the entries once repaired
				for _, k := range indexRows(t, name) {
					if !strings.Contains(k, "three@") && !strings.Contains(k, "Third") {
						want = append(want, k)
					}
				}
				if len(want) != 4 {
					t.Fatalf("the index rows before the damage: %q", indexRows(t, name))
				}
				epk := "Sales"
				if placement == secondaryindex.OtherPartition {
					epk = "email_Sales"
				}
				rawDelete(t, raw, epk, "email_orig@x.com")
				rawDelete(t, raw, "Sales", empid(3))
				two := rawGet(t, raw, "Sales", empid(2))
				two["FirstName"] = "Deux"
				delete(two, "odata.metadata")
				delete(two, "odata.etag")
				delete(two, "Timestamp")
				b, err := json.Marshal(two)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := raw.UpdateEntity(ctx, b, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
					t.Fatal(err)
				}
				primaries := map[string]map[string]any{}
				for _, rk := range []string{empid(1), empid(2)} {
					primaries[rk] = employeeFields(rawGet(t, raw, "Sales", rk))
				}
				fs := findings(t, r.other, secondaryindex.CheckOptions{})
				kinds := map[drift.Kind]int{}
				for _, f := range fs {
					kinds[f.Kind]++
				}
				if kinds[drift.Missing] != 1 || kinds[drift.Orphan] != 2 || kinds[drift.Stale] == 0 {
					t.Fatalf("findings %v", fs)
				}
				repair := func(ctx context.Context, s *secondaryindex.Set[Employee]) error {
					for _, f := range fs {
						if err := s.Repair(ctx, f); err != nil {
							return err
						}
					}
					return nil
				}
				return crashtest.Run{
					Work: func(ctx context.Context, kenv *integration.Env) error {
						return repair(ctx, r.set(t, kenv))
					},
					Crashed: func(t *testing.T, passed int) {
						for rk, want := range primaries {
							if got := employeeFields(rawGet(t, raw, "Sales", rk)); !maps.Equal(got, want) {
								t.Errorf("after %d requests %s is %v, want %v", passed, rk, got, want)
							}
						}
					},
					Recover: func(ctx context.Context) error {
						return repair(ctx, r.set(t, env))
					},
					Check: func(t *testing.T) {
						r.settle(t)
						for rk, want := range primaries {
							if got := employeeFields(rawGet(t, raw, "Sales", rk)); !maps.Equal(got, want) {
								t.Errorf("%s is %v, want %v", rk, got, want)
							}
						}
						if m := rawGet(t, raw, "Sales", empid(3)); m != nil {
							t.Errorf("the deleted employee is back: %v", m)
						}
						if got := indexRows(t, name); !slices.Equal(got, want) {
							t.Errorf("the index rows are\n%q\nwant\n%q", got, want)
						}
						if placement == secondaryindex.OtherPartition {
							if n := poisoned(t, r.qs); n != 0 {
								t.Errorf("%d messages poisoned", n)
							}
						}
						if fs := findings(t, r.other, secondaryindex.CheckOptions{}); len(fs) != 0 {
							t.Errorf("drift: %v", fs)
						}
					},
				}
			}})
			if n < 5 {
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
	for _, k := range []string{"FirstName", "LastName", "Email", "Age"} {
		out[k] = m[k]
	}
	return out
}
