package denormalize_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// guide is the guide's Sales partition in a table of its own: employees
// and departments with a copy of their manager's name and phone.
type guide struct {
	emps   *entity.Table[Employee]
	depts  *entity.Table[Department]
	bags   *entity.Table[entity.DynamicEntity]
	copies *denormalize.Copies[Department, Employee]
}

// newGuide makes a table on e and the Copies of its manager relation.
func newGuide(t testing.TB, e *integration.Env, cfg denormalize.Config) guide {
	t.Helper()
	g := guide{emps: patterntest.Table[Employee](t, e)}
	g.depts = patterntest.View[Department](t, e, g.emps)
	g.bags = patterntest.View[entity.DynamicEntity](t, e, g.emps)
	var err error
	if g.copies, err = denormalize.New(g.depts, g.emps, cfg, managerRel()); err != nil {
		t.Fatal(err)
	}
	return g
}

// over returns the same guide with clients built from e (another view of
// the same account: a fault injector, a meter).
func (g guide) over(t testing.TB, e *integration.Env, cfg denormalize.Config) guide {
	t.Helper()
	h := guide{emps: patterntest.View[Employee](t, e, g.emps), depts: patterntest.View[Department](t, e, g.emps), bags: patterntest.View[entity.DynamicEntity](t, e, g.emps)}
	var err error
	if h.copies, err = denormalize.New(h.depts, h.emps, cfg, managerRel()); err != nil {
		t.Fatal(err)
	}
	return h
}

func (g guide) check(t testing.TB, pk string) partition {
	t.Helper()
	p, err := readPartition(context.Background(), g.bags, pk)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range p.disagreements() {
		t.Error(d)
	}
	return p
}

