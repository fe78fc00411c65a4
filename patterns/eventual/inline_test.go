package eventual_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// inlinePayroll is the payroll scenario over an inline processor: the
// raise's handler (counting it Once in the department) runs in Submit.
// fail, if set, is asked before each run of the handler and fails it with
// its error; after, if set, runs once the handler's change is applied.
type inlinePayroll struct {
	payroll
	fail  func() error
	after func(ctx context.Context)

	mu         sync.Mutex
	deliveries []eventual.Delivery
}

func newInlinePayroll(t *testing.T) *inlinePayroll {
	return &inlinePayroll{payroll: payroll{emps: patterntest.Table[Employee](t, env), depts: patterntest.Table[Department](t, env)}}
}

// seed writes the employee and the department.
func (ip *inlinePayroll) seed(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := ip.emps.Upsert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000123", Name: "Jones", Salary: 1000}, entity.Replace); err != nil {
		t.Fatal(err)
	}
	if err := ip.depts.Upsert(ctx, &Department{PartitionKey: "Sales", RowKey: "dept"}, entity.Replace); err != nil {
		t.Fatal(err)
	}
}

// on returns an inline processor with the raise's handler, and the outbox
// of the employees, over e's clients.
func (ip *inlinePayroll) on(t testing.TB, e *integration.Env, cfg eventual.Config) (*eventual.Processor, *eventual.Outbox[Employee]) {
	t.Helper()
	p, err := eventual.NewInline(cfg)
	if err != nil {
		t.Fatal(err)
	}
	depts := patterntest.View[Department](t, e, ip.depts)
	if err := eventual.Handle(p, raiseKind, func(ctx context.Context, r RaiseRecorded) error {
		if d, ok := eventual.DeliveryFrom(ctx); ok {
			ip.mu.Lock()
			ip.deliveries = append(ip.deliveries, d)
			ip.mu.Unlock()
		}
		if ip.fail != nil {
			if err := ip.fail(); err != nil {
				return err
			}
		}
		_, err := eventual.Once(ctx, depts, r.Department, "raise", func(ctx context.Context, b *entity.Batch) error {
			d, err := depts.Get(ctx, r.Department, "dept")
			if err != nil {
				return err
			}
			d.Archived++
			b.Update(&d, entity.Merge)
			return nil
		})
		if err == nil && ip.after != nil {
			ip.after(ctx)
		}
		return err
	}, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	o, err := eventual.NewOutbox(p, patterntest.View[Employee](t, e, ip.emps), eventual.OutboxConfig{Grace: eventual.NoGrace})
	if err != nil {
		t.Fatal(err)
	}
	return p, o
}

// counted reads the department's count of raises and the employee's
// partition's RowKeys (the employee, and any intent left).
func (ip *inlinePayroll) counted(t *testing.T) (int64, []string) {
	t.Helper()
	d, err := ip.depts.Get(context.Background(), "Sales", "dept")
	if err != nil {
		t.Fatal(err)
	}
	return d.Archived, rowKeys(t, ip.emps)
}

// TestInlineSubmitRunsTheHandler: over an inline processor, Submit
// returns with the handler already run — the raise counted, the intent
// deleted — on the message as a worker would see it (kind, id, creation
// time, DequeueCount 1, no queue), reported once to Hooks.Outcome as Done;
// no queue exists and Provision creates none.
func TestInlineSubmitRunsTheHandler(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ip := newInlinePayroll(t)
	ip.seed(t)
	rec := newOutcomes()
	cfg := eventual.Config{Hooks: rec.hooks()}
	p, o := ip.on(t, env, cfg)
	if err := p.Provision(ctx); err != nil {
		t.Fatalf("Provision: %v", err)
	}
	m, err := raiseKind.Message(RaiseRecorded{"Sales"})
	if err != nil {
		t.Fatal(err)
	}
	m.Created = time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	if err := o.Submit(ctx, "Sales", func(b *entity.Batch) error {
		b.UpdateAny(&Employee{PartitionKey: "Sales", RowKey: "000123", Salary: 2000}, entity.Merge)
		return nil
	}, m); err != nil {
		t.Fatal(err)
	}
	n, rks := ip.counted(t)
	if n != 1 || len(rks) != 1 {
		t.Fatalf("after Submit: %d raises counted, partition %v; want 1 and the employee alone", n, rks)
	}
	if len(ip.deliveries) != 1 {
		t.Fatalf("%d deliveries", len(ip.deliveries))
	}
	d := ip.deliveries[0]
	if d.Kind != m.Kind || d.ID != m.ID || !d.Created.Equal(m.Created) || d.DequeueCount != 1 || d.Queue != "" || d.MessageID != "" {
		t.Errorf("delivery %+v, want kind %s, id %s, created %v, dequeue count 1, no queue", d, m.Kind, m.ID, m.Created)
	}
	if outs := rec.list(); len(outs) != 1 || outs[0].Result != eventual.Done || outs[0].ID != m.ID || outs[0].DequeueCount != 1 {
		t.Errorf("outcomes %+v, want one Done of %s", outs, m.ID)
	}
	if errs := rec.errors(); len(errs) != 0 {
		t.Errorf("errors reported: %v", errs)
	}
	if !p.Inline() {
		t.Error("Inline() is false")
	}
	// Nothing to relay: the Submit did it all.
	if sent, err := o.Relay(ctx); sent != 0 || err != nil {
		t.Errorf("Relay: %d, %v", sent, err)
	}
}

// TestInlineHandlerFailureLeavesTheIntent: the handler fails on its run
// in Submit (injected). Submit still returns nil — the change committed —
// and reports the failure to Hooks.Error and Hooks.Outcome (Retry); the
// intent stays. A handler failing again makes each Relay return a
// *RelayError and keep the intent; once it succeeds, Relay runs it, the
// raise is counted once and the intent is gone, and a further Relay finds
// nothing.
func TestInlineHandlerFailureLeavesTheIntent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ip := newInlinePayroll(t)
	ip.seed(t)
	injected := errors.New("injected handler failure")
	var failing atomic.Int32
	failing.Store(3) // Submit's run and two Relays
	ip.fail = func() error {
		if failing.Add(-1) >= 0 {
			return injected
		}
		return nil
	}
	rec := newOutcomes()
	_, o := ip.on(t, env, eventual.Config{Hooks: rec.hooks()})
	if err := ip.raise(ctx, o); err != nil {
		t.Fatalf("Submit reported the handler's failure: %v", err)
	}
	e, err := ip.emps.Get(ctx, "Sales", "000123")
	if err != nil || e.Salary != 2000 {
		t.Fatalf("the change: %+v, %v", e, err)
	}
	if n, rks := ip.counted(t); n != 0 || len(rks) != 2 || !strings.HasPrefix(rks[1], eventual.OutboxPrefix) {
		t.Fatalf("after a failed run: %d counted, partition %v; want 0 and the intent", n, rks)
	}
	if errs := rec.errors(); len(errs) != 1 || !errors.Is(errs[0], injected) {
		t.Errorf("Hooks.Error got %v, want the handler's error", errs)
	}
	if rec.count(eventual.Retry) != 1 {
		t.Errorf("outcomes %+v, want one Retry", rec.list())
	}
	for i := range 2 {
		sent, err := o.Relay(ctx)
		var re *eventual.RelayError
		if sent != 0 || !errors.As(err, &re) || !errors.Is(err, injected) || re.Partition != "Sales" || re.SetAside {
			t.Fatalf("Relay %d with a failing handler: %d, %v; want a *RelayError of the handler's error", i, sent, err)
		}
		if n, rks := ip.counted(t); n != 0 || len(rks) != 2 {
			t.Fatalf("after Relay %d: %d counted, partition %v", i, n, rks)
		}
	}
	if sent, err := o.Relay(ctx); sent != 1 || err != nil {
		t.Fatalf("Relay: %d, %v; want 1 run", sent, err)
	}
	if n, rks := ip.counted(t); n != 1 || len(rks) != 1 {
		t.Fatalf("after Relay: %d counted, partition %v; want 1 and no intent", n, rks)
	}
	if sent, err := o.Relay(ctx); sent != 0 || err != nil {
		t.Errorf("a second Relay: %d, %v", sent, err)
	}
}

