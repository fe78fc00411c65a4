package canary_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/bucket"
	"github.com/tablekit/tablekit/patterns/compound"
	"github.com/tablekit/tablekit/patterns/dataseries"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/large"
	"github.com/tablekit/tablekit/patterns/logtail"
	"github.com/tablekit/tablekit/patterns/lookup"
	"github.com/tablekit/tablekit/patterns/wide"
	"github.com/tablekit/tablekit/resolver"
)

// run is one canary run: its secret, its clients, its key, and what the
// calls returned.
type run struct {
	t    *testing.T
	ctx  context.Context
	s    *secret
	v    *views
	key  crypt.KeyWrapper
	errs *errs
	// backups are the exports held in memory, scanned with the account.
	backups map[string][]byte
}

// must fails the test on err (after recording it).
func (r *run) must(what string, err error) {
	r.t.Helper()
	r.errs.add(err)
	if err != nil {
		r.t.Fatalf("%s: %v", what, err)
	}
}

// refused checks that err is a refusal matching want, and records it.
func (r *run) refused(what string, err, want error) {
	r.t.Helper()
	r.errs.add(err)
	if !errors.Is(err, want) {
		r.t.Errorf("%s: got %v, want an error matching %v", what, err, want)
	}
}

// newTable makes a table and returns its name.
func (r *run) newTable() string {
	return tableName(r.t, env.Table(r.t))
}

// devices is an encrypted table of Device through env.
func (r *run) devices(env *integration.Env, name string) *crypt.Table[Device] {
	return encrypted[Device](r.t, table(env, name), crypt.Config{Key: r.key})
}

// bags is an encrypted table of property bags through env whose
// Config.Encrypt encrypts the named properties.
func (r *run) bags(env *integration.Env, name string, props ...string) *crypt.Table[entity.DynamicEntity] {
	fn, list := policy(props...)
	return encrypted[entity.DynamicEntity](r.t, table(env, name), crypt.Config{Key: r.key, Encrypt: fn, Encryptable: list})
}

func (r *run) wantKey(what, got, label string) {
	r.t.Helper()
	if want := r.s.value(label); got != want {
		r.t.Errorf("%s: APIKey %q, want %q", what, got, want)
	}
}

// TestNoPlaintextLeaves writes a unique plaintext, in properties marked
// encrypt, through every component that takes an encrypted table — with
// a share of the table writes losing their reply (azcore resends them)
// and processes killed mid-way where a component has steps to recover —
// reads it back through each (so the encryption is not just garbage),
// then scans the whole account, the errors and azcore's log for it in
// clear, base64, base64url or hex (TestDetectorFindsPlaintext shows the
// scan finds each form).
func TestNoPlaintextLeaves(t *testing.T) {
	logged := captureLogs(t)
	r := &run{t: t, ctx: context.Background(), s: newSecret(t), v: newViews(env), key: newKey(t, "canary-1"), errs: &errs{}, backups: map[string][]byte{}}
	devicesName := r.newTable()
	r.logtail(devicesName)
	compoundKey := r.compound(devicesName)
	r.bucket(devicesName)
	r.lookup(devicesName, compoundKey)
	r.dataseries()
	r.wide()
	r.large()
	r.denormalizeSamePartition()
	r.denormalizeOtherPartition()
	r.eventual()
	r.resolver()
	r.secondaryindex()
	r.rotation()
	r.backup(devicesName, compoundKey)
	r.refusals(devicesName, compoundKey)

	l := &leaks{}
	tables, entities, messages, blobs := scanAccount(t, env, r.s, l)
	for name, b := range r.backups {
		l.checkBytes(r.s, "backup "+name, b)
	}
	r.errs.mu.Lock()
	for _, e := range r.errs.text {
		l.check(r.s, "an error", e)
	}
	nerrs := len(r.errs.text) / 3
	r.errs.mu.Unlock()
	lines := logged.all()
	for _, line := range lines {
		l.check(r.s, "a log line", line)
	}
	for _, w := range l.where {
		t.Errorf("plaintext found: %s", w)
	}
	lost := r.v.loss.Stats().LostReplies
	t.Logf("scanned %d tables, %d entities, %d queue messages, %d blobs, %d backups, %d errors, %d log lines; %d replies lost",
		tables, entities, messages, blobs, len(r.backups), nerrs, len(lines), lost)
	if entities < 30 || messages < 3 || blobs < 4 || nerrs < 8 || len(lines) < 100 || lost < 5 {
		t.Errorf("the run wrote, failed or logged less than it should: %d entities, %d queue messages, %d blobs, %d errors, %d log lines, %d lost replies", entities, messages, blobs, nerrs, len(lines), lost)
	}
}