// TestGuideDepartment runs the guide's example step by step: the
// department is created with its manager's details, follows the manager's
// changes in the same transaction, follows a change of manager, and loses
// the copy when the manager is deleted — and a point query of the
// department returns it all.
func TestGuideDepartment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	g := newGuide(t, env.With(meter.Policy()), denormalize.Config{})
	for _, e := range []Employee{
		{PartitionKey: "Sales", RowKey: empID(123), Name: "Jones, Jeff", Phone: "425-555-0101", Title: "Director"},
		{PartitionKey: "Sales", RowKey: empID(124), Name: "Smith, Sue", Phone: "425-555-0102", Title: "Engineer"},
	} {
		if err := g.copies.InsertSource(ctx, &e); err != nil {
			t.Fatal(err)
		}
	}

	d := Department{PartitionKey: "Sales", RowKey: "dept Sales", ManagerID: empID(123), Budget: 1000}
	if err := g.copies.InsertTarget(ctx, &d); err != nil {
		t.Fatal(err)
	}
	if d.ManagerName != "Jones, Jeff" || d.ManagerPhone != "425-555-0101" || d.ETag == "" {
		t.Errorf("InsertTarget left %+v", d)
	}

	// One point query returns the department with its manager's details.
	before := meter.Snapshot()
	got, err := g.depts.Get(ctx, "Sales", "dept Sales")
	if err != nil {
		t.Fatal(err)
	}
	if n := meter.Snapshot().Sub(before).Total(); n != 1 {
		t.Errorf("the read cost %d transactions, want 1", n)
	}
	if got.ManagerName != "Jones, Jeff" || got.ManagerPhone != "425-555-0101" {
		t.Errorf("department read as %+v", got)
	}

	// The manager's new phone reaches the department in the same
	// transaction: read employee, read department, one batch.
	before = meter.Snapshot()
	e, err := g.copies.ModifySource(ctx, "Sales", empID(123), func(e *Employee) error {
		e.Phone = "425-555-0199"
		e.Edits++
		return nil
	}, entity.ModifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	used := meter.Snapshot().Sub(before)
	if used.Total() != 3 || used.Count(cost.Table, cost.OpBatch) != 1 {
		t.Errorf("ModifySource cost %v, want 2 reads and 1 batch", used)
	}
	if e.Phone != "425-555-0199" || e.ETag == "" {
		t.Errorf("ModifySource returned %+v", e)
	}
	if got, _ := g.depts.Get(ctx, "Sales", "dept Sales"); got.ManagerPhone != "425-555-0199" {
		t.Errorf("department has phone %q after the manager's change", got.ManagerPhone)
	}

	// A change of a property that is not copied leaves the department
	// alone: no read of it, no write.
	dept, _ := g.depts.Get(ctx, "Sales", "dept Sales")
	before = meter.Snapshot()
	if _, err := g.copies.ModifySource(ctx, "Sales", empID(123), func(e *Employee) error { e.Title = "VP"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := meter.Snapshot().Sub(before).Total(); n != 2 {
		t.Errorf("a change of an uncopied property cost %d transactions, want 2", n)
	}
	if again, _ := g.depts.Get(ctx, "Sales", "dept Sales"); again.ETag != dept.ETag {
		t.Error("a change of an uncopied property wrote the department")
	}

	// A change that leaves the reference alone reads no employee.
	before = meter.Snapshot()
	if _, err := g.copies.ModifyTarget(ctx, "Sales", "dept Sales", func(d *Department) error { d.Budget += 10; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := meter.Snapshot().Sub(before).Total(); n != 2 {
		t.Errorf("a change of the budget cost %d transactions, want 2", n)
	}

	// A new manager: the department copies the new manager's details.
	d2, err := g.copies.ModifyTarget(ctx, "Sales", "dept Sales", func(d *Department) error {
		d.ManagerID = empID(124)
		d.ManagerName = "not a copy" // overwritten by the copy
		return nil
	}, entity.ModifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d2.ManagerName != "Smith, Sue" || d2.ManagerPhone != "425-555-0102" || d2.Budget != 1010 {
		t.Errorf("after the change of manager: %+v", d2)
	}
	g.check(t, "Sales")

	// The old manager's changes no longer reach it.
	if _, err := g.copies.ModifySource(ctx, "Sales", empID(123), func(e *Employee) error { e.Phone = "000"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	g.check(t, "Sales")

	// The manager leaves: the copy goes with them.
	if err := g.copies.DeleteSource(ctx, "Sales", empID(124)); err != nil {
		t.Fatal(err)
	}
	if err := g.copies.DeleteSource(ctx, "Sales", empID(124)); err != nil {
		t.Errorf("a second delete: %v", err)
	}
	got, _ = g.depts.Get(ctx, "Sales", "dept Sales")
	if got.ManagerID != empID(124) || got.ManagerName != "" || got.ManagerPhone != "" {
		t.Errorf("after the manager's delete: %+v", got)
	}
	bag, _ := g.bags.Get(ctx, "Sales", "dept Sales")
	if _, ok := bag.Properties["ManagerName"]; ok {
		t.Error("the department still has a ManagerName property")
	}

	// A manager hired after the department refers to them gets copied in.
	if err := g.copies.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(124), Name: "Smith, Sue", Phone: "425-555-0177"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := g.depts.Get(ctx, "Sales", "dept Sales"); got.ManagerPhone != "425-555-0177" {
		t.Errorf("after the manager's insert the department has %+v", got)
	}
	g.check(t, "Sales")
}

// TestRefresh repairs a department written behind the package's back.
func TestRefresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGuide(t, env, denormalize.Config{})
	if err := g.copies.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(1), Name: "Ann", Phone: "1"}); err != nil {
		t.Fatal(err)
	}
	d := Department{PartitionKey: "Sales", RowKey: "dept A", ManagerID: empID(1), ManagerName: "stale"}
	if err := g.depts.Insert(ctx, &d); err != nil {
		t.Fatal(err)
	}
	got, err := g.copies.Refresh(ctx, "Sales", "dept A")
	if err != nil {
		t.Fatal(err)
	}
	if got.ManagerName != "Ann" || got.ManagerPhone != "1" {
		t.Errorf("Refresh returned %+v", got)
	}
	stored, _ := g.depts.Get(ctx, "Sales", "dept A")
	if stored.ETag != got.ETag || stored.ManagerName != "Ann" {
		t.Errorf("stored %+v, Refresh returned %+v", stored, got)
	}
	// Current: no write.
	again, err := g.copies.Refresh(ctx, "Sales", "dept A")
	if err != nil || again.ETag != got.ETag {
		t.Errorf("a second Refresh: %v, ETag %q then %q", err, got.ETag, again.ETag)
	}
	if _, err := g.copies.Refresh(ctx, "Sales", "dept none"); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("Refresh of a missing target: %v", err)
	}

	// A source changed behind the package's back: Push.
	e, _ := g.emps.Get(ctx, "Sales", empID(1))
	e.Phone = "2"
	if err := g.emps.Update(ctx, &e, entity.Replace); err != nil {
		t.Fatal(err)
	}
	if err := g.copies.Push(ctx, "Sales", empID(1)); err != nil {
		t.Fatal(err)
	}
	if got, _ := g.depts.Get(ctx, "Sales", "dept A"); got.ManagerPhone != "2" {
		t.Errorf("after Push the department has phone %q", got.ManagerPhone)
	}
	g.check(t, "Sales")
	// Current: nothing written.
	e, _ = g.emps.Get(ctx, "Sales", empID(1))
	if err := g.copies.Push(ctx, "Sales", empID(1)); err != nil {
		t.Fatal(err)
	}
	if again, _ := g.emps.Get(ctx, "Sales", empID(1)); again.ETag != e.ETag {
		t.Error("a Push with every copy current wrote the source")
	}
	if err := g.copies.Push(ctx, "Sales", empID(9)); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("Push of a missing source: %v", err)
	}
}

// TestConcurrentWriters runs writers that change managers' copied
// properties and writers that reassign departments at once, in one
// partition, while a reader checks that every department agrees with its
// manager in every snapshot; afterwards every change was applied exactly
// once.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := denormalize.Config{Retry: entity.RetryPolicy{Attempts: 100}}
	g := newGuide(t, env, cfg)
	const emps, depts, writers, rounds = 8, 4, 16, 12
	for i := range emps {
		if err := g.copies.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(i), Name: fmt.Sprint("emp", i), Phone: "0"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range depts {
		if err := g.copies.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: fmt.Sprint(deptPrefix, i), ManagerID: empID(i)}); err != nil {
			t.Fatal(err)
		}
	}

	stop := make(chan struct{})
	var snapshots, bad int
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			p, err := readPartition(ctx, g.bags, "Sales")
			if err != nil {
				t.Error(err)
				return
			}
			snapshots++
			for _, d := range p.disagreements() {
				bad++
				t.Error("mid-way:", d)
			}
		}
	}()

	var wg sync.WaitGroup
	var done counter
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range rounds {
				if w%2 == 0 {
					id := empID(rng.IntN(emps))
					_, err := g.copies.ModifySource(ctx, "Sales", id, func(e *Employee) error {
						e.Phone = fmt.Sprintf("w%d-%d", w, i)
						e.Edits++
						return nil
					}, entity.ModifyOptions{})
					if err != nil {
						t.Errorf("ModifySource: %v", err)
						continue
					}
					done.add(id)
				} else {
					dk := fmt.Sprint(deptPrefix, rng.IntN(depts))
					_, err := g.copies.ModifyTarget(ctx, "Sales", dk, func(d *Department) error {
						d.ManagerID = empID(rng.IntN(emps))
						d.Budget++
						return nil
					}, entity.ModifyOptions{})
					if err != nil {
						t.Errorf("ModifyTarget: %v", err)
						continue
					}
					done.add(dk)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-readerDone
	if snapshots == 0 {
		t.Error("the reader saw no snapshot")
	}
	t.Logf("%d snapshots read while writing, %d with a disagreement", snapshots, bad)

	p := g.check(t, "Sales")
	for id, e := range p.emps {
		if int(e.Edits) != done.get(id) {
			t.Errorf("%s: %d edits stored, %d made", id, e.Edits, done.get(id))
		}
	}
	for dk, d := range p.depts {
		if int(d.Budget) != done.get(dk) {
			t.Errorf("%s: budget %d, %d changes made", dk, d.Budget, done.get(dk))
		}
	}
}

// TestLostReplies loses a fifth of the replies to every request of the
// writers: azcore resends, the service answers 412 or 409 to changes it
// applied, and the package must neither misreport nor apply twice.
func TestLostReplies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGuide(t, env, denormalize.Config{})
	const emps, depts = 4, 3
	for i := range emps {
		if err := g.copies.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(i), Name: fmt.Sprint("emp", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range depts {
		if err := g.copies.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: fmt.Sprint(deptPrefix, i), ManagerID: empID(i)}); err != nil {
			t.Fatal(err)
		}
	}
	f := faults.New(faults.Config{LoseReply: 0.2, Seed: 11})
	h := g.over(t, patterntest.Faulty(env, f), denormalize.Config{Retry: entity.RetryPolicy{Attempts: 30}})
	var done counter
	unknown := 0
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 60 {
		var err error
		var k string
		switch i % 3 {
		case 0, 1:
			k = empID(rng.IntN(emps))
			_, err = h.copies.ModifySource(ctx, "Sales", k, func(e *Employee) error {
				e.Phone = fmt.Sprint("p", i)
				e.Name = fmt.Sprint("emp-", i)
				e.Edits++
				return nil
			}, entity.ModifyOptions{})
		case 2:
			k = fmt.Sprint(deptPrefix, rng.IntN(depts))
			_, err = h.copies.ModifyTarget(ctx, "Sales", k, func(d *Department) error {
				d.ManagerID = empID(rng.IntN(emps))
				d.Budget++
				return nil
			}, entity.ModifyOptions{})
		}
		switch {
		case err == nil:
			done.add(k)
		case errors.Is(err, entity.ErrOutcomeUnknown):
			unknown++
			t.Logf("outcome unknown: %v", err)
			done.add(k + "?")
		default:
			t.Fatalf("write %d: %v", i, err)
		}
	}
	st := f.Stats()
	if st.LostReplies == 0 {
		t.Fatal("no reply was lost")
	}
	t.Logf("%d requests, %d replies lost, %d outcomes unknown", st.Requests, st.LostReplies, unknown)
	p := g.check(t, "Sales")
	for id, e := range p.emps {
		if n, maybe := done.get(id), done.get(id+"?"); int(e.Edits) < n || int(e.Edits) > n+maybe {
			t.Errorf("%s: %d edits stored, %d made (+%d unknown)", id, e.Edits, n, maybe)
		}
	}
	for dk, d := range p.depts {
		if n, maybe := done.get(dk), done.get(dk+"?"); int(d.Budget) < n || int(d.Budget) > n+maybe {
			t.Errorf("%s: budget %d, %d changes made (+%d unknown)", dk, d.Budget, n, maybe)
		}
	}
}