// TestInlineDuplicateRunCountsOnce: the handler applies its change and
// the process loses the rest of Submit (the context is cancelled before
// the intent's delete, injected from the handler): the intent stays, and
// Relay runs the handler a second time, which Once makes count once.
func TestInlineDuplicateRunCountsOnce(t *testing.T) {
	t.Parallel()
	ip := newInlinePayroll(t)
	ip.seed(t)
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	ip.after = func(context.Context) { once.Do(cancel) }
	_, o := ip.on(t, env, eventual.Config{})
	if err := ip.raise(ctx, o); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if n, rks := ip.counted(t); n != 1 || len(rks) != 2 {
		t.Fatalf("after the cut Submit: %d counted, partition %v; want 1 and the intent", n, rks)
	}
	if sent, err := o.Relay(context.Background()); sent != 1 || err != nil {
		t.Fatalf("Relay: %d, %v", sent, err)
	}
	if n, rks := ip.counted(t); n != 1 || len(rks) != 1 {
		t.Fatalf("after Relay: %d counted, partition %v; want 1 and no intent", n, rks)
	}
	if len(ip.deliveries) != 2 || ip.deliveries[0].ID != ip.deliveries[1].ID {
		t.Errorf("deliveries %+v, want two runs of one message", ip.deliveries)
	}
}