func (r *run) logtail(devicesName string) {
	dev := r.devices(r.v.lossy, devicesName)
	log, err := logtail.New(dev.Entity(), logtail.Config{})
	r.must("logtail.New", err)
	r.must("Append", log.Append(r.ctx, "dev-1", &Device{Name: "a", APIKey: r.s.value("logtail-1")}))
	r.must("Append of two", log.Append(r.ctx, "dev-1", &Device{Name: "b", APIKey: r.s.value("logtail-2")}, &Device{Name: "c", APIKey: r.s.value("logtail-3")}))
	got, err := log.Tail(r.ctx, "dev-1", 10)
	r.must("Tail", err)
	if len(got) != 3 {
		r.t.Fatalf("logtail: %d entries, want 3", len(got))
	}
	r.wantKey("logtail newest", got[0].APIKey, "logtail-3")
	r.wantKey("logtail oldest", got[2].APIKey, "logtail-1")
}

func (r *run) compound(devicesName string) string {
	dev := r.devices(r.v.lossy, devicesName)
	rel, err := compound.New(dev.Entity(), compound.Config[int64, int64]{Prefix: "dev", Parent: compound.Int(6), Child: compound.Int(4)})
	r.must("compound.New", err)
	key, err := rel.Key(7, 2024)
	r.must("Key", err)
	r.must("compound insert", dev.Entity().Insert(r.ctx, &Device{PartitionKey: "fleet", RowKey: key, APIKey: r.s.value("compound")}))
	d, err := rel.Get(r.ctx, "fleet", 7, 2024)
	r.must("compound Get", err)
	r.wantKey("compound", d.APIKey, "compound")
	n := 0
	for d, err := range rel.Children(r.ctx, "fleet", 7, entity.Query{}) {
		r.must("Children", err)
		r.wantKey("compound child", d.APIKey, "compound")
		n++
	}
	if n != 1 {
		r.t.Errorf("compound: %d children, want 1", n)
	}
	return key
}

func (r *run) bucket(devicesName string) {
	dev := r.devices(r.v.lossy, devicesName)
	sp, err := bucket.New(dev.Entity(), bucket.Config{Buckets: 4})
	r.must("bucket.New", err)
	r.must("bucket Write", sp.Write(r.ctx, "spread", &Device{RowKey: "d1", APIKey: r.s.value("bucket-1")}, &Device{RowKey: "d2", APIKey: r.s.value("bucket-2")}, &Device{RowKey: "d3", APIKey: r.s.value("bucket-3")}))
	r.must("bucket Write of one", sp.Write(r.ctx, "spread", &Device{RowKey: "d4", APIKey: r.s.value("bucket-4")}))
	d, err := sp.Get(r.ctx, "spread", "d2")
	r.must("bucket Get", err)
	r.wantKey("bucket", d.APIKey, "bucket-2")
	tail, err := sp.Tail(r.ctx, "spread", 10)
	r.must("bucket Tail", err)
	if len(tail) != 4 {
		r.t.Errorf("bucket: %d entries, want 4", len(tail))
	}
}

func (r *run) lookup(devicesName, key string) {
	dev := r.devices(r.v.plain, devicesName)
	c, err := lookup.New(dev.Entity(), lookup.Config{Query: entity.Query{Filter: filter.PK("fleet")}})
	r.must("lookup.New", err)
	d, err := c.Get(r.ctx, "fleet", key)
	r.must("lookup Get", err)
	r.wantKey("lookup", d.APIKey, "compound")
}

