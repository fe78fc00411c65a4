package denormalize_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// rawGet reads one entity with a plain aztables client of env (no
// tablekit decoding): its properties as JSON values, and whether it
// exists.
func rawGet(t testing.TB, table, pk, rk string) (map[string]any, bool) {
	t.Helper()
	resp, err := env.TableService.NewClient(table).GetEntity(context.Background(), pk, rk, nil)
	if patterntest.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("raw read of %s/%s in %s: %v", pk, rk, table, err)
	}
	var props map[string]any
	if err := json.Unmarshal(resp.Value, &props); err != nil {
		t.Fatal(err)
	}
	return props, true
}

// rawRows lists the entities of one partition of table whose RowKey
// starts with prefix, with a plain aztables client.
func rawRows(t testing.TB, table, pk, prefix string) []map[string]any {
	t.Helper()
	filter := "PartitionKey eq '" + strings.ReplaceAll(pk, "'", "''") + "'"
	var out []map[string]any
	for p := env.TableService.NewClient(table).NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter}); p.More(); {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Entities {
			var props map[string]any
			if err := json.Unmarshal(raw, &props); err != nil {
				t.Fatal(err)
			}
			if rk, _ := props["RowKey"].(string); strings.HasPrefix(rk, prefix) {
				out = append(out, props)
			}
		}
	}
	return out
}

// loseFrom loses the reply of every request to table from the first
// $batch on (a $batch names no table in its path: the view it is used in
// must send transactions to table only): the transaction is executed and its replies are lost, and so
// are those of every read that could settle it.
func loseFrom(table string) (*faults.Injector, *atomic.Bool) {
	var armed atomic.Bool
	inj := faults.New(faults.Config{LoseReply: 1, Match: func(r *http.Request) bool {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/$batch") {
			armed.Store(true) // the view's only transactions are on table
			return true
		}
		return armed.Load() && strings.Contains(r.URL.Path, table)
	}})
	return inj, &armed
}

// TestDeleteSourceUnknownThenReadFails loses the replies of DeleteSource's
// transaction, which the service executes, and of every read after it:
// the call cannot tell whether the source was deleted, and must say so
// (entity.ErrOutcomeUnknown) rather than report the failed read of its
// next round as if nothing had been tried. The delete was applied: the
// source is gone and, once the fan-out has run, so are its copies.
func TestDeleteSourceUnknownThenReadFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("SamePartition", func(t *testing.T) {
		t.Parallel()
		g := newGuide(t, env, denormalize.Config{})
		seedGuide(t, g)
		inj, armed := loseFrom(g.emps.Name())
		h := g.over(t, env.With(inj), denormalize.Config{})
		err := h.copies.DeleteSource(ctx, "Sales", empID(1))
		if !armed.Load() || inj.Stats().LostReplies == 0 {
			t.Fatal("no transaction reply was lost")
		}
		if !errors.Is(err, entity.ErrOutcomeUnknown) {
			t.Errorf("DeleteSource: %v, want an error matching entity.ErrOutcomeUnknown", err)
		}
		t.Logf("DeleteSource: %v", err)
		if _, ok := rawGet(t, g.emps.Name(), "Sales", empID(1)); ok {
			t.Error("the source is still there")
		}
		d, ok := rawGet(t, g.emps.Name(), "Sales", "dept Sales")
		if !ok {
			t.Fatal("the department is gone")
		}
		if _, has := d["ManagerName"]; has || d["ManagerID"] != empID(1) {
			t.Errorf("the department of the deleted manager holds %v", d)
		}
	})
	t.Run("OtherPartition", func(t *testing.T) {
		t.Parallel()
		d := newDirectory(t, env)
		d.seed(t, "Sales", 3, "CC-1")
		inj, armed := loseFrom(d.emps.Name())
		_, managers, _ := d.over(t, env.With(inj), patterntest.Crashy(), denormalize.Config{})
		err := managers.DeleteSource(ctx, "Sales", empID(0))
		if !armed.Load() || inj.Stats().LostReplies == 0 {
			t.Fatal("no transaction reply was lost")
		}
		if !errors.Is(err, entity.ErrOutcomeUnknown) {
			t.Errorf("DeleteSource: %v, want an error matching entity.ErrOutcomeUnknown", err)
		}
		t.Logf("DeleteSource: %v", err)
		if _, ok := rawGet(t, d.emps.Name(), "Sales", empID(0)); ok {
			t.Error("the source is still there")
		}
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := d.recover(rctx, t); err != nil {
			t.Fatal(err)
		}
		e, ok := rawGet(t, d.entries.Name(), "departments", "Sales")
		if !ok {
			t.Fatal("the entry is gone")
		}
		if _, has := e["ManagerName"]; has {
			t.Errorf("the entry of the deleted manager holds %v", e)
		}
		if left := rawRows(t, d.emps.Name(), "Sales", "tablekit.outbox_"); len(left) != 0 {
			t.Errorf("intents left: %v", left)
		}
		d.check(t)
	})
}