// TestRefusals checks that bad arguments are refused before any request.
func TestRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	g := newGuide(t, env.With(meter.Policy()), denormalize.Config{})
	before := meter.Snapshot()
	if err := g.copies.InsertSource(ctx, &Employee{PartitionKey: "Sa/les", RowKey: "x"}); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("a key with '/': %v", err)
	}
	if _, err := g.copies.ModifySource(ctx, "Sales", "x#", func(*Employee) error { return nil }, entity.ModifyOptions{}); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("a key with '#': %v", err)
	}
	if _, err := g.copies.ModifySource(ctx, "Sales", "x", nil, entity.ModifyOptions{}); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("a nil change: %v", err)
	}
	if err := g.copies.InsertTarget(ctx, nil); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("a nil target: %v", err)
	}
	if n := meter.Snapshot().Sub(before).Total(); n != 0 {
		t.Errorf("refusals sent %d requests", n)
	}

	// A change that moves the entity, a department in another partition
	// than its manager: typed errors, nothing written.
	if err := g.copies.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(1), Name: "Ann"}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.copies.ModifySource(ctx, "Sales", empID(1), func(e *Employee) error { e.RowKey = empID(2); return nil }, entity.ModifyOptions{}); !errors.Is(err, denormalize.ErrKeysChanged) {
		t.Errorf("a change of the keys: %v", err)
	}
	bad := Department{PartitionKey: "Sales", RowKey: "dept X", ManagerID: empID(1)}
	if err := g.copies.InsertTarget(ctx, &bad); err != nil {
		t.Fatal(err)
	}
	g2 := managerRel()
	g2.Source = func(d *Department) (denormalize.Key, bool) {
		return denormalize.Key{PartitionKey: "Marketing", RowKey: d.ManagerID}, true
	}
	c2, err := denormalize.New(g.depts, g.emps, denormalize.Config{}, g2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.ModifyTarget(ctx, "Sales", "dept X", func(*Department) error { return nil }, entity.ModifyOptions{}); !errors.Is(err, denormalize.ErrPlacement) {
		t.Errorf("a SamePartition source in another partition: %v", err)
	}
	var se *denormalize.StepError
	if _, err := c2.Refresh(ctx, "Sales", "dept X"); !errors.As(err, &se) || se.Relation != "manager" {
		t.Errorf("the error does not name the relation: %v", err)
	}
}

