package eventual_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// RaiseRecorded tells the payroll partition that an employee's salary
// changed: a change in another partition, counted once per raise.
type RaiseRecorded struct {
	Department string `json:"department"`
}

var raiseKind = eventual.NewKind[RaiseRecorded]("RaiseRecorded.v1")

// payroll is the outbox scenario: a raise merged into an employee together
// with the intent to count it in the department's payroll entity, which a
// handler increments Once.
type payroll struct {
	emps  *entity.Table[Employee]
	depts *entity.Table[Department]
	qs    []eventual.Queue
}

func newPayroll(t *testing.T) payroll {
	pr := payroll{patterntest.Table[Employee](t, env), patterntest.Table[Department](t, env), patterntest.Queues(t, env, 1)}
	ctx := context.Background()
	if err := pr.emps.Upsert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000123", Name: "Jones", Salary: 1000}, entity.Replace); err != nil {
		t.Fatal(err)
	}
	if err := pr.depts.Upsert(ctx, &Department{PartitionKey: "Sales", RowKey: "dept"}, entity.Replace); err != nil {
		t.Fatal(err)
	}
	return pr
}

// on returns the scenario's processor and outbox over e's clients.
func (pr payroll) on(t testing.TB, e *integration.Env, cfg eventual.Config) (*eventual.Processor, *eventual.Outbox[Employee]) {
	t.Helper()
	p, err := eventual.New(patterntest.SameQueues(t, e, pr.qs), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	depts := patterntest.View[Department](t, e, pr.depts)
	if err := eventual.Handle(p, raiseKind, func(ctx context.Context, r RaiseRecorded) error {
		_, err := eventual.Once(ctx, depts, r.Department, "raise", func(ctx context.Context, b *entity.Batch) error {
			d, err := depts.Get(ctx, r.Department, "dept")
			if err != nil {
				return err
			}
			d.Archived++ // the number of raises, here
			b.Update(&d, entity.Merge)
			return nil
		})
		return err
	}, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	o, err := eventual.NewOutbox(p, patterntest.View[Employee](t, e, pr.emps), eventual.OutboxConfig{Grace: -1})
	if err != nil {
		t.Fatal(err)
	}
	return p, o
}

// raise merges the new salary and the intent in one transaction.
func (pr payroll) raise(ctx context.Context, o *eventual.Outbox[Employee]) error {
	m, err := raiseKind.Message(RaiseRecorded{"Sales"})
	if err != nil {
		return err
	}
	return o.Submit(ctx, "Sales", func(b *entity.Batch) error {
		b.UpdateAny(&Employee{PartitionKey: "Sales", RowKey: "000123", Name: "Jones", Salary: 2000}, entity.Merge)
		return nil
	}, m)
}

// recover relays what is left and drains the queue.
func (pr payroll) recover(ctx context.Context, t testing.TB) error {
	p, o := pr.on(t, env, patterntest.Fast())
	if _, err := o.Relay(ctx); err != nil {
		return err
	}
	return patterntest.Drain(ctx, p, pr.qs)
}

// check asserts the outbox invariant: the raise was counted exactly once
// if it was committed, not at all otherwise, and no intent is left.
func (pr payroll) check(t *testing.T) (committed bool) {
	t.Helper()
	ctx := context.Background()
	e, err := pr.emps.Get(ctx, "Sales", "000123")
	if err != nil {
		t.Fatal(err)
	}
	d, err := pr.depts.Get(ctx, "Sales", "dept")
	if err != nil {
		t.Fatal(err)
	}
	committed = e.Salary == 2000
	want := int64(0)
	if committed {
		want = 1
	}
	if d.Archived != want {
		t.Errorf("salary %d and %d raises counted, want %d", e.Salary, d.Archived, want)
	}
	if rks := rowKeys(t, pr.emps); len(rks) != 1 {
		t.Errorf("the employee's partition holds %v: an intent is left", rks)
	}
	if n := count(t, pr.qs[0].Work) + count(t, pr.qs[0].Poison); n != 0 {
		t.Errorf("%d messages left", n)
	}
	return committed
}

// TestOutboxCrash kills the writer after each request of Submit: before
// the transaction, between the transaction and the enqueue (the window the
// guide leaves open), and between the enqueue and the deletion of the
// intent (a second copy is sent later). A later relay and worker make the
// raise count exactly once whenever it was committed.
func TestOutboxCrash(t *testing.T) {
	t.Parallel()
	n := crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		pr := newPayroll(t)
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				_, o := pr.on(t, kenv, patterntest.Fast())
				return pr.raise(ctx, o)
			},
			Crashed: func(t *testing.T, passed int) {
				// Once the raise is committed its intent is never lost: it is
				// in the partition, or already in the queue, or both.
				e, err := pr.emps.Get(context.Background(), "Sales", "000123")
				if err != nil {
					t.Fatal(err)
				}
				intents := len(rowKeys(t, pr.emps)) - 1
				queued := count(t, pr.qs[0].Work)
				if e.Salary == 2000 && intents+queued == 0 {
					t.Errorf("after %d requests the raise is committed and its message lost", passed)
				}
				if e.Salary != 2000 && intents+queued != 0 {
					t.Errorf("after %d requests a message exists for a raise that was not committed", passed)
				}
			},
			Recover: func(ctx context.Context) error { return pr.recover(ctx, t) },
			Check:   func(t *testing.T) { pr.check(t) },
		}
	}})
	// transaction, enqueue, delete of the intent
	if n != 3 {
		t.Errorf("Submit made %d requests, want 3", n)
	}
}

// TestOutboxLostReply loses the reply of Submit's transaction: azcore
// resends it, the resend fails at the intent's insert, and Submit still
// reports success, because the intent carries its attempt id.
func TestOutboxLostReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pr := newPayroll(t)
	f := faults.New(faults.Config{})
	f.LoseNext(1, func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/$batch") })
	_, o := pr.on(t, env.With(f), patterntest.Fast())
	if err := pr.raise(ctx, o); err != nil {
		t.Fatalf("Submit after a lost reply = %v, want nil", err)
	}
	if f.Stats().LostReplies != 1 {
		t.Fatalf("%d replies lost, want 1", f.Stats().LostReplies)
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := pr.recover(dctx, t); err != nil {
		t.Fatal(err)
	}
	if !pr.check(t) {
		t.Error("the raise was not committed")
	}
}