// longTable creates a table whose name is 63 characters long, the most
// the service allows, deleted when the test ends.
func longTable[T any](t *testing.T) *entity.Table[T] {
	t.Helper()
	name := (env.QueueName(t) + strings.Repeat("x", 63))[:63]
	name = strings.ReplaceAll(name, "-", "x")
	if _, err := env.TableService.CreateTable(context.Background(), name, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = env.TableService.DeleteTable(context.Background(), name, nil) })
	tbl, err := entity.NewTableFromService[T](env.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestKind checks the fan-out's message kind: tables with the longest
// names get a derived kind that works, and a Kind that cannot work, or
// is taken on the processor, is this package's *ConfigError naming
// Config.Kind (matching entity.ErrInvalid), before anything is sent.
func TestKind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	emps, entries := longTable[Employee](t), longTable[Entry](t)
	qs := patterntest.Queues(t, env, 1)
	p, err := eventual.New(qs, nil, patterntest.Fast())
	if err != nil {
		t.Fatal(err)
	}
	c, err := denormalize.New(entries, emps, denormalize.Config{Processor: p, Outbox: eventual.OutboxConfig{Grace: -1}}, directoryRel())
	if err != nil {
		t.Fatalf("New with two 63-character table names: %v", err)
	}
	if err := c.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(0), Name: "Ann"}); err != nil {
		t.Fatal(err)
	}
	if err := c.InsertTarget(ctx, &Entry{PartitionKey: "departments", RowKey: "Sales", Manager: empID(0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ModifySource(ctx, "Sales", empID(0), func(e *Employee) error { e.Name = "Anne"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := patterntest.Drain(dctx, p, qs); err != nil {
		t.Fatal(err)
	}
	if e, _ := rawGet(t, entries.Name(), "departments", "Sales"); e["ManagerName"] != "Anne" {
		t.Errorf("the fan-out of the derived kind did not run: the entry holds %v", e)
	}

	for name, c := range map[string]struct {
		cfg    denormalize.Config
		reason string
	}{
		"taken":      {denormalize.Config{}, "has a handler on the processor already"},
		"too long":   {denormalize.Config{Kind: strings.Repeat("k", 129)}, "longer than 128 bytes"},
		"bad char":   {denormalize.Config{Kind: "a kind"}, "has characters other than"},
		"bad outbox": {denormalize.Config{Kind: "other.v1", Outbox: eventual.OutboxConfig{Prefix: "a/b"}}, "Prefix"},
	} {
		c.cfg.Processor = p
		_, err := denormalize.New(entries, emps, c.cfg, directoryRel())
		var ce *denormalize.ConfigError
		switch {
		case !errors.As(err, &ce) || !errors.Is(err, entity.ErrInvalid):
			t.Errorf("%s: %v, want a *denormalize.ConfigError", name, err)
		case errors.Is(err, eventual.ErrInvalidConfig):
			t.Errorf("%s: %v matches eventual.ErrInvalidConfig", name, err)
		case !strings.HasPrefix(err.Error(), "denormalize: invalid ") || strings.Contains(err.Error(), "eventual: ") || !strings.Contains(err.Error(), c.reason):
			t.Errorf("%s: %q, want one prefix and %q", name, err, c.reason)
		case name != "bad outbox" && ce.Field != "Config.Kind", name == "bad outbox" && !strings.HasPrefix(ce.Field, "Config.Outbox."):
			t.Errorf("%s: field %q", name, ce.Field)
		}
	}
}

// keyedCostCenterRel is costCenterRel naming its targets key by key: n
// employees of the department, most of which need not exist.
func keyedCostCenterRel(n int) denormalize.Relation[Employee, Entry] {
	r := costCenterRel()
	r.Targets = func(d *Entry) denormalize.Targets {
		ks := make([]denormalize.Key, n)
		for i := range ks {
			ks[i] = denormalize.Key{PartitionKey: d.RowKey, RowKey: empID(i)}
		}
		return denormalize.Targets{Keys: ks}
	}
	return r
}

// TestLargeFanOut changes a source whose relation names 1,250 target keys
// (about 50 KiB of them, more than one queue message holds once
// enveloped and base64-encoded): the change's fan-out is split into
// messages that each fit, all committed with it, and once they have run
// every target holds the new copy. A fan-out too large for one
// transaction is refused with ErrFanOutTooLarge before anything is
// written.
func TestLargeFanOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDirectory(t, env)
	const n = 1250
	var exist []string
	var emps []Employee
	for i := 0; i < n; i += 125 {
		exist = append(exist, empID(i))
	}
	exist = append(exist, empID(n-1))
	for _, id := range exist {
		emps = append(emps, Employee{PartitionKey: "Sales", RowKey: id, Name: id, CostCenter: "CC-1"})
	}
	if _, err := d.emps.BulkWrite(ctx, emps, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := d.entries.Insert(ctx, &Entry{PartitionKey: "departments", RowKey: "Sales", CostCenter: "CC-1"}); err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		hookErrs []error
	)
	cfg := patterntest.Crashy()
	cfg.Hooks.Error = func(err error) { mu.Lock(); hookErrs = append(hookErrs, err); mu.Unlock() }
	p, err := eventual.New(patterntest.SameQueues(t, env, d.qs), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	centers, err := denormalize.New(d.emps, d.entries, denormalize.Config{Processor: p, Outbox: eventual.OutboxConfig{Grace: -1}}, keyedCostCenterRel(n))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := centers.ModifySource(ctx, "departments", "Sales", func(e *Entry) error { e.CostCenter = "CC-2"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(hookErrs) > 0 {
		t.Errorf("the fan-out's send failed: %v", hookErrs)
	}
	mu.Unlock()
	queued, err := patterntest.MessageCount(ctx, d.qs[0].Work)
	if err != nil {
		t.Fatal(err)
	}
	if queued < 2 {
		t.Errorf("%d fan-out messages queued, want the change split into several", queued)
	}
	dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := patterntest.Drain(dctx, p, d.qs); err != nil {
		t.Fatal(err)
	}
	for _, id := range exist {
		if e, _ := rawGet(t, d.emps.Name(), "Sales", id); e["CostCenter"] != "CC-2" {
			t.Errorf("employee %s holds %v after the fan-out", id, e["CostCenter"])
		}
	}
	if left := rawRows(t, d.entries.Name(), "departments", "tablekit.outbox_"); len(left) != 0 {
		t.Errorf("%d intents left", len(left))
	}
	if n, err := patterntest.MessageCount(ctx, d.qs[0].Poison); err != nil || n != 0 {
		t.Errorf("%d poisoned messages (%v)", n, err)
	}

	// 60,000 keys take more messages than one change commits: refused,
	// nothing written.
	huge, err := denormalize.New(d.emps, d.entries, denormalize.Config{Processor: p, Kind: "huge.v1"}, keyedCostCenterRel(60000))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := rawGet(t, d.entries.Name(), "departments", "Sales")
	_, err = huge.ModifySource(ctx, "departments", "Sales", func(e *Entry) error { e.CostCenter = "CC-3"; return nil }, entity.ModifyOptions{})
	var fe *denormalize.FanOutError
	if !errors.Is(err, denormalize.ErrFanOutTooLarge) || !errors.As(err, &fe) || fe.Messages <= fe.Limit {
		t.Errorf("a fan-out to 60,000 keys: %v, want a *FanOutError", err)
	} else {
		t.Log(err)
	}
	if after, _ := rawGet(t, d.entries.Name(), "departments", "Sales"); after["Timestamp"] != before["Timestamp"] || before["Timestamp"] == nil || after["CostCenter"] != "CC-2" {
		t.Errorf("the refused change was written: %v", after)
	}
	if left := rawRows(t, d.entries.Name(), "departments", "tablekit.outbox_"); len(left) != 0 {
		t.Errorf("the refused change left %d intents", len(left))
	}
}

// TestInsertSourceCountsFences inserts a source into a partition whose
// departments, which its relation's Targets names, refer to other
// managers: an insert fences each, so 99 work, and 100 are refused with a
// *CopiesError that says what it counted, nothing written.
func TestInsertSourceCountsFences(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, n := range []int{99, 100} {
		g := newGuide(t, env, denormalize.Config{})
		depts := make([]entity.DynamicEntity, n)
		for i := range depts {
			depts[i] = entity.DynamicEntity{PartitionKey: "Sales", RowKey: fmt.Sprintf("%s%03d", deptPrefix, i), Properties: map[string]any{"ManagerID": "someone else", "Budget": int64(i)}}
		}
		if _, err := g.bags.BulkWrite(ctx, depts, entity.BulkOptions{}); err != nil {
			t.Fatal(err)
		}
		err := g.copies.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(1), Name: "Ann"})
		_, inserted := rawGet(t, g.emps.Name(), "Sales", empID(1))
		if n == 99 {
			if err != nil || !inserted {
				t.Errorf("%d departments: %v, inserted %v", n, err, inserted)
			}
			continue
		}
		var ce *denormalize.CopiesError
		if !errors.Is(err, denormalize.ErrTooManyCopies) || !errors.As(err, &ce) || ce.Copies != 0 || ce.Fences != 100 || ce.Limit != 99 {
			t.Errorf("%d departments: %v, want a *CopiesError counting 0 copies and 100 fences over 99", n, err)
		} else if !strings.Contains(err.Error(), "fences 100 other targets") {
			t.Errorf("the error does not say what it counted: %v", err)
		}
		if inserted {
			t.Errorf("%d departments: the refused insert was written", n)
		}
	}
}

// TestInsertSourceFencesTargetsOfOtherSources shows why InsertSource
// fences the targets Relation.Targets names that refer to another source,
// and so why they count against its transaction. A department refers to
// manager A; ModifyTarget makes it refer to B, which it reads missing;
// before its write is sent, InsertSource inserts B. B's insert fences the
// department (which still refers to A), so the ModifyTarget's write fails
// its condition and its next round reads B and copies it: the department
// ends referring to B with B's copy (read back raw). Without that fence,
// it would refer to B holding no copy, at every instant after.
//
// And the price: 120 departments naming A, the insert of B writes no copy
// and fences all 120, more than its transaction holds: a *CopiesError
// counting them, nothing written.
func TestInsertSourceFencesTargetsOfOtherSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGuide(t, env, denormalize.Config{})
	a := Employee{PartitionKey: "Sales", RowKey: empID(1), Name: "Ann", Phone: "1"}
	if err := g.copies.InsertSource(ctx, &a); err != nil {
		t.Fatal(err)
	}
	if err := g.copies.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: deptPrefix + "000", ManagerID: a.RowKey}); err != nil {
		t.Fatal(err)
	}
	b := Employee{PartitionKey: "Sales", RowKey: empID(2), Name: "Bob", Phone: "2"}
	var inserted error
	race := &patterntest.Before{Match: patterntest.Writes, Fn: func() { inserted = g.copies.InsertSource(ctx, &b) }}
	var rounds atomic.Int32
	h := g.over(t, env.With(race), denormalize.Config{})
	d, err := h.copies.ModifyTarget(ctx, "Sales", deptPrefix+"000", func(d *Department) error {
		rounds.Add(1)
		d.ManagerID = b.RowKey
		return nil
	}, entity.ModifyOptions{})
	if err != nil || inserted != nil {
		t.Fatalf("ModifyTarget: %+v, %v; InsertSource between its read and its write: %v", d, err, inserted)
	}
	props, _ := rawGet(t, g.depts.Name(), "Sales", deptPrefix+"000")
	if props["ManagerID"] != b.RowKey || props["ManagerName"] != "Bob" || props["ManagerPhone"] != "2" {
		t.Errorf("the department refers to %v holding %v %v, want %s with Bob's copy", props["ManagerID"], props["ManagerName"], props["ManagerPhone"], b.RowKey)
	}
	if n := rounds.Load(); n != 2 {
		t.Errorf("ModifyTarget ran its change %d times, want 2: the insert's fence fails its first write", n)
	}
	g.check(t, "Sales")

	depts := make([]entity.DynamicEntity, 120)
	for i := range depts {
		depts[i] = entity.DynamicEntity{PartitionKey: "North", RowKey: fmt.Sprintf("%s%03d", deptPrefix, i), Properties: map[string]any{"ManagerID": empID(1)}}
	}
	if _, err := g.bags.BulkWrite(ctx, depts, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	err = g.copies.InsertSource(ctx, &Employee{PartitionKey: "North", RowKey: empID(2), Name: "Bob"})
	var ce *denormalize.CopiesError
	if !errors.Is(err, denormalize.ErrTooManyCopies) || !errors.As(err, &ce) || ce.Copies != 0 || ce.Fences != 120 ||
		!strings.Contains(err.Error(), "whichever source it refers to") {
		t.Errorf("an insert beside 120 departments of another manager: %v, want a *CopiesError of 0 copies and 120 fences that says why", err)
	}
	if _, stored := rawGet(t, g.emps.Name(), "North", empID(2)); stored {
		t.Error("the refused insert was written")
	}
}

// TestInsertTargetBesideItsSourcesInsert pins the race the package doc
// names: a department inserted referring to a manager not stored yet,
// the manager's InsertSource run between the department's read of the
// manager (missing) and its insert. Neither transaction is conditional on
// the other's entity, which did not exist when it was read: both commit,
// and the department refers to the manager without the copy. Check
// reports it Missing, Refresh copies, and a second Check finds nothing.
func TestInsertTargetBesideItsSourcesInsert(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGuide(t, env, denormalize.Config{})
	b := Employee{PartitionKey: "Sales", RowKey: empID(2), Name: "Bob", Phone: "2"}
	var inserted error
	race := &patterntest.Before{Match: patterntest.Writes, Fn: func() { inserted = g.copies.InsertSource(ctx, &b) }}
	h := g.over(t, env.With(race), denormalize.Config{})
	if err := h.copies.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: deptPrefix + "000", ManagerID: b.RowKey}); err != nil || inserted != nil {
		t.Fatalf("InsertTarget: %v; InsertSource between its read and its write: %v", err, inserted)
	}
	if props, _ := rawGet(t, g.depts.Name(), "Sales", deptPrefix+"000"); props["ManagerID"] != b.RowKey || props["ManagerName"] != nil {
		t.Errorf("the department is stored as %v: if it holds the copy, the race the doc names is gone: update the doc", props)
	}
	var findings []drift.Finding
	for f, err := range g.copies.Check(ctx, denormalize.CheckOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		findings = append(findings, f)
	}
	if len(findings) != 1 || findings[0].Kind != drift.Missing || findings[0].Entry.RowKey != deptPrefix+"000" {
		t.Fatalf("Check: %v, want the department Missing", findings)
	}
	if _, err := g.copies.Refresh(ctx, "Sales", deptPrefix+"000"); err != nil {
		t.Fatal(err)
	}
	g.check(t, "Sales")
	for f, err := range g.copies.Check(ctx, denormalize.CheckOptions{}) {
		t.Errorf("after Refresh, Check: %v, %v", f, err)
	}
}

