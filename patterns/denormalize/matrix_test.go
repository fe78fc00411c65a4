package denormalize_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// The seams of every public write of Copies (a hostile reviewer's matrix):
//
//	InsertSource, ModifySource, DeleteSource, Push, InsertTarget, ModifyTarget, Refresh:
//	  lost reply + another process's insert/replace/merge/delete of the same entity
//	    inside azcore's retry window: TestLostReplyMatrix (SamePartition),
//	    TestLostReplyMatrixOtherPartition; TestDeleteSourceUnknownThenReadFails,
//	    TestVerifyCopyFails (a later step failing after an applied write)
//	  crash after every request k, recovery by a fresh Copies (and processor):
//	    TestCrashMatrixSamePartition, TestCrashMatrix, TestCrashAtEveryStep
//	  one bad item among many: TestInsertSourceCountsFences (the transaction's
//	    limit), TestBadTargetSamePartition, TestLargeFanOut, TestBadTargetFanOut
//	Repair, Rebuild: the recovery step of the crash matrices; TestBadTargetCheck
//	Relay and the fan-out worker: TestCrashAtEveryStep, TestCrashMatrix,
//	    TestLostRepliesFanOut, TestBadTargetFanOut, TestLargeFanOut
//	The caller's messages (WriteOptions.Messages): TestUserMessageCrashMatrix,
//	    TestUserMessageLostReply, TestUserMessageRefused (one bad message
//	    among many), TestUserMessages, TestIntentsAreNotTargets
//	Writes beside the Copies: TestOwnership, TestOwnershipOtherPartition, TestDrift
//
// Each run reads the final state back with plain aztables clients: every
// department (entry) holds its manager's name and phone, or none when it
// names no existing manager; a change counted in Edits or Budget is
// applied at most once; and a write whose first try was executed is
// reported applied or entity.ErrOutcomeUnknown, never refused.

// rawPartition reads one partition with a plain aztables client.
func rawPartition(t testing.TB, table, pk string) (emps, depts map[string]map[string]any) {
	t.Helper()
	emps, depts = map[string]map[string]any{}, map[string]map[string]any{}
	for _, row := range rawRows(t, table, pk, "") {
		rk, _ := row["RowKey"].(string)
		switch {
		case strings.HasPrefix(rk, "empid "):
			emps[rk] = row
		case strings.HasPrefix(rk, deptPrefix):
			depts[rk] = row
		}
	}
	return emps, depts
}

// rawCheckGuide asserts, on what plain clients read, that every
// department holds exactly its manager's name and phone.
func rawCheckGuide(t testing.TB, table string) (emps, depts map[string]map[string]any) {
	t.Helper()
	emps, depts = rawPartition(t, table, "Sales")
	for rk, d := range depts {
		id, _ := d["ManagerID"].(string)
		m, ok := emps[id]
		if id == "" || !ok {
			if d["ManagerName"] != nil || d["ManagerPhone"] != nil {
				t.Errorf("%s keeps %v/%v of missing manager %q", rk, d["ManagerName"], d["ManagerPhone"], id)
			}
			continue
		}
		if d["ManagerName"] != m["Name"] || d["ManagerPhone"] != m["Phone"] {
			t.Errorf("%s has %v/%v, manager %s has %v/%v", rk, d["ManagerName"], d["ManagerPhone"], id, m["Name"], m["Phone"])
		}
	}
	return emps, depts
}

// counter reads an Int64 property as plain JSON returns it.
func count(row map[string]any, name string) int64 {
	switch v := row[name].(type) {
	case string:
		var n int64
		_, _ = fmt.Sscan(v, &n)
		return n
	case float64:
		return int64(v)
	}
	return 0
}

// rawWrite merges props into, or (props nil) deletes, the entity pk/rk of
// table with a plain aztables client, whatever its version: a writer in
// another process that knows nothing of this package.
func rawWrite(ctx context.Context, table, pk, rk string, props map[string]any) error {
	c := env.TableService.NewClient(table)
	star := azcore.ETagAny
	if props == nil {
		_, err := c.DeleteEntity(ctx, pk, rk, &aztables.DeleteEntityOptions{IfMatch: &star})
		return err
	}
	body := map[string]any{"PartitionKey": pk, "RowKey": rk}
	for k, v := range props {
		body[k] = v
	}
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	_, err = c.UpdateEntity(ctx, b, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: &star})
	return err
}