// TestInlineSubmitCrash kills the writer after each request of an inline
// Submit — the transaction, the handler's read and Once transaction, the
// intent's delete — and before each, then relays with a fresh inline
// processor: the raise is counted exactly once when it was committed, not
// at all otherwise, and no intent is left.
func TestInlineSubmitCrash(t *testing.T) {
	t.Parallel()
	n := crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		ip := newInlinePayroll(t)
		ip.seed(t)
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				_, o := ip.on(t, kenv, eventual.Config{})
				return ip.raise(ctx, o)
			},
			Recover: func(ctx context.Context) error {
				fresh := &inlinePayroll{payroll: ip.payroll}
				_, o := fresh.on(t, env, eventual.Config{})
				_, err := o.Relay(ctx)
				return err
			},
			Check: func(t *testing.T) {
				e, err := ip.emps.Get(context.Background(), "Sales", "000123")
				if err != nil {
					t.Fatal(err)
				}
				want := int64(0)
				if e.Salary == 2000 {
					want = 1
				}
				if n, rks := ip.counted(t); n != want || len(rks) != 1 {
					t.Errorf("salary %d: %d raises counted, partition %v; want %d and no intent", e.Salary, n, rks, want)
				}
			},
		}
	}})
	// The transaction, the department's read and Once transaction, the
	// intent's delete.
	if n < 4 {
		t.Errorf("the scenario made %d requests", n)
	}
}