func (r *run) dataseries() {
	name := r.newTable()
	ds := r.bags(r.v.lossy, name, "Label")
	r.must("series entity", ds.Insert(r.ctx, (&entity.DynamicEntity{PartitionKey: "s", RowKey: "r"}).Set("Label", r.s.value("dataseries"))))
	series, err := dataseries.New(ds.Entity(), dataseries.Config{Slots: 4})
	r.must("dataseries.New", err)
	for range 3 {
		_, err := series.Add(r.ctx, "s", "r", 1, 5)
		r.must("Add", err)
	}
	r.must("AddMany", series.AddMany(r.ctx, "s", "r", map[int]int64{0: 1, 3: 2}))
	vals, err := series.Get(r.ctx, "s", "r")
	r.must("series Get", err)
	if want := []int64{1, 15, 0, 2}; fmt.Sprint(vals) != fmt.Sprint(want) {
		r.t.Errorf("dataseries: %v, want %v", vals, want)
	}
	e, err := ds.Get(r.ctx, "s", "r")
	r.must("series entity Get", err)
	if got, _ := entity.Prop[string](&e, "Label"); got != r.s.value("dataseries") {
		r.t.Errorf("dataseries: the entity's Label is %q after the increments", got)
	}
}

func (r *run) wide() {
	name := r.newTable()
	w, err := wide.New(r.devices(r.v.lossy, name).Entity(), wide.Config{})
	r.must("wide.New", err)
	r.must("wide Insert", w.Insert(r.ctx, &Device{PartitionKey: "w", RowKey: "d1", APIKey: r.s.value("wide-1")}))
	_, err = w.Modify(r.ctx, "w", "d1", func(d *Device) error { d.APIKey = r.s.value("wide-2"); return nil }, entity.ModifyOptions{})
	r.must("wide Modify", err)
	d, err := w.Get(r.ctx, "w", "d1")
	r.must("wide Get", err)
	r.wantKey("wide", d.APIKey, "wide-2")

	// A logical entity of several rows, its key chosen by Config.Encrypt.
	big := func(id, label string) *entity.DynamicEntity {
		b := &entity.DynamicEntity{PartitionKey: "w", RowKey: id}
		for i := range 300 {
			b.Set(fmt.Sprintf("P%03d", i), int64(i))
		}
		return b.Set("APIKey", r.s.value(label))
	}
	wb, err := wide.New(r.bags(r.v.lossy, name, "APIKey").Entity(), wide.Config{})
	r.must("wide.New of bags", err)
	r.must("wide Insert of rows", wb.Insert(r.ctx, big("big", "wide-rows")))
	// A process killed once its insert was executed, before the reply.
	killed := r.v.plain.With(faults.NewExecutedKiller(0))
	wk, err := wide.New(r.bags(killed, name, "APIKey").Entity(), wide.Config{})
	r.must("wide.New, killed", err)
	r.errs.add(wk.Insert(r.ctx, big("big2", "wide-crash")))
	for _, id := range []string{"big", "big2"} {
		got, err := wb.Get(r.ctx, "w", id)
		r.must("wide Get of rows", err)
		if v, _ := entity.Prop[string](&got, "APIKey"); v != r.s.value(map[string]string{"big": "wide-rows", "big2": "wide-crash"}[id]) || len(got.Properties) != 301 {
			r.t.Errorf("wide %s: APIKey %q, %d properties", id, v, len(got.Properties))
		}
	}
}

func (r *run) large() {
	name := r.newTable()
	cname := blobs(r.t, env)
	lt, err := large.New(r.encryptedFirmware(r.v.lossy, name).Entity(), containerOf(r.v.lossy, cname), large.Config{})
	r.must("large.New", err)
	r.must("large Insert", lt.Insert(r.ctx, &Firmware{PartitionKey: "f", RowKey: "1", APIKey: r.s.value("large-1"), Image: []byte("firmware image 1")}))
	f, err := lt.Get(r.ctx, "f", "1")
	r.must("large Get", err)
	r.wantKey("large", f.APIKey, "large-1")
	f.APIKey, f.Image = r.s.value("large-2"), []byte("firmware image 2")
	r.must("large Replace", lt.Replace(r.ctx, &f))
	// Killed after the blob's upload, before the entity's insert: an
	// orphan blob, swept by a fresh process.
	killed := r.v.plain.With(faults.NewKiller(1))
	lk, err := large.New(r.encryptedFirmware(killed, name).Entity(), containerOf(killed, cname), large.Config{})
	r.must("large.New, killed", err)
	r.errs.add(lk.Insert(r.ctx, &Firmware{PartitionKey: "f", RowKey: "2", APIKey: r.s.value("large-crash"), Image: []byte("firmware image 3")}))
	sweeper, err := large.New(r.encryptedFirmware(r.v.plain, name).Entity(), containerOf(r.v.plain, cname), large.Config{Grace: -1})
	r.must("large.New, sweeper", err)
	_, err = sweeper.Sweep(r.ctx)
	r.must("Sweep", err)
	f, err = sweeper.Get(r.ctx, "f", "1")
	r.must("large Get after Sweep", err)
	r.wantKey("large", f.APIKey, "large-2")
	if string(f.Image) != "firmware image 2" {
		r.t.Errorf("large: image %q", f.Image)
	}
}