// TestBadTargetFanOut fans a department's cost center out to ten
// employees, one of which does not decode (its Name stored as a number
// by another program): the nine others get the new copy, and the bad
// one fails alone — the message is retried and then poisoned, with an
// error naming it — instead of ending the fan-out where it stands.
func TestBadTargetFanOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDirectory(t, env)
	d.seed(t, "Sales", 10, "CC-1")
	if err := rawWrite(ctx, d.emps.Name(), "Sales", empID(3), map[string]any{"Name": 5}); err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		poisoned []error
	)
	cfg := patterntest.Crashy()
	cfg.Hooks.Outcome = func(o eventual.Outcome) {
		if o.Result == eventual.Poison {
			mu.Lock()
			poisoned = append(poisoned, o.Err)
			mu.Unlock()
		}
	}
	p, _, centers := d.over(t, env, cfg, denormalize.Config{})
	if _, err := centers.ModifySource(ctx, "departments", "Sales", func(e *Entry) error { e.CostCenter = "CC-2"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := patterntest.Drain(dctx, p, d.qs); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		e, _ := rawGet(t, d.emps.Name(), "Sales", empID(i))
		switch want := "CC-2"; {
		case i == 3 && e["CostCenter"] != "CC-1":
			t.Errorf("the undecodable employee was written: %v", e)
		case i != 3 && e["CostCenter"] != want:
			t.Errorf("employee %d holds %v: one bad target kept it from its copy", i, e["CostCenter"])
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(poisoned) != 1 || !strings.Contains(poisoned[0].Error(), `PartitionKey "Sales", RowKey "`+empID(3)+`"`) {
		t.Errorf("poisoned with %v, want one message whose error names Sales/%s", poisoned, empID(3))
	}
	if n, err := patterntest.MessageCount(ctx, d.qs[0].Poison); err != nil || n != 1 {
		t.Errorf("%d messages in the poison queue (%v), want 1", n, err)
	}
}

// TestBadTargetCheck puts a department that does not decode, and one whose
// manager does not decode, beside a stale copy: Check names each bad one
// by its keys and goes on, and Rebuild repairs the stale copy, completes,
// and reports the two it could not check.
func TestBadTargetCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGuide(t, env, denormalize.Config{})
	seedGuide(t, g)
	for _, d := range []Department{
		{PartitionKey: "Sales", RowKey: "dept A", ManagerID: empID(1)},
		{PartitionKey: "Sales", RowKey: "dept D", ManagerID: empID(9)},
	} {
		if err := g.copies.InsertTarget(ctx, &d); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.copies.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(9), Name: "Nine"}); err != nil {
		t.Fatal(err)
	}
	table := g.emps.Name()
	for _, w := range []struct {
		rk    string
		props map[string]any
	}{
		{"dept A", map[string]any{"ManagerID": 5}},             // does not decode as a Department
		{empID(9), map[string]any{"Name": 6}},                  // its manager does not decode
		{"dept Sales", map[string]any{"ManagerName": "stale"}}, // a stale copy
	} {
		if err := rawWrite(ctx, table, "Sales", w.rk, w.props); err != nil {
			t.Fatal(err)
		}
	}
	var bad []string
	var found []string
	for f, err := range g.copies.Check(ctx, denormalize.CheckOptions{}) {
		var se *denormalize.StepError
		switch {
		case errors.As(err, &se):
			bad = append(bad, se.Key.RowKey)
		case err != nil:
			t.Fatal(err)
		default:
			found = append(found, f.Entry.RowKey)
		}
	}
	slices.Sort(bad) // in the service's order, which Cosmos DB does not keep
	if !slices.Equal(bad, []string{"dept A", empID(9)}) || !slices.Equal(found, []string{"dept Sales"}) {
		t.Errorf("Check: errors for %v and findings for %v; want dept A and %s named, dept Sales found", bad, found, empID(9))
	}
	sum, err := g.copies.Rebuild(ctx, denormalize.CheckOptions{})
	if sum.Repaired != 1 || sum.Next != "" || err == nil || !strings.Contains(err.Error(), `PartitionKey "Sales", RowKey "dept A"`) || !strings.Contains(err.Error(), `PartitionKey "Sales", RowKey "`+empID(9)+`"`) {
		t.Errorf("Rebuild: %+v, %v; want the stale copy repaired, the scan complete, both bad rows named", sum, err)
	}
	if d, _ := rawGet(t, table, "Sales", "dept Sales"); d["ManagerName"] != "Jones, Jeff" {
		t.Errorf("the stale copy was not repaired: %v", d)
	}
}

