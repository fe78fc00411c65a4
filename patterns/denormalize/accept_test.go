package denormalize_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestInvalidTargetKeyRefused gives a relation whose Targets names, among
// valid targets, one key (or range) that no entity can have (a RowKey
// with '/', a PartitionKey with '#'). The change is refused before
// anything is written, with an error matching entity.ErrInvalid that
// names the bad key — rather than commit the change with a fan-out
// message that the worker refuses whole, leaving every valid target
// with the old copy and the message poisoned. Such a key named for the
// stored version only names no entity: DeleteSource goes through.
func TestInvalidTargetKeyRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name string
		bad  denormalize.Targets
		key  string
	}{
		{"key", denormalize.Targets{Keys: []denormalize.Key{{PartitionKey: "Sales", RowKey: "empid/bad"}}}, `RowKey "empid/bad"`},
		{"range", denormalize.Targets{Ranges: []denormalize.Range{denormalize.Prefix("Sa#les", "empid ")}}, `"Sa#les"`},
	} {
		t.Run("OtherPartition "+c.name, func(t *testing.T) {
			t.Parallel()
			d := newDirectory(t, env)
			d.seed(t, "Sales", 5, "CC-1")
			p, err := eventual.New(patterntest.SameQueues(t, env, d.qs), nil, patterntest.Crashy())
			if err != nil {
				t.Fatal(err)
			}
			rel := keyedCostCenterRel(5)
			valid := rel.Targets
			rel.Targets = func(e *Entry) denormalize.Targets {
				ts := valid(e)
				ts.Keys = append(ts.Keys, c.bad.Keys...)
				ts.Ranges = append(ts.Ranges, c.bad.Ranges...)
				return ts
			}
			centers, err := denormalize.New(d.emps, d.entries, denormalize.Config{Processor: p, Outbox: eventual.OutboxConfig{Grace: -1}}, rel)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := rawGet(t, d.entries.Name(), "departments", "Sales")
			_, err = centers.ModifySource(ctx, "departments", "Sales", func(e *Entry) error { e.CostCenter = "CC-2"; return nil }, entity.ModifyOptions{})
			var se *denormalize.StepError
			if !errors.Is(err, entity.ErrInvalid) || !errors.As(err, &se) || !strings.Contains(err.Error(), c.key) {
				t.Fatalf("ModifySource with a target key no entity can have: %v; want a *StepError matching entity.ErrInvalid naming %s", err, c.key)
			}
			if after, _ := rawGet(t, d.entries.Name(), "departments", "Sales"); after["Timestamp"] != before["Timestamp"] || after["CostCenter"] != "CC-1" {
				t.Errorf("the refused change was written: %v", after)
			}
			if left := rawRows(t, d.entries.Name(), "departments", "tablekit.outbox_"); len(left) != 0 {
				t.Errorf("the refused change left %d intents", len(left))
			}
			if n, err := patterntest.MessageCount(ctx, d.qs[0].Work); err != nil || n != 0 {
				t.Errorf("%d messages queued (%v)", n, err)
			}
			// Such a key names no entity: a source whose stored version
			// names one can still be deleted.
			if err := centers.DeleteSource(ctx, "departments", "Sales"); err != nil {
				t.Fatalf("DeleteSource of a source whose Targets names a key no entity can have: %v", err)
			}
			if _, ok := rawGet(t, d.entries.Name(), "departments", "Sales"); ok {
				t.Error("DeleteSource left the source")
			}
		})
	}
	t.Run("SamePartition", func(t *testing.T) {
		t.Parallel()
		emps := patterntest.Table[Employee](t, env)
		depts := patterntest.View[Department](t, env, emps)
		rel := managerRel()
		rel.Targets = func(e *Employee) denormalize.Targets {
			return denormalize.Targets{Keys: []denormalize.Key{{PartitionKey: e.PartitionKey, RowKey: "dept a"}, {PartitionKey: e.PartitionKey, RowKey: "dept?b"}}}
		}
		copies, err := denormalize.New(depts, emps, denormalize.Config{}, rel)
		if err != nil {
			t.Fatal(err)
		}
		if err := copies.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: "dept a", ManagerID: empID(1)}); err != nil {
			t.Fatal(err)
		}
		err = copies.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(1), Name: "Ann"})
		if !errors.Is(err, entity.ErrInvalid) || !strings.Contains(err.Error(), `"dept?b"`) {
			t.Fatalf("InsertSource with a target key no entity can have: %v; want entity.ErrInvalid naming it", err)
		}
		if _, ok := rawGet(t, emps.Name(), "Sales", empID(1)); ok {
			t.Error("the refused insert was written")
		}
	})
}