// TestConfig checks the declarations New refuses.
func TestConfig(t *testing.T) {
	t.Parallel()
	g := newGuide(t, env, denormalize.Config{})
	other := patterntest.Table[Department](t, env)
	mod := func(f func(r *denormalize.Relation[Department, Employee])) denormalize.Relation[Department, Employee] {
		r := managerRel()
		f(&r)
		return r
	}
	for name, c := range map[string]struct {
		depts *entity.Table[Department]
		rels  []denormalize.Relation[Department, Employee]
		field string
	}{
		"none":       {g.depts, nil, "relations"},
		"empty name": {g.depts, []denormalize.Relation[Department, Employee]{mod(func(r *denormalize.Relation[Department, Employee]) { r.Name = "" })}, "Name"},
		"bad name":   {g.depts, []denormalize.Relation[Department, Employee]{mod(func(r *denormalize.Relation[Department, Employee]) { r.Name = "a-b" })}, "Name"},
		"no source":  {g.depts, []denormalize.Relation[Department, Employee]{mod(func(r *denormalize.Relation[Department, Employee]) { r.Source = nil })}, "Source"},
		"no targets": {g.depts, []denormalize.Relation[Department, Employee]{mod(func(r *denormalize.Relation[Department, Employee]) { r.Targets = nil })}, "Targets"},
		"no fields":  {g.depts, []denormalize.Relation[Department, Employee]{mod(func(r *denormalize.Relation[Department, Employee]) { r.Fields = nil })}, "Fields"},
		"bad field":  {g.depts, []denormalize.Relation[Department, Employee]{mod(func(r *denormalize.Relation[Department, Employee]) { r.Fields[0].To = "Manager Name" })}, "Fields"},
		"key field":  {g.depts, []denormalize.Relation[Department, Employee]{mod(func(r *denormalize.Relation[Department, Employee]) { r.Fields[0].To = "RowKey" })}, "Fields"},
		"twice":      {g.depts, []denormalize.Relation[Department, Employee]{mod(func(r *denormalize.Relation[Department, Employee]) { r.Fields[1].To = r.Fields[0].To })}, "Fields"},
		"placement":  {g.depts, []denormalize.Relation[Department, Employee]{mod(func(r *denormalize.Relation[Department, Employee]) { r.Placement = 7 })}, "Placement"},
		"same name": {g.depts, []denormalize.Relation[Department, Employee]{managerRel(), mod(func(r *denormalize.Relation[Department, Employee]) {
			r.Fields = []denormalize.Field{{From: "Title", To: "Budget"}} // a property Department stores
		})}, "Name"},
		"same To":      {g.depts, []denormalize.Relation[Department, Employee]{managerRel(), mod(func(r *denormalize.Relation[Department, Employee]) { r.Name = "deputy" })}, "Fields"},
		"two tables":   {other, []denormalize.Relation[Department, Employee]{managerRel()}, "Placement"},
		"no processor": {g.depts, []denormalize.Relation[Department, Employee]{mod(func(r *denormalize.Relation[Department, Employee]) { r.Placement = denormalize.OtherPartition })}, "Config.Processor"},
	} {
		_, err := denormalize.New(c.depts, g.emps, denormalize.Config{}, c.rels...)
		var ce *denormalize.ConfigError
		if !errors.As(err, &ce) || ce.Field != c.field || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("%s: got %v, want a ConfigError about %s", name, err, c.field)
		}
	}
	if _, err := denormalize.New[Department, Employee](nil, g.emps, denormalize.Config{}, managerRel()); err == nil {
		t.Error("nil targets accepted")
	}
}