// TestInlineRefusesWhatNeedsAQueue: an inline processor refuses, with an
// *InlineError matching ErrInline and before any request, what needs a
// queue — Run, Drain, Replay, PoisonRecord, a delayed Enqueue — and
// provisions nothing. A message no handler of the processor can run (an
// unknown kind, a payload that does not decode) is refused by
// CheckSendable and by Submit before its transaction (nothing committed),
// and an intent of such a message that is already stored is set aside by
// Relay (ErrUnsendable). Its grace rules: no redelivery window, any
// positive grace, a default of 10 s.
func TestInlineRefusesWhatNeedsAQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, err := eventual.NewInline(eventual.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eventual.NewInline(eventual.Config{BatchSize: 99}); !errors.Is(err, eventual.ErrInvalidConfig) {
		t.Errorf("NewInline with a bad Config: %v", err)
	}
	if err := eventual.Handle(p, raiseKind, func(context.Context, RaiseRecorded) error { return nil }, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	refused := func(what string, err error) {
		t.Helper()
		var ie *eventual.InlineError
		if !errors.As(err, &ie) || !errors.Is(err, eventual.ErrInline) {
			t.Errorf("%s: %v, want an *InlineError", what, err)
		}
	}
	refused("Run", p.Run(ctx))
	_, err = p.Drain(ctx)
	refused("Drain", err)
	_, err = p.Replay(ctx, eventual.ReplayOptions{})
	refused("Replay", err)
	_, err = p.PoisonRecord(ctx, "q", "id")
	refused("PoisonRecord", err)
	m, err := raiseKind.Message(RaiseRecorded{"Sales"})
	if err != nil {
		t.Fatal(err)
	}
	delayed := m
	delayed.Delay = time.Second
	refused("Enqueue with a Delay", p.Enqueue(ctx, delayed))
	if err := p.Provision(ctx); err != nil {
		t.Errorf("Provision: %v", err)
	}
	if err := p.CreateQueues(ctx); err != nil {
		t.Errorf("CreateQueues: %v", err)
	}
	if w, g := p.RedeliveryWindow(), p.DefaultGrace(); w != 0 || g != 10*time.Second {
		t.Errorf("RedeliveryWindow %v, DefaultGrace %v", w, g)
	}
	if err := p.CheckGrace("Config.Grace", time.Hour); err != nil {
		t.Errorf("CheckGrace(1h): %v", err)
	}
	if err := p.CheckGrace("Config.Grace", 0); !errors.Is(err, eventual.ErrInvalidConfig) {
		t.Errorf("CheckGrace(0): %v", err)
	}

	unknown := eventual.Message{Kind: "Unknown.v1", ID: "u1", Payload: json.RawMessage(`{}`)}
	badPayload := eventual.Message{Kind: raiseKind.Name(), ID: "b1", Payload: json.RawMessage(`{"department": 7}`)}
	for _, bad := range []eventual.Message{unknown, badPayload} {
		if err := p.CheckSendable(bad); !errors.Is(err, eventual.ErrInvalidMessage) {
			t.Errorf("CheckSendable(%s): %v", bad.ID, err)
		}
	}
	ip := newInlinePayroll(t)
	ip.seed(t)
	o, err := eventual.NewOutbox(p, ip.emps, eventual.OutboxConfig{Grace: eventual.NoGrace})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []eventual.Message{unknown, badPayload} {
		err := o.Submit(ctx, "Sales", func(b *entity.Batch) error {
			b.UpdateAny(&Employee{PartitionKey: "Sales", RowKey: "000123", Salary: 2000}, entity.Merge)
			return nil
		}, bad)
		if !errors.Is(err, eventual.ErrInvalidMessage) {
			t.Errorf("Submit(%s): %v", bad.ID, err)
		}
	}
	if e, err := ip.emps.Get(ctx, "Sales", "000123"); err != nil || e.Salary != 1000 {
		t.Errorf("a refused Submit committed: %+v, %v", e, err)
	}

	// An intent of a kind this processor has no handler for, written by a
	// processor that had one: Relay sets it aside.
	q, err := eventual.NewInline(eventual.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := eventual.Handle(q, eventual.NewKind[json.RawMessage]("Unknown.v1"), func(context.Context, json.RawMessage) error { return errors.New("not yet") }, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	qo, err := eventual.NewOutbox(q, ip.emps, eventual.OutboxConfig{Grace: eventual.NoGrace})
	if err != nil {
		t.Fatal(err)
	}
	if err := qo.Submit(ctx, "Sales", nil, unknown); err != nil {
		t.Fatal(err)
	}
	sent, err := o.Relay(ctx)
	var re *eventual.RelayError
	if sent != 0 || !errors.Is(err, eventual.ErrUnsendable) || !errors.As(err, &re) || re.ID != unknown.ID {
		t.Errorf("Relay of an intent no handler runs: %d, %v; want it set aside", sent, err)
	}
	if us := patterntest.Collect(t, o.Unsendable(ctx, "Sales")); len(us) != 1 || us[0].Message.ID != unknown.ID {
		t.Errorf("unsendable: %+v", us)
	}
}

// TestInlineEnqueueRunsOrRefuses: Enqueue on an inline processor runs
// each message's handler and returns nil once all succeeded; a handler's
// error, or its panic, is that message's *EnqueueError (nothing keeps the
// message), the others run; an unknown kind is refused before any
// handler runs.
func TestInlineEnqueueRunsOrRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, err := eventual.NewInline(eventual.Config{})
	if err != nil {
		t.Fatal(err)
	}
	injected := errors.New("injected")
	var ran sync.Map
	kind := eventual.NewKind[string]("Note.v1")
	if err := eventual.Handle(p, kind, func(ctx context.Context, s string) error {
		ran.Store(s, true)
		switch s {
		case "fail":
			return injected
		case "panic":
			panic("injected panic")
		}
		return nil
	}, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	msg := func(s string) eventual.Message {
		m, err := kind.Message(s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if err := p.Enqueue(ctx, msg("ok")); err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	if _, ok := ran.Load("ok"); !ok {
		t.Fatal("the handler did not run in Enqueue")
	}
	err = p.Enqueue(ctx, msg("fail"), msg("panic"), msg("ok2"))
	var ee *eventual.EnqueueError
	if !errors.Is(err, injected) || !errors.As(err, &ee) || !strings.Contains(err.Error(), "panicked") {
		t.Errorf("Enqueue of a failing and a panicking message: %v", err)
	}
	if _, ok := ran.Load("ok2"); !ok {
		t.Error("a failing message kept another from running")
	}
	unknown := eventual.Message{Kind: "Unknown.v1", ID: "u1", Payload: json.RawMessage(`{}`)}
	if err := p.Enqueue(ctx, msg("never"), unknown); !errors.Is(err, eventual.ErrInvalidMessage) {
		t.Errorf("Enqueue of an unknown kind: %v", err)
	}
	if _, ok := ran.Load("never"); ok {
		t.Error("a message ran although another of the call was refused")
	}
}

// TestNoGraceIgnoresClockSkew: with NoGrace, Relay sends an intent however
// its row's Timestamp, set by the server's clock, compares with this
// process's clock — here an hour behind (Azurite's own Timestamps run up
// to 1 ms ahead of the time they were written).
func TestNoGraceIgnoresClockSkew(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ip := newInlinePayroll(t)
	ip.seed(t)
	behind := func() time.Time { return time.Now().Add(-time.Hour) }
	kind := eventual.NewKind[json.RawMessage]("Later.v1")
	// The writer's handler fails, so its Submit leaves the intent.
	w, err := eventual.NewInline(eventual.Config{Now: behind})
	if err != nil {
		t.Fatal(err)
	}
	if err := eventual.Handle(w, kind, func(context.Context, json.RawMessage) error { return errors.New("not yet") }, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	wo, err := eventual.NewOutbox(w, ip.emps, eventual.OutboxConfig{Grace: eventual.NoGrace})
	if err != nil {
		t.Fatal(err)
	}
	m := eventual.Message{Kind: kind.Name(), ID: "later-1", Payload: json.RawMessage(`{}`)}
	if err := wo.Submit(ctx, "Sales", nil, m); err != nil {
		t.Fatal(err)
	}
	// The relay's handler succeeds.
	var ran atomic.Int32
	r, err := eventual.NewInline(eventual.Config{Now: behind})
	if err != nil {
		t.Fatal(err)
	}
	if err := eventual.Handle(r, kind, func(context.Context, json.RawMessage) error { ran.Add(1); return nil }, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	ro, err := eventual.NewOutbox(r, ip.emps, eventual.OutboxConfig{Grace: eventual.NoGrace})
	if err != nil {
		t.Fatal(err)
	}
	if sent, err := ro.Relay(ctx); sent != 1 || err != nil || ran.Load() != 1 {
		t.Fatalf("Relay with a clock an hour behind: sent %d, ran %d, %v; want the intent sent", sent, ran.Load(), err)
	}
	if rows := patterntest.Collect(t, ip.emps.Query(ctx, entity.Query{})); len(rows) != 1 {
		t.Errorf("rows left: %d, want the employee only", len(rows))
	}
}