// TestBadTargetSamePartition puts a department that does not decode in
// the range a manager's change reads: the change is refused before
// anything is written, with an error naming that department — the
// transaction cannot tell whether it refers to the manager, so it fails
// closed rather than leave it behind.
func TestBadTargetSamePartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGuide(t, env, denormalize.Config{})
	seedGuide(t, g)
	if err := g.copies.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: "dept A", ManagerID: empID(1)}); err != nil {
		t.Fatal(err)
	}
	if err := rawWrite(ctx, g.emps.Name(), "Sales", "dept A", map[string]any{"ManagerID": 5}); err != nil {
		t.Fatal(err)
	}
	before, _ := rawGet(t, g.emps.Name(), "Sales", empID(1))
	_, err := g.copies.ModifySource(ctx, "Sales", empID(1), func(e *Employee) error { e.Phone = "new"; return nil }, entity.ModifyOptions{})
	var se *denormalize.StepError
	if !errors.As(err, &se) || se.Key != (denormalize.Key{PartitionKey: "Sales", RowKey: "dept A"}) || se.Step != "read target" {
		t.Errorf("ModifySource beside an undecodable target: %v, want a *StepError naming Sales/dept A", err)
	}
	if after, _ := rawGet(t, g.emps.Name(), "Sales", empID(1)); after["Phone"] != before["Phone"] || after["Timestamp"] != before["Timestamp"] {
		t.Errorf("the refused change was written: %v", after)
	}
}