// TestNil calls every method on a nil and a zero Copies: typed errors, no
// panic, no request.
func TestNil(t *testing.T) {
	ctx := context.Background()
	for _, c := range []*denormalize.Copies[Department, Employee]{nil, {}} {
		errs := []error{
			c.InsertSource(ctx, &Employee{}),
			c.DeleteSource(ctx, "a", "b"),
			c.Push(ctx, "a", "b"),
			c.InsertTarget(ctx, &Department{}),
			c.Repair(ctx, drift.Finding{}),
		}
		_, err := c.ModifySource(ctx, "a", "b", func(*Employee) error { return nil }, entity.ModifyOptions{})
		errs = append(errs, err)
		_, err = c.ModifyTarget(ctx, "a", "b", func(*Department) error { return nil }, entity.ModifyOptions{})
		errs = append(errs, err)
		_, err = c.Refresh(ctx, "a", "b")
		errs = append(errs, err)
		_, err = c.Relay(ctx)
		errs = append(errs, err)
		_, err = c.Rebuild(ctx, denormalize.CheckOptions{})
		errs = append(errs, err)
		for _, err := range c.Check(ctx, denormalize.CheckOptions{}) {
			errs = append(errs, err)
		}
		for i, err := range errs {
			if !errors.Is(err, entity.ErrInvalid) {
				t.Errorf("call %d on %#v: %v", i, c, err)
			}
		}
	}
}