// TestCheckTargetReferringToAnImpossibleKey has another program write a
// department whose ManagerID no entity can have as a key ("a/b"), holding
// a copy, beside a stale department: Check reports it (a copy of a source
// that cannot exist: Orphan) and goes on to the stale one; Rebuild
// repairs both and completes, and a second Rebuild finds nothing — the
// scan is not ended, at the same row each time, by one bad reference.
// ModifyTarget that makes a department refer to such a key is refused
// before anything is written (entity.ErrInvalid).
func TestCheckTargetReferringToAnImpossibleKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGuide(t, env, denormalize.Config{})
	seedGuide(t, g)
	if err := g.copies.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: "dept A", ManagerID: empID(2)}); err != nil {
		t.Fatal(err)
	}
	table := g.emps.Name()
	if err := rawWrite(ctx, table, "Sales", "dept A", map[string]any{"ManagerID": "a/b"}); err != nil {
		t.Fatal(err)
	}
	if err := rawWrite(ctx, table, "Sales", "dept Sales", map[string]any{"ManagerName": "stale"}); err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	for f, err := range g.copies.Check(ctx, denormalize.CheckOptions{}) {
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		found[f.Entry.RowKey] = f.Kind.String()
	}
	if len(found) != 2 || found["dept Sales"] == "" || found["dept A"] == "" {
		t.Errorf("Check found %v; want dept A (its copy of a source that cannot exist) and dept Sales (stale)", found)
	}
	sum, err := g.copies.Rebuild(ctx, denormalize.CheckOptions{})
	if err != nil || sum.Repaired != 2 || sum.Next != "" {
		t.Errorf("Rebuild: %+v, %v; want both repaired, the scan complete", sum, err)
	}
	if d, _ := rawGet(t, table, "Sales", "dept A"); d["ManagerName"] != nil || d["ManagerPhone"] != nil {
		t.Errorf("dept A keeps a copy of a source that cannot exist: %v", d)
	}
	if d, _ := rawGet(t, table, "Sales", "dept Sales"); d["ManagerName"] != "Jones, Jeff" {
		t.Errorf("the stale copy was not repaired: %v", d)
	}
	if sum, err := g.copies.Rebuild(ctx, denormalize.CheckOptions{}); err != nil || sum.Repaired != 0 {
		t.Errorf("a second Rebuild: %+v, %v; want nothing found", sum, err)
	}
	before, _ := rawGet(t, table, "Sales", "dept Sales")
	_, err = g.copies.ModifyTarget(ctx, "Sales", "dept Sales", func(d *Department) error { d.ManagerID = "x#y"; return nil }, entity.ModifyOptions{})
	if !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("ModifyTarget to a source key no entity can have: %v, want entity.ErrInvalid", err)
	}
	if after, _ := rawGet(t, table, "Sales", "dept Sales"); after["Timestamp"] != before["Timestamp"] {
		t.Errorf("the refused ModifyTarget was written: %v", after)
	}
}

