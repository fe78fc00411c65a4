package denormalize_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/seamtest"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/drift"
)

// driftedGuide is the guide's Sales partition with four kinds of drift
// made by hand: department 0's copy stale, 1's missing, 2's manager
// deleted (an orphan copy), 3 naming no manager but holding a name.
func driftedGuide(t *testing.T) guide {
	t.Helper()
	ctx := context.Background()
	g := newGuide(t, env, denormalize.Config{})
	for i := range 4 {
		if err := g.copies.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(i), Name: fmt.Sprint("Sales", i), Phone: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
		d := Department{PartitionKey: "Sales", RowKey: fmt.Sprint(deptPrefix, i), ManagerID: empID(i)}
		if i == 3 {
			d.ManagerID = ""
		}
		if err := g.copies.InsertTarget(ctx, &d); err != nil {
			t.Fatal(err)
		}
	}
	edit := func(rk string, f func(*entity.DynamicEntity)) {
		d, err := g.bags.Get(ctx, "Sales", rk)
		if err != nil {
			t.Fatal(err)
		}
		f(&d)
		if err := g.bags.Update(ctx, &d, entity.Replace); err != nil {
			t.Fatal(err)
		}
	}
	edit(deptPrefix+"0", func(d *entity.DynamicEntity) { d.Set("ManagerPhone", "999") })
	edit(deptPrefix+"1", func(d *entity.DynamicEntity) {
		delete(d.Properties, "ManagerName")
		delete(d.Properties, "ManagerPhone")
	})
	if err := g.emps.Delete(ctx, "Sales", empID(2), entity.AnyETag); err != nil {
		t.Fatal(err)
	}
	edit(deptPrefix+"3", func(d *entity.DynamicEntity) { d.Set("ManagerName", "ghost") })
	if got := findings(t, g.copies, denormalize.CheckOptions{}); len(got) != 4 {
		t.Fatalf("drift made: %v, want 4 findings", got)
	}
	return g
}

// repairAll repairs every finding of a Check, through c.
func repairAll(ctx context.Context, checker, c *denormalize.Copies[Department, Employee]) error {
	var fs []drift.Finding
	for f, err := range checker.Check(ctx, denormalize.CheckOptions{}) {
		if err != nil {
			return err
		}
		fs = append(fs, f)
	}
	var errs []error
	for _, f := range fs {
		errs = append(errs, c.Repair(ctx, f))
	}
	return errors.Join(errs...)
}

// converged asserts, on what plain clients read, that every department
// holds exactly its manager's name and phone, and that Check finds nothing.
func converged(t *testing.T, g guide) {
	t.Helper()
	rawCheckGuide(t, g.emps.Name())
	if got := findings(t, g.copies, denormalize.CheckOptions{}); len(got) != 0 {
		t.Errorf("drift left: %v", got)
	}
}

// Repair (of each finding) and Rebuild killed at each of their requests,
// before it is sent and after the service executed it, then run again by a
// fresh Copies: every department holds its manager's copy or none (read
// raw), and Check finds nothing.
func TestRepairAndRebuildSurviveACrashAtEveryRequest(t *testing.T) {
	t.Parallel()
	ops := map[string]func(ctx context.Context, g, k guide) error{
		"Repair": func(ctx context.Context, g, k guide) error { return repairAll(ctx, g.copies, k.copies) },
		"Rebuild": func(ctx context.Context, _, k guide) error {
			_, err := k.copies.Rebuild(ctx, denormalize.CheckOptions{})
			return err
		},
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
				g := driftedGuide(t)
				return crashtest.Run{
					Work: func(ctx context.Context, e *integration.Env) error {
						return op(ctx, g, g.over(t, e, denormalize.Config{}))
					},
					Recover: func(ctx context.Context) error {
						fresh := g.over(t, env, denormalize.Config{})
						return op(ctx, fresh, fresh)
					},
					Check: func(t *testing.T) { converged(t, g) },
				}
			}})
		})
	}
}

// Repair and Rebuild with the reply of each of their requests lost and,
// inside azcore's retry window, another process writing the same
// partition through its own Copies: a new manager inserted and named by
// department 3 (seamtest.Insert), manager 0's phone changed (Replace),
// department 0 made to name manager 1 (Merge), manager 1 deleted (Delete).
// Each reports success, drift.ErrRaced or entity.ErrOutcomeUnknown —
// nothing else — and one healthy Rebuild after it leaves every copy exact
// (read raw) with a Rebuild after that repairing nothing.
func TestRepairAndRebuildBesideAnotherWriter(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Repair", "Rebuild"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			seamtest.EveryReply(t, env, seamtest.Race{Parallel: 8, Prepare: func(t *testing.T) seamtest.RaceRun {
				g := driftedGuide(t)
				return seamtest.RaceRun{
					Work: func(ctx context.Context, e *integration.Env) error {
						k := g.over(t, e, denormalize.Config{})
						if name == "Repair" {
							return repairAll(ctx, g.copies, k.copies)
						}
						_, err := k.copies.Rebuild(ctx, denormalize.CheckOptions{})
						return err
					},
					Compete: func(ctx context.Context, kind string, _ *http.Request) error {
						c := g.copies
						switch kind {
						case seamtest.Insert:
							if err := c.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(9), Name: "New", Phone: "9"}); err != nil {
								return err
							}
							_, err := c.ModifyTarget(ctx, "Sales", deptPrefix+"3", func(d *Department) error { d.ManagerID = empID(9); return nil }, entity.ModifyOptions{})
							return err
						case seamtest.Replace:
							_, err := c.ModifySource(ctx, "Sales", empID(0), func(e *Employee) error { e.Phone = "000"; return nil }, entity.ModifyOptions{})
							return err
						case seamtest.Merge:
							_, err := c.ModifyTarget(ctx, "Sales", deptPrefix+"0", func(d *Department) error { d.ManagerID = empID(1); return nil }, entity.ModifyOptions{})
							return err
						default:
							return c.DeleteSource(ctx, "Sales", empID(1))
						}
					},
					Check: func(t *testing.T, kind string, err error) {
						if err != nil && !errors.Is(err, drift.ErrRaced) && !errors.Is(err, entity.ErrOutcomeUnknown) {
							t.Errorf("%s beside a %s: %v", name, kind, err)
						}
						if kind == "" {
							converged(t, g)
							return
						}
						if _, err := g.copies.Rebuild(t.Context(), denormalize.CheckOptions{}); err != nil {
							t.Fatalf("the healthy Rebuild: %v", err)
						}
						converged(t, g)
						if sum, err := g.copies.Rebuild(t.Context(), denormalize.CheckOptions{}); err != nil || sum.Repaired != 0 {
							t.Errorf("a second Rebuild: %+v, %v", sum, err)
						}
					},
				}
			}})
		})
	}
}
