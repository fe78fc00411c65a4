package denormalize_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// directory is the employees' table with a directory of departments in
// another table: each entry copies its manager's name and phone
// (directoryRel), each employee copies its entry's cost center
// (costCenterRel, a fan-out to every employee of the department).
type directory struct {
	emps    *entity.Table[Employee]
	entries *entity.Table[Entry]
	qs      []eventual.Queue
}

func newDirectory(t testing.TB, e *integration.Env) directory {
	t.Helper()
	return directory{emps: patterntest.Table[Employee](t, e), entries: patterntest.Table[Entry](t, e), qs: patterntest.Queues(t, e, 1)}
}

// over builds the processor and both Copies with clients from e.
func (d directory) over(t testing.TB, e *integration.Env, pcfg eventual.Config, cfg denormalize.Config) (*eventual.Processor, *denormalize.Copies[Entry, Employee], *denormalize.Copies[Employee, Entry]) {
	t.Helper()
	p, err := eventual.New(patterntest.SameQueues(t, e, d.qs), nil, pcfg)
	if err != nil {
		t.Fatal(err)
	}
	emps, entries := patterntest.View[Employee](t, e, d.emps), patterntest.View[Entry](t, e, d.entries)
	cfg.Outbox.Grace = -1
	cfg.Processor = p
	managers, err := denormalize.New(entries, emps, cfg, directoryRel())
	if err != nil {
		t.Fatal(err)
	}
	centers, err := denormalize.New(emps, entries, cfg, costCenterRel())
	if err != nil {
		t.Fatal(err)
	}
	return p, managers, centers
}

// recover relays what crashed writers left and drains the queue with
// healthy clients.
func (d directory) recover(ctx context.Context, t testing.TB) error {
	p, managers, centers := d.over(t, env, patterntest.Crashy(), denormalize.Config{})
	if _, err := managers.Relay(ctx); err != nil {
		return err
	}
	if _, err := centers.Relay(ctx); err != nil {
		return err
	}
	return patterntest.Drain(ctx, p, d.qs)
}

// check asserts the converged state: every entry holds its manager's
// details, every employee its entry's cost center, no message is left.
func (d directory) check(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	entries := map[string]Entry{}
	for _, e := range all(t, d.entries, "departments") {
		entries[e.RowKey] = e
		m, err := d.emps.Get(ctx, e.RowKey, e.Manager)
		switch {
		case errors.Is(err, entity.ErrNotFound):
			if e.ManagerName != "" || e.ManagerPhone != "" {
				t.Errorf("entry %s keeps %q/%q of missing manager %s", e.RowKey, e.ManagerName, e.ManagerPhone, e.Manager)
			}
		case err != nil:
			t.Fatal(err)
		case e.ManagerName != m.Name || e.ManagerPhone != m.Phone:
			t.Errorf("entry %s has %q/%q, manager %s has %q/%q", e.RowKey, e.ManagerName, e.ManagerPhone, m.RowKey, m.Name, m.Phone)
		}
	}
	for dept, entry := range entries {
		for _, e := range all(t, d.emps, dept) {
			if e.CostCenter != entry.CostCenter {
				t.Errorf("employee %s/%s has cost center %q, the directory %q", dept, e.RowKey, e.CostCenter, entry.CostCenter)
			}
		}
	}
	for _, q := range []string{"work", "poison"} {
		c := d.qs[0].Work
		if q == "poison" {
			c = d.qs[0].Poison
		}
		if n, err := patterntest.MessageCount(ctx, c); err != nil || n != 0 {
			t.Errorf("%d messages left in the %s queue (%v)", n, q, err)
		}
	}
}