// TestVerifyCopyFails makes the second read of an OtherPartition source,
// after ModifyTarget wrote the target, fail: the write stands and is
// reported as written (ErrCopyUnverified, with the target returned), not
// as a failure the caller would apply again.
func TestVerifyCopyFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDirectory(t, env)
	d.seed(t, "Sales", 3, "CC-1")
	var written atomic.Bool
	inj := faults.New(faults.Config{LoseReply: 1, Match: func(r *http.Request) bool {
		if isBatch(r) {
			written.Store(true)
			return false
		}
		return written.Load() && r.Method == http.MethodGet && strings.Contains(r.URL.Path, d.emps.Name())
	}})
	_, managers, _ := d.over(t, env.With(inj), patterntest.Crashy(), denormalize.Config{})
	got, err := managers.ModifyTarget(ctx, "departments", "Sales", func(e *Entry) error { e.Manager = empID(1); return nil }, entity.ModifyOptions{})
	if !errors.Is(err, denormalize.ErrCopyUnverified) || errors.Is(err, entity.ErrOutcomeUnknown) {
		t.Errorf("ModifyTarget whose second read of the source failed: %v, want ErrCopyUnverified", err)
	}
	if got.Manager != empID(1) || got.ManagerName != "Sales-1" {
		t.Errorf("ModifyTarget returned %+v, want what it wrote", got)
	}
	if e, _ := rawGet(t, d.entries.Name(), "departments", "Sales"); e["Manager"] != empID(1) || e["ManagerName"] != "Sales-1" {
		t.Errorf("the entry holds %v", e)
	}
}