func isBatch(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/$batch")
}

// TestLostReplyMatrix runs every write of a SamePartition Copies with the
// reply to its transaction lost, and, inside azcore's retry window (after
// the transaction was executed, before the resend), another process
// writes the same entity: an insert, a replace and a delete through its
// own Copies, a merge of an uncopied property with a plain client.
func TestLostReplyMatrix(t *testing.T) {
	t.Parallel()
	type op struct {
		name   string
		key    string // the RowKey the operation writes
		source bool   // key is an employee (a source), else a department
		prep   func(ctx context.Context, g guide) error
		run    func(ctx context.Context, c *denormalize.Copies[Department, Employee]) error
	}
	ops := []op{
		{name: "InsertSource", key: empID(3), source: true, run: func(ctx context.Context, c *denormalize.Copies[Department, Employee]) error {
			return c.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(3), Name: "Cy", Phone: "3", Edits: 1})
		}},
		{name: "ModifySource", key: empID(1), source: true, run: func(ctx context.Context, c *denormalize.Copies[Department, Employee]) error {
			_, err := c.ModifySource(ctx, "Sales", empID(1), func(e *Employee) error { e.Phone = "op"; e.Edits++; return nil }, entity.ModifyOptions{})
			return err
		}},
		{name: "DeleteSource", key: empID(1), source: true, run: func(ctx context.Context, c *denormalize.Copies[Department, Employee]) error {
			return c.DeleteSource(ctx, "Sales", empID(1))
		}},
		{name: "Push", key: empID(1), source: true, prep: func(ctx context.Context, g guide) error {
			return rawWrite(ctx, g.emps.Name(), "Sales", empID(1), map[string]any{"Phone": "behind"})
		}, run: func(ctx context.Context, c *denormalize.Copies[Department, Employee]) error {
			return c.Push(ctx, "Sales", empID(1))
		}},
		{name: "InsertTarget", key: "dept C", run: func(ctx context.Context, c *denormalize.Copies[Department, Employee]) error {
			return c.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: "dept C", ManagerID: empID(1), Budget: 1})
		}},
		{name: "ModifyTarget", key: "dept Sales", run: func(ctx context.Context, c *denormalize.Copies[Department, Employee]) error {
			_, err := c.ModifyTarget(ctx, "Sales", "dept Sales", func(d *Department) error { d.ManagerID = empID(2); d.Budget++; return nil }, entity.ModifyOptions{})
			return err
		}},
		{name: "Refresh", key: "dept Sales", prep: func(ctx context.Context, g guide) error {
			return rawWrite(ctx, g.emps.Name(), "Sales", "dept Sales", map[string]any{"ManagerName": "stale"})
		}, run: func(ctx context.Context, c *denormalize.Copies[Department, Employee]) error {
			_, err := c.Refresh(ctx, "Sales", "dept Sales")
			return err
		}},
	}
	competitors := []string{"insert", "replace", "merge", "delete"}
	for _, o := range ops {
		for _, comp := range competitors {
			t.Run(o.name+"/"+comp, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				g := newGuide(t, env, denormalize.Config{})
				seedGuide(t, g)
				if err := g.copies.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: "dept B", ManagerID: empID(3)}); err != nil {
					t.Fatal(err)
				}
				if o.prep != nil {
					if err := o.prep(ctx, g); err != nil {
						t.Fatal(err)
					}
				}
				// The other process: its own Copies over healthy clients.
				other := g.over(t, env, denormalize.Config{})
				var compErr error
				compete := func() {
					switch {
					case comp == "insert" && o.source:
						compErr = other.copies.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: o.key, Name: "Comp", Phone: "c", Edits: 1000})
					case comp == "insert":
						compErr = other.copies.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: o.key, ManagerID: empID(2), Budget: 1000})
					case comp == "replace" && o.source:
						_, compErr = other.copies.ModifySource(ctx, "Sales", o.key, func(e *Employee) error { e.Phone = "c"; e.Edits += 1000; return nil }, entity.ModifyOptions{})
					case comp == "replace":
						_, compErr = other.copies.ModifyTarget(ctx, "Sales", o.key, func(d *Department) error { d.Budget += 1000; return nil }, entity.ModifyOptions{})
					case comp == "merge" && o.source:
						compErr = rawWrite(ctx, g.emps.Name(), "Sales", o.key, map[string]any{"Title": "comp"})
					case comp == "merge":
						compErr = rawWrite(ctx, g.emps.Name(), "Sales", o.key, map[string]any{"Note": "comp"})
					case comp == "delete" && o.source:
						compErr = other.copies.DeleteSource(ctx, "Sales", o.key)
					case comp == "delete":
						compErr = rawWrite(ctx, g.emps.Name(), "Sales", o.key, nil)
					}
				}
				inj := faults.New(faults.Config{})
				inj.LoseNextThen(1, isBatch, func(*http.Request) { compete() })
				h := g.over(t, env.With(inj), denormalize.Config{})
				err := o.run(ctx, h.copies)
				if inj.Stats().LostReplies != 1 {
					t.Fatalf("%d replies lost, want 1", inj.Stats().LostReplies)
				}
				t.Logf("%s: %v; the other process's %s: %v", o.name, err, comp, compErr)
				if err != nil && !errors.Is(err, entity.ErrOutcomeUnknown) {
					t.Errorf("%s, executed, its reply lost, with a %s in between: %v; want success or entity.ErrOutcomeUnknown", o.name, comp, err)
				}
				emps, depts := rawCheckGuide(t, g.emps.Name())
				// Applied at most once (Edits and Budget count the
				// operation's changes by 1, the other process's by 1000),
				// and, when reported applied, applied — unless the other
				// process deleted or replaced the entity since.
				var row map[string]any
				var field string
				if o.source {
					row, field = emps[o.key], "Edits"
				} else {
					row, field = depts[o.key], "Budget"
				}
				if row != nil {
					n := count(row, field) % 1000
					if n > 1 {
						t.Errorf("%s applied %d times: %s %d", o.name, n, field, count(row, field))
					}
					if err == nil && n == 0 && comp != "delete" && comp != "insert" && (o.name == "ModifySource" || o.name == "ModifyTarget" || o.name == "InsertSource" || o.name == "InsertTarget") {
						t.Errorf("%s reported applied, but %s is %d", o.name, field, count(row, field))
					}
				}
			})
		}
	}
}