func (r *run) encryptedFirmware(env *integration.Env, name string) *crypt.Table[Firmware] {
	return encrypted[Firmware](r.t, table(env, name), crypt.Config{Key: r.key})
}

// managerRel: a department keeps its manager's name and phone.
func managerRel() denormalize.Relation[Department, Employee] {
	return denormalize.Relation[Department, Employee]{
		Name:   "manager",
		Fields: []denormalize.Field{{From: "Name", To: "ManagerName"}, {From: "Phone", To: "ManagerPhone"}},
		Source: func(d *Department) (denormalize.Key, bool) {
			return denormalize.Key{PartitionKey: d.PartitionKey, RowKey: d.ManagerID}, d.ManagerID != ""
		},
		Targets: func(e *Employee) denormalize.Targets {
			return denormalize.Targets{Ranges: []denormalize.Range{denormalize.Prefix(e.PartitionKey, "dept ")}}
		},
	}
}

// directoryRel: the directory's entry of a department keeps its manager's
// name and phone, in another table.
func directoryRel() denormalize.Relation[Entry, Employee] {
	return denormalize.Relation[Entry, Employee]{
		Name:      "manager",
		Placement: denormalize.OtherPartition,
		Fields:    []denormalize.Field{{From: "Name", To: "ManagerName"}, {From: "Phone", To: "ManagerPhone"}},
		Source: func(d *Entry) (denormalize.Key, bool) {
			return denormalize.Key{PartitionKey: d.RowKey, RowKey: d.Manager}, d.Manager != ""
		},
		Targets: func(e *Employee) denormalize.Targets {
			return denormalize.Targets{Keys: []denormalize.Key{{PartitionKey: "departments", RowKey: e.PartitionKey}}}
		},
	}
}

func (r *run) denormalizeSamePartition() {
	name := r.newTable()
	// One table of two types: each crypt table knows the other's.
	emps := encrypted[Employee](r.t, table(r.v.lossy, name), crypt.Config{Key: r.key, Types: []any{Department{}}})
	depts := encrypted[Department](r.t, table(r.v.lossy, name), crypt.Config{Key: r.key, Types: []any{Employee{}}})
	c, err := denormalize.New(depts.Entity(), emps.Entity(), denormalize.Config{}, managerRel())
	r.must("denormalize.New", err)
	r.must("InsertSource", c.InsertSource(r.ctx, &Employee{PartitionKey: "Sales", RowKey: "empid 1", Name: "Jones", Phone: r.s.value("denormalize-1")}))
	r.must("InsertTarget", c.InsertTarget(r.ctx, &Department{PartitionKey: "Sales", RowKey: "dept sales", ManagerID: "empid 1"}))
	_, err = c.ModifySource(r.ctx, "Sales", "empid 1", func(e *Employee) error { e.Phone = r.s.value("denormalize-2"); return nil }, entity.ModifyOptions{})
	r.must("ModifySource", err)
	d, err := depts.Get(r.ctx, "Sales", "dept sales")
	r.must("department Get", err)
	if d.ManagerPhone != r.s.value("denormalize-2") || d.ManagerName != "Jones" {
		r.t.Errorf("denormalize: the department's copy is %q, %q", d.ManagerName, d.ManagerPhone)
	}
	for f, err := range c.Check(r.ctx, denormalize.CheckOptions{}) {
		r.must("Check", err)
		r.t.Errorf("denormalize: Check found %+v", f)
	}
}