// TestFieldsNameStoredProperties declares relations whose Fields name a
// property the source type does not store (a typo, or the Go name of a
// flattened field) or one the target type does not store: New refuses
// them with a *ConfigError naming the relation and the property, before
// any request, instead of a Copies that silently copies nothing, or
// copies into a property no reader of T sees. A DynamicEntity side (any
// property) accepts any name.
func TestFieldsNameStoredProperties(t *testing.T) {
	t.Parallel()
	emps := patterntest.Table[Employee](t, env)
	depts := patterntest.View[Department](t, env, emps)
	bags := patterntest.View[entity.DynamicEntity](t, env, emps)
	for _, f := range []denormalize.Field{{From: "Nmae", To: "ManagerName"}, {From: "Name", To: "ManagrName"}} {
		rel := managerRel()
		rel.Fields = []denormalize.Field{f}
		_, err := denormalize.New(depts, emps, denormalize.Config{}, rel)
		var ce *denormalize.ConfigError
		bad := f.From
		if bad == "Name" {
			bad = f.To
		}
		if !errors.As(err, &ce) || ce.Field != "Fields" || !errors.Is(err, entity.ErrInvalid) || !strings.Contains(err.Error(), bad) {
			t.Errorf("Field %+v: %v; want a *ConfigError about Fields naming %s", f, err, bad)
		}
	}
	open := denormalize.Relation[entity.DynamicEntity, Employee]{
		Name:    "manager",
		Fields:  []denormalize.Field{{From: "Name", To: "Anything"}},
		Source:  func(d *entity.DynamicEntity) (denormalize.Key, bool) { return denormalize.Key{}, false },
		Targets: func(e *Employee) denormalize.Targets { return denormalize.Targets{} },
	}
	if _, err := denormalize.New(bags, emps, denormalize.Config{}, open); err != nil {
		t.Errorf("a DynamicEntity target: %v", err)
	}
}