// rawCheckDirectory asserts, on what plain clients read, that every
// directory entry holds exactly its manager's name and phone.
func rawCheckDirectory(t testing.TB, d directory) {
	t.Helper()
	for _, e := range rawRows(t, d.entries.Name(), "departments", "") {
		dept, _ := e["RowKey"].(string)
		if strings.HasPrefix(dept, "tablekit.") {
			t.Errorf("intent left: %v", e)
			continue
		}
		id, _ := e["Manager"].(string)
		m, ok := rawGet(t, d.emps.Name(), dept, id)
		if id == "" || !ok {
			if e["ManagerName"] != nil || e["ManagerPhone"] != nil {
				t.Errorf("entry %s keeps %v/%v of missing manager %q", dept, e["ManagerName"], e["ManagerPhone"], id)
			}
			continue
		}
		if e["ManagerName"] != m["Name"] || e["ManagerPhone"] != m["Phone"] {
			t.Errorf("entry %s has %v/%v, manager %s has %v/%v", dept, e["ManagerName"], e["ManagerPhone"], id, m["Name"], m["Phone"])
		}
	}
}

// TestLostReplyMatrixOtherPartition is TestLostReplyMatrix for an
// OtherPartition relation (employees' names and phones copied into a
// directory in another table): the transaction of a source's change holds
// its fan-out's intents, a target's write is followed by a second read of
// its source. Once relayed and drained, every entry agrees.
func TestLostReplyMatrixOtherPartition(t *testing.T) {
	t.Parallel()
	type op struct {
		name   string
		pk, rk string // the entity the operation writes
		source bool
		prep   func(ctx context.Context, d directory) error
		run    func(ctx context.Context, c *denormalize.Copies[Entry, Employee]) error
	}
	ops := []op{
		{name: "InsertSource", pk: "Sales", rk: empID(5), source: true, run: func(ctx context.Context, c *denormalize.Copies[Entry, Employee]) error {
			return c.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(5), Name: "Eve", Phone: "5", Edits: 1})
		}},
		{name: "ModifySource", pk: "Sales", rk: empID(0), source: true, run: func(ctx context.Context, c *denormalize.Copies[Entry, Employee]) error {
			_, err := c.ModifySource(ctx, "Sales", empID(0), func(e *Employee) error { e.Phone = "op"; e.Edits++; return nil }, entity.ModifyOptions{})
			return err
		}},
		{name: "DeleteSource", pk: "Sales", rk: empID(0), source: true, run: func(ctx context.Context, c *denormalize.Copies[Entry, Employee]) error {
			return c.DeleteSource(ctx, "Sales", empID(0))
		}},
		{name: "Push", pk: "Sales", rk: empID(0), source: true, prep: func(ctx context.Context, d directory) error {
			return rawWrite(ctx, d.emps.Name(), "Sales", empID(0), map[string]any{"Phone": "behind"})
		}, run: func(ctx context.Context, c *denormalize.Copies[Entry, Employee]) error {
			return c.Push(ctx, "Sales", empID(0))
		}},
		{name: "InsertTarget", pk: "departments", rk: "Mkt", run: func(ctx context.Context, c *denormalize.Copies[Entry, Employee]) error {
			return c.InsertTarget(ctx, &Entry{PartitionKey: "departments", RowKey: "Mkt", Manager: empID(0)})
		}},
		{name: "ModifyTarget", pk: "departments", rk: "Sales", run: func(ctx context.Context, c *denormalize.Copies[Entry, Employee]) error {
			_, err := c.ModifyTarget(ctx, "departments", "Sales", func(e *Entry) error { e.Manager = empID(1); return nil }, entity.ModifyOptions{})
			return err
		}},
		{name: "Refresh", pk: "departments", rk: "Sales", prep: func(ctx context.Context, d directory) error {
			return rawWrite(ctx, d.entries.Name(), "departments", "Sales", map[string]any{"ManagerName": "stale"})
		}, run: func(ctx context.Context, c *denormalize.Copies[Entry, Employee]) error {
			_, err := c.Refresh(ctx, "departments", "Sales")
			return err
		}},
	}
	for _, o := range ops {
		for _, comp := range []string{"insert", "replace", "merge", "delete"} {
			t.Run(o.name+"/"+comp, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				d := newDirectory(t, env)
				d.seed(t, "Sales", 3, "CC-1")
				mkt := []Employee{{PartitionKey: "Mkt", RowKey: empID(0), Name: "Mo", Phone: "m0"}, {PartitionKey: "Mkt", RowKey: empID(2), Name: "Max", Phone: "m2"}}
				if _, err := d.emps.BulkWrite(ctx, mkt, entity.BulkOptions{}); err != nil {
					t.Fatal(err)
				}
				if o.prep != nil {
					if err := o.prep(ctx, d); err != nil {
						t.Fatal(err)
					}
				}
				_, other, _ := d.over(t, env, patterntest.Crashy(), denormalize.Config{})
				var compErr error
				compete := func() {
					switch {
					case comp == "insert" && o.source:
						compErr = other.InsertSource(ctx, &Employee{PartitionKey: o.pk, RowKey: o.rk, Name: "Comp", Phone: "c", Edits: 1000})
					case comp == "insert":
						compErr = other.InsertTarget(ctx, &Entry{PartitionKey: o.pk, RowKey: o.rk, Manager: empID(2)})
					case comp == "replace" && o.source:
						_, compErr = other.ModifySource(ctx, o.pk, o.rk, func(e *Employee) error { e.Phone = "c"; e.Edits += 1000; return nil }, entity.ModifyOptions{})
					case comp == "replace":
						_, compErr = other.ModifyTarget(ctx, o.pk, o.rk, func(e *Entry) error { e.Manager = empID(2); return nil }, entity.ModifyOptions{})
					case comp == "merge" && o.source:
						compErr = rawWrite(ctx, d.emps.Name(), o.pk, o.rk, map[string]any{"Title": "comp"})
					case comp == "merge":
						compErr = rawWrite(ctx, d.entries.Name(), o.pk, o.rk, map[string]any{"Note": "comp"})
					case comp == "delete" && o.source:
						compErr = other.DeleteSource(ctx, o.pk, o.rk)
					case comp == "delete":
						compErr = rawWrite(ctx, d.entries.Name(), o.pk, o.rk, nil)
					}
				}
				inj := faults.New(faults.Config{})
				inj.LoseNextThen(1, isBatch, func(*http.Request) { compete() })
				_, h, _ := d.over(t, env.With(inj), patterntest.Crashy(), denormalize.Config{})
				err := o.run(ctx, h)
				if inj.Stats().LostReplies != 1 {
					t.Fatalf("%d replies lost, want 1", inj.Stats().LostReplies)
				}
				t.Logf("%s: %v; the other process's %s: %v", o.name, err, comp, compErr)
				if err != nil && !errors.Is(err, entity.ErrOutcomeUnknown) {
					t.Errorf("%s, executed, its reply lost, with a %s in between: %v; want success or entity.ErrOutcomeUnknown", o.name, comp, err)
				}
				rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				if err := d.recover(rctx, t); err != nil {
					t.Fatal(err)
				}
				rawCheckDirectory(t, d)
				if o.source {
					if row, ok := rawGet(t, d.emps.Name(), o.pk, o.rk); ok {
						if n := count(row, "Edits") % 1000; n > 1 {
							t.Errorf("%s applied %d times", o.name, n)
						} else if err == nil && n == 0 && (o.name == "ModifySource" || o.name == "InsertSource") && comp != "delete" && comp != "insert" {
							t.Errorf("%s reported applied, but Edits is %d", o.name, count(row, "Edits"))
						}
					}
				}
			})
		}
	}
}