func (r *run) denormalizeOtherPartition() {
	empName, dirName := r.newTable(), r.newTable()
	qs := queues(r.t, env)
	cfg := eventual.Config{Hooks: eventual.Hooks{Error: r.errs.add}}
	p, err := eventual.New(qs, nil, cfg)
	r.must("eventual.New", err)
	dcfg := func(p *eventual.Processor) denormalize.Config {
		return denormalize.Config{Processor: p, Outbox: eventual.OutboxConfig{Grace: eventual.NoGrace}}
	}
	emps := encrypted[Employee](r.t, table(r.v.lossy, empName), crypt.Config{Key: r.key})
	entries := encrypted[Entry](r.t, table(r.v.lossy, dirName), crypt.Config{Key: r.key})
	c, err := denormalize.New(entries.Entity(), emps.Entity(), dcfg(p), directoryRel())
	r.must("denormalize.New", err)
	r.must("InsertTarget", c.InsertTarget(r.ctx, &Entry{PartitionKey: "departments", RowKey: "Sales", Manager: "empid 1"}))
	r.must("InsertSource", c.InsertSource(r.ctx, &Employee{PartitionKey: "Sales", RowKey: "empid 1", Name: "Jones", Phone: r.s.value("directory-1")}))
	drain(r.t, p)
	// Killed once the change's transaction (with its fan-out intent) was
	// executed, before the message was sent: a fresh process relays it.
	killed := r.v.plain.With(faults.NewExecutedKiller(1))
	pk, err := eventual.New(queuesOf(killed, qs), nil, cfg)
	r.must("eventual.New, killed", err)
	ck, err := denormalize.New(encrypted[Entry](r.t, table(killed, dirName), crypt.Config{Key: r.key}).Entity(),
		encrypted[Employee](r.t, table(killed, empName), crypt.Config{Key: r.key}).Entity(), dcfg(pk), directoryRel())
	r.must("denormalize.New, killed", err)
	_, err = ck.ModifySource(r.ctx, "Sales", "empid 1", func(e *Employee) error { e.Phone = r.s.value("directory-2"); return nil }, entity.ModifyOptions{})
	r.errs.add(err)
	_, err = c.Relay(r.ctx)
	r.must("Relay", err)
	drain(r.t, p)
	e, err := entries.Get(r.ctx, "departments", "Sales")
	r.must("entry Get", err)
	if e.ManagerPhone != r.s.value("directory-2") {
		r.t.Errorf("denormalize: the directory's copy is %q", e.ManagerPhone)
	}
}