// TestRelayGoesOnPastTheSourcesTable leaves an intent of a target write's
// message in the targets' table (its enqueue failed), then relays while
// every read of the sources' table fails: Relay reports that failure and
// still sends the targets' table's intent — one table's trouble does not
// hold up the other's messages.
func TestRelayGoesOnPastTheSourcesTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDirectory(t, env)
	d.seed(t, "Sales", 2, "CC-1")
	noQueue := faults.New(faults.Config{FailBefore: 1, Match: func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/messages") }})
	_, managers, _ := d.over(t, env.With(noQueue), patterntest.Crashy(), denormalize.Config{})
	msg := eventual.Message{Kind: "audit.v1", ID: "m1", Payload: json.RawMessage(`{}`)}
	if _, err := managers.ModifyTarget(ctx, "departments", "Sales", func(e *Entry) error { return nil }, entity.ModifyOptions{}, denormalize.WriteOptions{Messages: []eventual.Message{msg}}); err != nil {
		t.Logf("ModifyTarget with its enqueue failing: %v", err)
	}
	if left := rawRows(t, d.entries.Name(), "departments", "tablekit.outbox_"); len(left) != 1 {
		t.Fatalf("%d intents in the targets' table, want the one whose enqueue failed", len(left))
	}
	emps := d.emps.Name()
	noSources := faults.New(faults.Config{FailBefore: 1, Match: func(r *http.Request) bool { return strings.Contains(r.URL.Path, emps) }})
	_, managers, _ = d.over(t, env.With(noSources), patterntest.Crashy(), denormalize.Config{})
	n, err := managers.Relay(ctx)
	if err == nil {
		t.Error("Relay hid the failure of the sources' table")
	}
	if n != 1 {
		t.Errorf("Relay sent %d (%v), want the targets' table's intent sent", n, err)
	}
	if left := rawRows(t, d.entries.Name(), "departments", "tablekit.outbox_"); len(left) != 0 {
		t.Errorf("%d intents left in the targets' table", len(left))
	}
	if q, err := patterntest.MessageCount(ctx, d.qs[0].Work); err != nil || q != 1 {
		t.Errorf("%d messages queued (%v), want 1", q, err)
	}
}

// TestDeleteSourceLostReplyBesideAnInsert: DeleteSource's transaction is
// executed and its reply lost; before azcore resends it, another writer
// inserts the source again (through the Copies, with a new name). The
// delete was applied once: DeleteSource reports it applied or
// entity.ErrOutcomeUnknown — and the other writer's source, whose insert
// was reported done, is still there with its copy, not deleted by a
// second round of a call that started before it.
func TestDeleteSourceLostReplyBesideAnInsert(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGuide(t, env, denormalize.Config{})
	seedGuide(t, g)
	f := faults.New(faults.Config{})
	h := g.over(t, env.With(f), denormalize.Config{})
	var otherErr error
	f.LoseNextThen(1, isBatch, func(*http.Request) {
		otherErr = g.copies.InsertSource(context.Background(), &Employee{PartitionKey: "Sales", RowKey: empID(1), Name: "Again"})
	})
	err := h.copies.DeleteSource(ctx, "Sales", empID(1))
	if otherErr != nil || f.Stats().LostReplies != 1 {
		t.Fatalf("the other writer: %v; %d replies lost", otherErr, f.Stats().LostReplies)
	}
	t.Logf("DeleteSource: %v", err)
	if err != nil && !errors.Is(err, entity.ErrOutcomeUnknown) {
		t.Errorf("DeleteSource: %v, want success or entity.ErrOutcomeUnknown", err)
	}
	e, ok := rawGet(t, g.emps.Name(), "Sales", empID(1))
	if !ok || e["Name"] != "Again" {
		t.Fatalf("the source inserted after the delete was applied: %v, %v; want it kept", e, ok)
	}
	if d, _ := rawGet(t, g.emps.Name(), "Sales", "dept Sales"); d["ManagerName"] != "Again" {
		t.Errorf("the department holds %v, want the copy of the source inserted again", d)
	}
}

// TestWritesKeepPropertiesTheTypeDoesNotModel: another program stores a
// property on an employee (Badge) and on a department (Floor) that
// neither Go type models and no relation copies — the caller's, says the
// Ownership section. ModifySource and ModifyTarget write the entity whole
// (Replace) but keep them, read back with a plain client; what the type
// models and the change cleared (a copy the target no longer refers to)
// is still removed.
func TestWritesKeepPropertiesTheTypeDoesNotModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGuide(t, env, denormalize.Config{})
	seedGuide(t, g)
	table := g.emps.Name()
	if err := rawWrite(ctx, table, "Sales", empID(1), map[string]any{"Badge": "B-17"}); err != nil {
		t.Fatal(err)
	}
	if err := rawWrite(ctx, table, "Sales", "dept Sales", map[string]any{"Floor": "3"}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.copies.ModifySource(ctx, "Sales", empID(1), func(e *Employee) error { e.Phone = "425-555-0199"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	if e, _ := rawGet(t, table, "Sales", empID(1)); e["Badge"] != "B-17" || e["Phone"] != "425-555-0199" {
		t.Errorf("ModifySource lost a property Employee does not model: %v", e)
	}
	if _, err := g.copies.ModifyTarget(ctx, "Sales", "dept Sales", func(d *Department) error { d.ManagerID = ""; d.Budget++; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	d, _ := rawGet(t, table, "Sales", "dept Sales")
	if d["Floor"] != "3" {
		t.Errorf("ModifyTarget lost a property Department does not model: %v", d)
	}
	if _, has := d["ManagerName"]; has {
		t.Errorf("the copy of a manager the department no longer names was kept: %v", d)
	}
}

// batchBodies records the body of every $batch request.
type batchBodies struct {
	mu     sync.Mutex
	bodies []string
}

func (p *batchBodies) Do(req *policy.Request) (*http.Response, error) {
	if isBatch(req.Raw()) && req.Body() != nil {
		b, err := io.ReadAll(req.Body())
		if err != nil {
			return nil, err
		}
		if err := req.RewindBody(); err != nil {
			return nil, err
		}
		p.mu.Lock()
		p.bodies = append(p.bodies, string(b))
		p.mu.Unlock()
	}
	return req.Next()
}

// A target made to refer to itself (a department whose ManagerID is its
// own RowKey) copies from no source, as Relation.Source's doc says: its
// write is one operation, not the target plus a fence of itself — a
// transaction naming one entity twice, which the service refuses
// (Azurite does not) — and it holds no copy.
func TestTargetNeverCopiesFromItself(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGuide(t, env, denormalize.Config{})
	seedGuide(t, g)
	// The department row carries a Name, as an employee would: read as
	// its own source, it would have a copy to take.
	if err := rawWrite(ctx, g.emps.Name(), "Sales", "dept Sales", map[string]any{"Name": "Self"}); err != nil {
		t.Fatal(err)
	}
	rec := &batchBodies{}
	h := g.over(t, env.With(rec), denormalize.Config{})
	if _, err := h.copies.ModifyTarget(ctx, "Sales", "dept Sales", func(d *Department) error { d.ManagerID = "dept Sales"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.bodies) != 1 || strings.Count(rec.bodies[0], "RowKey='dept%20Sales'") != 1 {
		n := -1
		if len(rec.bodies) == 1 {
			n = strings.Count(rec.bodies[0], "RowKey='dept%20Sales'")
		}
		t.Errorf("%d transactions, naming the department %d times; want one naming it once", len(rec.bodies), n)
	}
	if d, _ := rawGet(t, g.emps.Name(), "Sales", "dept Sales"); d["ManagerName"] != nil || d["ManagerPhone"] != nil {
		t.Errorf("the department copies from itself: %v", d)
	}
	for f, err := range g.copies.Check(ctx, denormalize.CheckOptions{}) {
		t.Errorf("Check after a self-reference: %+v, %v", f, err)
	}
}

// Card is an employee whose contact details are a flattened struct:
// field Contact.Phone is stored as Contact_Phone.
type Card struct {
	PartitionKey string
	RowKey       string
	ETag         string
	Contact      struct{ Phone string } `table:",flatten"`
}

// A Field may name a flattened field by its Go path ("Contact.Phone") or
// by its stored name ("Contact_Phone"); the struct itself ("Contact") is
// no stored property and is refused. The copy is the stored value.
func TestFieldsGoPath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cards := patterntest.Table[Card](t, env)
	depts := patterntest.View[Department](t, env, cards)
	rel := func(from string) denormalize.Relation[Department, Card] {
		return denormalize.Relation[Department, Card]{
			Name:   "manager",
			Fields: []denormalize.Field{{From: from, To: "ManagerPhone"}},
			Source: func(d *Department) (denormalize.Key, bool) {
				return denormalize.Key{PartitionKey: d.PartitionKey, RowKey: d.ManagerID}, d.ManagerID != ""
			},
			Targets: func(c *Card) denormalize.Targets {
				return denormalize.Targets{Ranges: []denormalize.Range{denormalize.Prefix(c.PartitionKey, deptPrefix)}}
			},
		}
	}
	if _, err := denormalize.New(depts, cards, denormalize.Config{}, rel("Contact")); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("a Field naming a flattened struct: %v, want entity.ErrInvalid", err)
	}
	for i, from := range []string{"Contact.Phone", "Contact_Phone"} {
		c, err := denormalize.New(depts, cards, denormalize.Config{}, rel(from))
		if err != nil {
			t.Fatalf("From %q: %v", from, err)
		}
		pk := "P" + string(rune('0'+i))
		card := Card{PartitionKey: pk, RowKey: "card"}
		card.Contact.Phone = "555"
		if err := c.InsertSource(ctx, &card); err != nil {
			t.Fatal(err)
		}
		if err := c.InsertTarget(ctx, &Department{PartitionKey: pk, RowKey: "dept A", ManagerID: "card"}); err != nil {
			t.Fatal(err)
		}
		if d, _ := rawGet(t, cards.Name(), pk, "dept A"); d["ManagerPhone"] != "555" {
			t.Errorf("From %q: the department holds %v", from, d)
		}
	}
}