// TestCrashMatrix kills every write of an OtherPartition Copies, and the
// worker that fans it out, after each of their storage requests in turn;
// then a fresh Copies and processor, knowing only what is stored, relay
// and drain (and run a crashed repair again: Push, or Rebuild for
// Refresh), and plain clients read every entry agreeing with its
// manager, no intent or message left, and no change applied twice.
func TestCrashMatrix(t *testing.T) {
	t.Parallel()
	type op struct {
		name string
		msgs bool // the operation commits a fan-out message
		prep func(ctx context.Context, d directory) error
		run  func(ctx context.Context, c *denormalize.Copies[Entry, Employee]) error
	}
	ops := []op{
		{name: "InsertSource", msgs: true, run: func(ctx context.Context, c *denormalize.Copies[Entry, Employee]) error {
			return c.InsertSource(ctx, &Employee{PartitionKey: "Mkt", RowKey: empID(1), Name: "Eve", Phone: "5", Edits: 1})
		}},
		{name: "ModifySource", msgs: true, run: func(ctx context.Context, c *denormalize.Copies[Entry, Employee]) error {
			_, err := c.ModifySource(ctx, "Sales", empID(0), func(e *Employee) error { e.Phone = "op"; e.Edits++; return nil }, entity.ModifyOptions{})
			return err
		}},
		{name: "DeleteSource", msgs: true, run: func(ctx context.Context, c *denormalize.Copies[Entry, Employee]) error {
			return c.DeleteSource(ctx, "Sales", empID(0))
		}},
		{name: "Push", msgs: true, prep: func(ctx context.Context, d directory) error {
			return rawWrite(ctx, d.emps.Name(), "Sales", empID(0), map[string]any{"Phone": "behind"})
		}, run: func(ctx context.Context, c *denormalize.Copies[Entry, Employee]) error {
			return c.Push(ctx, "Sales", empID(0))
		}},
		{name: "InsertTarget", run: func(ctx context.Context, c *denormalize.Copies[Entry, Employee]) error {
			return c.InsertTarget(ctx, &Entry{PartitionKey: "departments", RowKey: "Mkt", Manager: empID(1)})
		}},
		{name: "ModifyTarget", run: func(ctx context.Context, c *denormalize.Copies[Entry, Employee]) error {
			_, err := c.ModifyTarget(ctx, "departments", "Sales", func(e *Entry) error { e.Manager = empID(1); return nil }, entity.ModifyOptions{})
			return err
		}},
		{name: "Refresh", prep: func(ctx context.Context, d directory) error {
			return rawWrite(ctx, d.entries.Name(), "departments", "Sales", map[string]any{"ManagerName": "stale"})
		}, run: func(ctx context.Context, c *denormalize.Copies[Entry, Employee]) error {
			_, err := c.Refresh(ctx, "departments", "Sales")
			return err
		}},
	}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			t.Parallel()
			crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
				ctx := context.Background()
				d := newDirectory(t, env)
				d.seed(t, "Sales", 2, "CC-1")
				if o.prep != nil {
					if err := o.prep(ctx, d); err != nil {
						t.Fatal(err)
					}
				}
				// A department whose manager is hired later.
				if err := d.entries.Insert(ctx, &Entry{PartitionKey: "departments", RowKey: "Mkt", Manager: empID(1)}); err != nil && o.name != "InsertTarget" {
					t.Fatal(err)
				}
				if o.name == "InsertTarget" {
					if err := d.entries.Delete(ctx, "departments", "Mkt", entity.AnyETag); err != nil {
						t.Fatal(err)
					}
					if _, err := d.emps.BulkWrite(ctx, []Employee{{PartitionKey: "Mkt", RowKey: empID(1), Name: "Mo", Phone: "m1"}}, entity.BulkOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				return crashtest.Run{
					Work: func(ctx context.Context, kenv *integration.Env) error {
						cfg := patterntest.Crashy()
						cfg.Workers, cfg.BatchSize = 1, 1
						finished := make(chan struct{})
						var once sync.Once
						cfg.Hooks.Outcome = func(o eventual.Outcome) {
							if o.Result == eventual.Done {
								once.Do(func() { close(finished) })
							}
						}
						p, managers, _ := d.over(t, kenv, cfg, denormalize.Config{})
						if err := o.run(ctx, managers); err != nil || !o.msgs {
							return err
						}
						rctx, cancel := context.WithCancel(ctx)
						done := make(chan error, 1)
						go func() { done <- p.Run(rctx) }()
						select {
						case <-finished:
						case <-ctx.Done():
						}
						cancel()
						return <-done
					},
					Recover: func(ctx context.Context) error {
						if err := d.recover(ctx, t); err != nil {
							return err
						}
						// A repair that crashed is repaired by running a
						// repair again: Push, or a Rebuild (Check and
						// Refresh) of the targets.
						_, managers, _ := d.over(t, env, patterntest.Crashy(), denormalize.Config{})
						switch o.name {
						case "Push":
							if err := managers.Push(ctx, "Sales", empID(0)); err != nil {
								return err
							}
							return d.recover(ctx, t)
						case "Refresh":
							_, err := managers.Rebuild(ctx, denormalize.CheckOptions{})
							return err
						}
						return nil
					},
					Check: func(t *testing.T) {
						rawCheckDirectory(t, d)
						for _, q := range []string{"work", "poison"} {
							c := d.qs[0].Work
							if q == "poison" {
								c = d.qs[0].Poison
							}
							if n, err := patterntest.MessageCount(context.Background(), c); err != nil || n != 0 {
								t.Errorf("%d messages left in the %s queue (%v)", n, q, err)
							}
						}
						for _, k := range []denormalize.Key{{"Sales", empID(0)}, {"Mkt", empID(1)}} {
							if row, ok := rawGet(t, d.emps.Name(), k.PartitionKey, k.RowKey); ok && count(row, "Edits") > 1 {
								t.Errorf("%s applied twice: Edits %d", o.name, count(row, "Edits"))
							}
						}
					},
				}
			}})
		})
	}
}