// seed writes department dept with n employees (the first its manager) and
// its directory entry, consistent, without the package.
func (d directory) seed(t testing.TB, dept string, n int, center string) {
	t.Helper()
	ctx := context.Background()
	emps := make([]Employee, n)
	for i := range emps {
		emps[i] = Employee{PartitionKey: dept, RowKey: empID(i), Name: fmt.Sprint(dept, "-", i), Phone: fmt.Sprint(i), CostCenter: center}
	}
	if _, err := d.emps.BulkWrite(ctx, emps, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	e := Entry{PartitionKey: "departments", RowKey: dept, Manager: empID(0), ManagerName: emps[0].Name, ManagerPhone: emps[0].Phone, CostCenter: center}
	if err := d.entries.Insert(ctx, &e); err != nil {
		t.Fatal(err)
	}
}

// TestDirectory runs each kind of change of the OtherPartition relations
// and checks the copies once the fan-out has run.
func TestDirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDirectory(t, env)
	meter := cost.NewMeter()
	p, managers, centers := d.over(t, env.With(meter.Policy()), patterntest.Crashy(), denormalize.Config{})
	run := func() {
		t.Helper()
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := patterntest.Drain(dctx, p, d.qs); err != nil {
			t.Fatal(err)
		}
		d.check(t)
	}

	// Sources and targets created in either order.
	for i, name := range []string{"Ann", "Bob"} {
		if err := managers.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(i), Name: name, Phone: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	entry := Entry{PartitionKey: "departments", RowKey: "Sales", Manager: empID(0), CostCenter: "CC-1"}
	if err := managers.InsertTarget(ctx, &entry); err != nil {
		t.Fatal(err)
	}
	if entry.ManagerName != "Ann" {
		t.Errorf("InsertTarget copied %+v", entry)
	}
	// The entry is also the source of the employees' cost center, which
	// the other Copies keeps: it learns of the new entry by Push.
	if err := centers.Push(ctx, "departments", "Sales"); err != nil {
		t.Fatal(err)
	}
	if err := centers.InsertTarget(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(2), Name: "Cy"}); err != nil {
		t.Fatal(err)
	}
	run()

	// The manager's phone: one message, one entry written.
	before := meter.Snapshot()
	if _, err := managers.ModifySource(ctx, "Sales", empID(0), func(e *Employee) error { e.Phone = "555"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.entries.Get(ctx, "departments", "Sales"); got.ManagerPhone != "0" {
		t.Logf("the entry caught up before the fan-out ran: %+v", got)
	}
	run()
	t.Logf("a manager's change and its fan-out: %v", meter.Snapshot().Sub(before))

	// A new manager, copied at once.
	if e, err := managers.ModifyTarget(ctx, "departments", "Sales", func(e *Entry) error { e.Manager = empID(1); return nil }, entity.ModifyOptions{}); err != nil || e.ManagerName != "Bob" {
		t.Fatalf("ModifyTarget: %+v, %v", e, err)
	}
	// The cost center fans out to every employee of the department.
	if _, err := centers.ModifySource(ctx, "departments", "Sales", func(e *Entry) error { e.CostCenter = "CC-2"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	run()
	// The manager leaves: the copy goes.
	if err := managers.DeleteSource(ctx, "Sales", empID(1)); err != nil {
		t.Fatal(err)
	}
	run()
	if got, _ := d.entries.Get(ctx, "departments", "Sales"); got.ManagerName != "" || got.Manager != empID(1) {
		t.Errorf("after the manager's delete: %+v", got)
	}
}

// TestFanOut changes the cost center of a department of 150 employees:
// more targets than a transaction holds, written by the fan-out.
func TestFanOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDirectory(t, env)
	d.seed(t, "Sales", 150, "CC-1")
	meter := cost.NewMeter()
	p, _, centers := d.over(t, env.With(meter.Policy()), patterntest.Crashy(), denormalize.Config{})
	before := meter.Snapshot()
	if _, err := centers.ModifySource(ctx, "departments", "Sales", func(e *Entry) error { e.CostCenter = "CC-2"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := patterntest.Drain(dctx, p, d.qs); err != nil {
		t.Fatal(err)
	}
	used := meter.Snapshot().Sub(before)
	d.check(t)
	if n := used.Count(cost.Table, cost.OpUpdate); n < 150 {
		t.Errorf("%d entity writes for 150 copies", n)
	}
	t.Logf("a change fanned out to 150 employees: %v", used)
}

// TestCrashAtEveryStep kills a change of a department's cost center and
// the worker that fans it out to three employees after each of their
// storage requests in turn — before and after the transaction that holds
// the change and its intent, the enqueue, the intent's delete, the
// receive, every read and copy of the fan-out and the message's delete —
// then relays and drains with healthy clients and checks that every
// employee holds the cost center the directory holds.
func TestCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	n := crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		d := newDirectory(t, env)
		d.seed(t, "Sales", 3, "CC-1")
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				cfg := patterntest.Crashy()
				cfg.Workers, cfg.BatchSize = 1, 1 // the same requests in the same order every run
				var once sync.Once
				finished := make(chan struct{})
				cfg.Hooks.Outcome = func(o eventual.Outcome) {
					if o.Result == eventual.Done {
						once.Do(func() { close(finished) })
					}
				}
				p, _, centers := d.over(t, kenv, cfg, denormalize.Config{})
				if _, err := centers.ModifySource(ctx, "departments", "Sales", func(e *Entry) error { e.CostCenter = "CC-2"; return nil }, entity.ModifyOptions{}); err != nil {
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
			Crashed: func(t *testing.T, passed int) {
				// Mid-way a copy may be behind, never anything but the old
				// or the new cost center.
				for _, e := range all(t, d.emps, "Sales") {
					if e.CostCenter != "CC-1" && e.CostCenter != "CC-2" {
						t.Errorf("after %d requests %s has cost center %q", passed, e.RowKey, e.CostCenter)
					}
				}
			},
			Recover: func(ctx context.Context) error { return d.recover(ctx, t) },
			Check:   func(t *testing.T) { d.check(t) },
		}
	}})
	// read entry, transaction, enqueue, delete intent, receive, read
	// source, query targets, three copies, read source again, delete
	// message: twelve requests.
	if n < 12 {
		t.Errorf("the scenario made %d requests, want at least 12", n)
	}
}

// TestLostRepliesFanOut runs writers of managers, of directory entries and
// of cost centers at once, with the workers running, while a tenth of the
// replies to every client is lost; once the queue drains, every copy
// agrees with its source and every change was applied once.
func TestLostRepliesFanOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDirectory(t, env)
	const depts, staff = 3, 4
	for i := range depts {
		d.seed(t, fmt.Sprint("D", i), staff, "CC-0")
	}
	f := faults.New(faults.Config{LoseReply: 0.1, Seed: 5})
	p, managers, centers := d.over(t, patterntest.Faulty(env, f), patterntest.Crashy(), denormalize.Config{Retry: entity.RetryPolicy{Attempts: 50}})
	pctx, stopWorkers := context.WithCancel(ctx)
	workers := make(chan error, 1)
	go func() { workers <- p.Run(pctx) }()

	var wg sync.WaitGroup
	var done counter
	record := func(k string, err error) {
		switch {
		case err == nil:
			done.add(k)
		case errors.Is(err, entity.ErrOutcomeUnknown):
			done.add(k + "?")
		default:
			t.Errorf("%s: %v", k, err)
		}
	}
	for w := range 3 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for i := range 10 {
				dept := fmt.Sprint("D", rng.IntN(depts))
				switch w {
				case 0:
					id := empID(rng.IntN(staff))
					_, err := managers.ModifySource(ctx, dept, id, func(e *Employee) error {
						e.Phone = fmt.Sprint("w", i)
						e.Edits++
						return nil
					}, entity.ModifyOptions{})
					record(dept+"/"+id, err)
				case 1:
					_, err := managers.ModifyTarget(ctx, "departments", dept, func(e *Entry) error {
						e.Manager = empID(rng.IntN(staff))
						return nil
					}, entity.ModifyOptions{})
					record("entry "+dept, err)
				case 2:
					_, err := centers.ModifySource(ctx, "departments", dept, func(e *Entry) error {
						e.CostCenter = fmt.Sprint("CC-", i+1)
						return nil
					}, entity.ModifyOptions{})
					record("center "+dept, err)
				}
			}
		})
	}
	wg.Wait()
	stopWorkers()
	if err := <-workers; err != nil {
		t.Fatal(err)
	}
	// Drain with the faults still on.
	dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := managers.Relay(dctx); err != nil {
		t.Fatal(err)
	}
	if _, err := centers.Relay(dctx); err != nil {
		t.Fatal(err)
	}
	if err := patterntest.Drain(dctx, p, d.qs); err != nil {
		t.Fatal(err)
	}
	st := f.Stats()
	t.Logf("%d requests, %d replies lost", st.Requests, st.LostReplies)
	if st.LostReplies == 0 {
		t.Fatal("no reply was lost")
	}
	d.check(t)
	for i := range depts {
		dept := fmt.Sprint("D", i)
		for _, e := range all(t, d.emps, dept) {
			k := dept + "/" + e.RowKey
			if n, maybe := done.get(k), done.get(k+"?"); int(e.Edits) < n || int(e.Edits) > n+maybe {
				t.Errorf("%s: %d edits stored, %d made (+%d unknown)", k, e.Edits, n, maybe)
			}
		}
	}
}