func (r *run) eventual() {
	curName, archName := r.newTable(), r.newTable()
	cur, arch := r.devices(r.v.lossy, curName), r.devices(r.v.lossy, archName)
	r.must("eventual.Insert", eventual.Insert(r.ctx, cur.Entity(), &Device{PartitionKey: "e", RowKey: "1", APIKey: r.s.value("eventual-insert")}))
	r.must("eventual.Upsert", eventual.Upsert(r.ctx, cur.Entity(), &Device{PartitionKey: "e", RowKey: "2", APIKey: r.s.value("eventual-upsert")}))
	qs := queues(r.t, env)
	// With a container: claim checks, and the poison queue's records.
	cname := blobs(r.t, env)
	cfg := eventual.Config{Hooks: eventual.Hooks{Error: r.errs.add}, MaxDeliveries: 1, RetryDelay: eventual.NoRetryDelay}
	p, err := eventual.New(qs, containerOf(r.v.plain, cname), cfg)
	r.must("eventual.New", err)
	// A handler that fails on an encrypted value: its error goes into the
	// poison queue's record.
	bad := eventual.NewKind[Archived]("canary.bad.v1")
	r.must("Handle", eventual.Handle(p, bad, func(ctx context.Context, m Archived) error {
		return cur.Entity().Insert(ctx, &Device{PartitionKey: m.PK, RowKey: m.RK, APIKey: r.s.value("poison") + "\xff"})
	}, eventual.HandleOptions{}))
	mb, err := bad.Message(Archived{"e", "bad"})
	r.must("Message", err)
	r.must("Enqueue", p.Enqueue(r.ctx, mb))
	kind := eventual.NewKind[Archived]("canary.archive.v1")
	r.must("Handle", eventual.Handle(p, kind, func(ctx context.Context, m Archived) error {
		if err := eventual.Move(ctx, cur.Entity(), arch.Entity(), m.PK, m.RK, nil); err != nil {
			return err
		}
		_, err := eventual.Once(ctx, arch.Entity(), m.PK, "note", func(ctx context.Context, b *entity.Batch) error {
			b.Insert(&Device{PartitionKey: m.PK, RowKey: m.RK + "-note", APIKey: r.s.value("eventual-once")})
			return nil
		})
		return err
	}, eventual.HandleOptions{}))
	outbox, err := eventual.NewOutbox(p, cur.Entity(), eventual.OutboxConfig{Grace: eventual.NoGrace})
	r.must("NewOutbox", err)
	m1, err := kind.Message(Archived{"e", "1"})
	r.must("Message", err)
	r.must("outbox Submit", outbox.Submit(r.ctx, "e", func(b *entity.Batch) error {
		b.Insert(&Device{PartitionKey: "e", RowKey: "3", APIKey: r.s.value("eventual-outbox")})
		return nil
	}, m1))
	// Killed once the outbox's transaction was executed, before the
	// message was sent: a fresh process relays it.
	killed := r.v.plain.With(faults.NewExecutedKiller(0))
	pk, err := eventual.New(queuesOf(killed, qs), containerOf(killed, cname), cfg)
	r.must("eventual.New, killed", err)
	ko, err := eventual.NewOutbox(pk, r.devices(killed, curName).Entity(), eventual.OutboxConfig{Grace: eventual.NoGrace})
	r.must("NewOutbox, killed", err)
	m2, err := kind.Message(Archived{"e", "2"})
	r.must("Message", err)
	r.errs.add(ko.Submit(r.ctx, "e", func(b *entity.Batch) error {
		b.Insert(&Device{PartitionKey: "e", RowKey: "4", APIKey: r.s.value("eventual-crash")})
		return nil
	}, m2))
	_, err = outbox.Relay(r.ctx, "e")
	r.must("Relay", err)
	if rep := drain(r.t, p); rep.Poisoned != 1 {
		r.t.Errorf("eventual: %d messages poisoned, want 1", rep.Poisoned)
	}
	// Left in the queue for the scan: a message, and one claim-checked.
	m3, err := kind.Message(Archived{"e", "3"})
	r.must("Message", err)
	r.must("outbox Submit", outbox.Submit(r.ctx, "e", nil, m3))
	big, err := eventual.NewKind[Filler]("canary.big.v1").Message(Filler{strings.Repeat("filler ", 20000)})
	r.must("Message", err)
	r.must("Enqueue of a claim check", p.Enqueue(r.ctx, big))
	for rk, label := range map[string]string{"1": "eventual-insert", "2": "eventual-upsert", "1-note": "eventual-once", "2-note": "eventual-once"} {
		d, err := arch.Get(r.ctx, "e", rk)
		r.must("archive Get "+rk, err)
		r.wantKey("eventual archive "+rk, d.APIKey, label)
	}
	for rk, label := range map[string]string{"3": "eventual-outbox", "4": "eventual-crash"} {
		d, err := cur.Get(r.ctx, "e", rk)
		r.must("current Get "+rk, err)
		r.wantKey("eventual current "+rk, d.APIKey, label)
	}
}

func (r *run) resolver() {
	name := r.newTable()
	schema, err := resolver.NewSchema(resolver.Config{}, resolver.Register[Registered]("Registered.v1"))
	r.must("NewSchema", err)
	rt, err := resolver.NewTableOf(r.bags(r.v.lossy, name, "APIKey").Entity(), schema)
	r.must("NewTableOf", err)
	r.must("resolver Insert", rt.Insert(r.ctx, &Registered{PartitionKey: "r", RowKey: "1", APIKey: r.s.value("resolver")}))
	v, err := rt.Get(r.ctx, "r", "1")
	r.must("resolver Get", err)
	if reg, ok := v.(*Registered); !ok || reg.APIKey != r.s.value("resolver") {
		r.t.Errorf("resolver: got %#v", v)
	}
}

