package canary_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/wide"
)

// TestRotationAcrossPatterns checks what package crypt's doc says stays
// under the old key-encryption key after Rotate, for what the patterns
// keep: everything a pattern stores in a table — a wide entity's rows, an
// outbox intent a crashed writer left, a copy in the same table — is an
// entity of that table, moved by that table's Rotate; a copy in another
// table stays under the old key until that table is rotated; a message in
// flight holds no key material, and its handler, run after the rotations
// by workers with the new key alone, writes under the new key; a backup
// of the ciphertexts needs the old key for as long as it is kept.
func TestRotationAcrossPatterns(t *testing.T) {
	ctx := context.Background()
	old, cur := newKey(t, "rotation-old"), newKey(t, "rotation-new")
	ring := crypt.Keyring(cur, old)
	r := &run{t: t, ctx: ctx, s: newSecret(t), v: newViews(env), errs: &errs{}}
	devName, wideName, orgName, empName, dirName := r.newTable(), r.newTable(), r.newTable(), r.newTable(), r.newTable()
	devices := func(key crypt.KeyWrapper, name string) *crypt.Table[Device] {
		return encrypted[Device](t, table(env, name), crypt.Config{Key: key})
	}
	emps := func(key crypt.KeyWrapper, name string) *crypt.Table[Employee] {
		return encrypted[Employee](t, table(env, name), crypt.Config{Key: key, Types: []any{Department{}}})
	}
	depts := func(key crypt.KeyWrapper) *crypt.Table[Department] {
		return encrypted[Department](t, table(env, orgName), crypt.Config{Key: key, Types: []any{Employee{}}})
	}
	entries := func(key crypt.KeyWrapper) *crypt.Table[Entry] {
		return encrypted[Entry](t, table(env, dirName), crypt.Config{Key: key})
	}
	qs := queues(t, env)
	dcfg := func(p *eventual.Processor) denormalize.Config {
		return denormalize.Config{Processor: p, Outbox: eventual.OutboxConfig{Grace: eventual.NoGrace}}
	}
	kind := eventual.NewKind[Archived]("canary.rotation.v1")
	handled := 0
	processor := func() *eventual.Processor {
		p, err := eventual.New(qs, nil, eventual.Config{})
		r.must("eventual.New", err)
		r.must("Handle", eventual.Handle(p, kind, func(context.Context, Archived) error { handled++; return nil }, eventual.HandleOptions{}))
		return p
	}

	// Under the old key: a wide entity of several rows.
	w, err := wide.New(devices(old, wideName).Entity(), wide.Config{})
	r.must("wide.New", err)
	r.must("wide Insert", w.Insert(ctx, &Device{PartitionKey: "w", RowKey: "1", APIKey: r.s.value("wide")}))
	// An outbox intent a killed writer left, with its change.
	killed := env.With(faults.NewExecutedKiller(0))
	pk, err := eventual.New(queuesOf(killed, qs), nil, eventual.Config{})
	r.must("eventual.New, killed", err)
	ko, err := eventual.NewOutbox(pk, encrypted[Device](t, table(killed, devName), crypt.Config{Key: old}).Entity(), eventual.OutboxConfig{Grace: eventual.NoGrace})
	r.must("NewOutbox", err)
	m, err := kind.Message(Archived{"e", "1"})
	r.must("Message", err)
	r.errs.add(ko.Submit(ctx, "e", func(b *entity.Batch) error {
		b.Insert(&Device{PartitionKey: "e", RowKey: "1", APIKey: r.s.value("outbox")})
		return nil
	}, m))
	// A copy in the same table.
	same, err := denormalize.New(depts(old).Entity(), emps(old, orgName).Entity(), denormalize.Config{}, managerRel())
	r.must("denormalize.New", err)
	r.must("InsertSource", same.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: "empid 1", Name: "Jones", Phone: r.s.value("same-1")}))
	r.must("InsertTarget", same.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: "dept sales", ManagerID: "empid 1"}))
	// A copy in another table, and a change whose fan-out is in flight.
	p := processor()
	other, err := denormalize.New(entries(old).Entity(), emps(old, empName).Entity(), dcfg(p), directoryRel())
	r.must("denormalize.New", err)
	r.must("InsertTarget", other.InsertTarget(ctx, &Entry{PartitionKey: "departments", RowKey: "Sales", Manager: "empid 1"}))
	r.must("InsertSource", other.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: "empid 1", Name: "Jones", Phone: r.s.value("other-1")}))
	drain(t, p)
	_, err = other.ModifySource(ctx, "Sales", "empid 1", func(e *Employee) error { e.Phone = r.s.value("other-2"); return nil }, entity.ModifyOptions{})
	r.must("ModifySource", err) // its fan-out message waits in the queue
	// A backup of the ciphertexts.
	plain, err := entity.NewTable[entity.DynamicEntity](table(env, devName))
	r.must("plain table", err)
	var saved bytes.Buffer
	_, err = backup.Export(ctx, plain, &saved, backup.ExportOptions{})
	r.must("Export", err)

	// Rotate every table but the directory.
	for _, name := range []string{devName, wideName, orgName, empName} {
		res, err := encrypted[entity.DynamicEntity](t, table(env, name), crypt.Config{Key: ring}).Rotate(ctx, crypt.RotateOptions{})
		r.must("Rotate "+name, err)
		if res.Rewrapped == 0 {
			t.Errorf("Rotate %s rewrapped nothing: %+v", name, res)
		}
	}

	// With the new key alone: what the rotated tables hold reads.
	w, err = wide.New(devices(cur, wideName).Entity(), wide.Config{})
	r.must("wide.New", err)
	d, err := w.Get(ctx, "w", "1")
	r.must("wide Get under the new key", err)
	r.wantKey("wide", d.APIKey, "wide")
	p = processor()
	o, err := eventual.NewOutbox(p, devices(cur, devName).Entity(), eventual.OutboxConfig{Grace: eventual.NoGrace})
	r.must("NewOutbox", err)
	if n, err := o.Relay(ctx, "e"); err != nil || n != 1 {
		t.Errorf("Relay under the new key: %d sent, %v", n, err)
	}
	dep, err := depts(cur).Get(ctx, "Sales", "dept sales")
	r.must("the same table's copy under the new key", err)
	if dep.ManagerPhone != r.s.value("same-1") {
		t.Errorf("same table's copy: %q", dep.ManagerPhone)
	}
	// The other table's copy is still under the old key, until that table
	// is rotated too.
	_, err = entries(cur).Get(ctx, "departments", "Sales")
	if !errors.Is(err, crypt.ErrUnknownKey) {
		t.Errorf("the other table's copy, unrotated, read under the new key alone: %v, want ErrUnknownKey", err)
	}
	_, err = entries(ring).Rotate(ctx, crypt.RotateOptions{})
	r.must("Rotate of the directory", err)
	// The fan-out in flight holds no key: workers with the new key alone
	// run it, and write the copy again under the new key.
	_, err = denormalize.New(entries(cur).Entity(), emps(cur, empName).Entity(), dcfg(p), directoryRel())
	r.must("denormalize.New", err)
	drain(t, p)
	if handled != 1 {
		t.Errorf("the relayed intent's message was handled %d times, want 1", handled)
	}
	e, err := entries(cur).Get(ctx, "departments", "Sales")
	r.must("the other table's copy, written again", err)
	if e.ManagerPhone != r.s.value("other-2") {
		t.Errorf("the other table's copy: %q", e.ManagerPhone)
	}

	// A backup made before the rotation needs the old key.
	restored := r.newTable()
	into, err := entity.NewTable[entity.DynamicEntity](table(env, restored))
	r.must("plain table", err)
	_, err = backup.Import(ctx, into, bytes.NewReader(saved.Bytes()), backup.ImportOptions{})
	r.must("Import", err)
	_, err = encrypted[Device](t, table(env, restored), crypt.Config{Key: cur, Table: devName}).Get(ctx, "e", "1")
	if !errors.Is(err, crypt.ErrUnknownKey) {
		t.Errorf("an old backup under the new key alone: %v, want ErrUnknownKey", err)
	}
	rd := encrypted[Device](t, table(env, restored), crypt.Config{Key: ring, Table: devName})
	d, err = rd.Get(ctx, "e", "1")
	r.must("an old backup with the Keyring", err)
	r.wantKey("backup", d.APIKey, "outbox")
	_, err = rd.Rotate(ctx, crypt.RotateOptions{})
	r.must("Rotate of the restored table", err)
	d, err = encrypted[Device](t, table(env, restored), crypt.Config{Key: cur, Table: devName}).Get(ctx, "e", "1")
	r.must("the restored table, rotated, under the new key", err)
	r.wantKey("backup rotated", d.APIKey, "outbox")
}