// TestCrashMatrixSamePartition kills every write of a SamePartition
// Copies after each of its requests (the reads, the transaction): a
// SamePartition change is one transaction, so at every crash point plain
// clients read every department agreeing with its manager, and a change
// counted in Edits or Budget is applied at most once. A fresh Copies runs
// a crashed repair (Push, Refresh) again.
func TestCrashMatrixSamePartition(t *testing.T) {
	t.Parallel()
	type op struct {
		name string
		prep func(ctx context.Context, g guide) error
		run  func(ctx context.Context, c *denormalize.Copies[Department, Employee]) error
	}
	ops := []op{
		{name: "InsertSource", run: func(ctx context.Context, c *denormalize.Copies[Department, Employee]) error {
			return c.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(3), Name: "Cy", Phone: "3", Edits: 1})
		}},
		{name: "ModifySource", run: func(ctx context.Context, c *denormalize.Copies[Department, Employee]) error {
			_, err := c.ModifySource(ctx, "Sales", empID(1), func(e *Employee) error { e.Phone = "op"; e.Edits++; return nil }, entity.ModifyOptions{})
			return err
		}},
		{name: "DeleteSource", run: func(ctx context.Context, c *denormalize.Copies[Department, Employee]) error {
			return c.DeleteSource(ctx, "Sales", empID(1))
		}},
		{name: "Push", prep: func(ctx context.Context, g guide) error {
			return rawWrite(ctx, g.emps.Name(), "Sales", empID(1), map[string]any{"Phone": "behind"})
		}, run: func(ctx context.Context, c *denormalize.Copies[Department, Employee]) error {
			return c.Push(ctx, "Sales", empID(1))
		}},
		{name: "InsertTarget", run: func(ctx context.Context, c *denormalize.Copies[Department, Employee]) error {
			return c.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: "dept C", ManagerID: empID(1), Budget: 1})
		}},
		{name: "ModifyTarget", run: func(ctx context.Context, c *denormalize.Copies[Department, Employee]) error {
			_, err := c.ModifyTarget(ctx, "Sales", "dept Sales", func(d *Department) error { d.ManagerID = empID(2); d.Budget++; return nil }, entity.ModifyOptions{})
			return err
		}},
		{name: "Refresh", prep: func(ctx context.Context, g guide) error {
			return rawWrite(ctx, g.emps.Name(), "Sales", "dept Sales", map[string]any{"ManagerName": "stale"})
		}, run: func(ctx context.Context, c *denormalize.Copies[Department, Employee]) error {
			_, err := c.Refresh(ctx, "Sales", "dept Sales")
			return err
		}},
	}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			t.Parallel()
			crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
				ctx := context.Background()
				g := newGuide(t, env, denormalize.Config{})
				seedGuide(t, g)
				if err := g.copies.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: "dept B", ManagerID: empID(3)}); err != nil {
					t.Fatal(err)
				}
				if o.prep != nil {
					if err := o.prep(ctx, g); err != nil {
						t.Fatal(err)
					}
				}
				budget := int64(1000) // seedGuide's department's
				return crashtest.Run{
					Work: func(ctx context.Context, kenv *integration.Env) error {
						return o.run(ctx, g.over(t, kenv, denormalize.Config{}).copies)
					},
					Crashed: func(t *testing.T, passed int) {
						if o.name != "Push" && o.name != "Refresh" {
							rawCheckGuide(t, g.emps.Name())
						}
					},
					Recover: func(ctx context.Context) error {
						fresh := g.over(t, env, denormalize.Config{})
						switch o.name {
						case "Push":
							return fresh.copies.Push(ctx, "Sales", empID(1))
						case "Refresh":
							_, err := fresh.copies.Rebuild(ctx, denormalize.CheckOptions{})
							return err
						}
						return nil
					},
					Check: func(t *testing.T) {
						emps, depts := rawCheckGuide(t, g.emps.Name())
						for id, e := range emps {
							if n := count(e, "Edits"); n > 1 {
								t.Errorf("%s: Edits %d", id, n)
							}
						}
						if d, ok := depts["dept Sales"]; ok && count(d, "Budget") > budget+1 {
							t.Errorf("dept Sales: Budget %d", count(d, "Budget"))
						}
					},
				}
			}})
		})
	}
}