func (r *run) backup(devicesName, key string) {
	plain, err := entity.NewTable[entity.DynamicEntity](table(r.v.plain, devicesName))
	r.must("plain table", err)
	var buf bytes.Buffer
	_, err = backup.Export(r.ctx, plain, &buf, backup.ExportOptions{})
	r.must("Export of the ciphertexts", err)
	r.backups["ciphertexts"] = buf.Bytes()
	cname := blobs(r.t, env)
	_, err = backup.ExportBlob(r.ctx, plain, containerOf(r.v.plain, cname).NewBlockBlobClient("devices.backup"), backup.ExportOptions{})
	r.must("ExportBlob of the ciphertexts", err)

	dyn, err := entity.ViewAs[entity.DynamicEntity](r.devices(r.v.plain, devicesName).Entity())
	r.must("ViewAs", err)
	_, err = backup.Export(r.ctx, dyn, io.Discard, backup.ExportOptions{})
	r.refused("Export through the encrypted table", err, entity.ErrInvalid)
	r.refused("ExportCSV through the encrypted table", backup.ExportCSV(r.ctx, dyn, io.Discard, filter.Expr{}), entity.ErrInvalid)
	// Asked for: the plaintext, kept in memory only. It is the scan's
	// control: the scan finds the plaintext in it.
	var dec bytes.Buffer
	_, err = backup.Export(r.ctx, dyn, &dec, backup.ExportOptions{Decrypted: true})
	r.must("Export, decrypted", err)
	l := &leaks{}
	l.checkBytes(r.s, "the decrypted export", dec.Bytes())
	if len(l.where) == 0 {
		r.t.Error("the scan does not find the plaintext in a decrypted export")
	}

	// The ciphertexts restore, through a plain table, into a table the
	// crypt table of the original name reads.
	restored := r.newTable()
	into, err := entity.NewTable[entity.DynamicEntity](table(r.v.plain, restored))
	r.must("plain table", err)
	_, err = backup.Import(r.ctx, into, bytes.NewReader(buf.Bytes()), backup.ImportOptions{})
	r.must("Import of the ciphertexts", err)
	rd := encrypted[Device](r.t, table(r.v.plain, restored), crypt.Config{Key: r.key, Table: devicesName})
	d, err := rd.Get(r.ctx, "fleet", key)
	r.must("Get of the restored", err)
	r.wantKey("restored", d.APIKey, "compound")
}

// refusals: what an encrypted table refuses, whose errors must not hold
// the plaintext either.
func (r *run) refusals(devicesName, key string) {
	dev := r.devices(r.v.plain, devicesName).Entity()
	r.refused("an encrypted value that is not UTF-8", dev.Insert(r.ctx, &Device{PartitionKey: "x", RowKey: "bad", APIKey: r.s.value("utf8") + "\xff"}), entity.ErrInvalid)
	r.refused("Validate of it", entity.Validate(&Device{PartitionKey: "x", RowKey: "bad", APIKey: r.s.value("validate") + "\xff"}), entity.ErrInvalid)
	num := encrypted[DeviceNum](r.t, table(r.v.plain, devicesName), crypt.Config{Key: r.key})
	_, err := num.Get(r.ctx, "fleet", key)
	r.refused("a decrypted value that does not fit its field", err, entity.ErrDecode)
	_, err = num.Entity().Get(r.ctx, "fleet", key)
	r.refused("the same through Entity", err, entity.ErrDecode)
	for _, err := range dev.Query(r.ctx, entity.Query{Filter: filter.Eq("APIKey", r.s.value("filter"))}) {
		r.refused("a filter on the encrypted property", err, crypt.ErrEncryptedFilter)
		break
	}
	r.refused("a merge", dev.UpdateAny(r.ctx, &Device{PartitionKey: "fleet", RowKey: key, APIKey: r.s.value("merge")}, entity.Merge), crypt.ErrMerge)
	b := dev.NewBatch().UpdateAny(&Device{PartitionKey: "fleet", RowKey: key, APIKey: r.s.value("batch-merge")}, entity.Merge)
	_, err = dev.Submit(r.ctx, b)
	r.refused("a transaction's merge", err, crypt.ErrMerge)
	plain, err := entity.NewTable[entity.DynamicEntity](table(r.v.plain, devicesName))
	r.must("plain table", err)
	pb := plain.NewBatch().Insert((&entity.DynamicEntity{PartitionKey: "x", RowKey: "clear"}).Set("APIKey", r.s.value("unsealed")))
	_, err = dev.Submit(r.ctx, pb)
	r.refused("an entity added by a view without the protection", err, entity.ErrInvalid)
}

// Filler is a payload too large for a queue message.
type Filler struct{ Text string }
