package secondaryindex_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// audit is the payload of the tests' own messages.
type audit struct {
	PK, RK string
}

var auditKind = eventual.NewKind[audit]("test.audit.v1")

// audited records the audit messages handled, by the primary's keys.
type audited struct {
	mu   sync.Mutex
	seen map[string]int
}

func (a *audited) handle(_ context.Context, m audit) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen == nil {
		a.seen = map[string]int{}
	}
	a.seen[m.PK+"/"+m.RK]++
	return nil
}

func (a *audited) count(k string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.seen[k]
}

// messageSet makes a processor over qs (from e) that handles the audit
// kind into a, and the Set of tbl with the given indexes on it.
func messageSet(t testing.TB, e *integration.Env, qs []eventual.Queue, tbl *entity.Table[Employee], pcfg eventual.Config, a *audited, indexes ...secondaryindex.Index[Employee]) (*secondaryindex.Set[Employee], *eventual.Processor) {
	t.Helper()
	p, err := eventual.New(patterntest.SameQueues(t, e, qs), nil, pcfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := eventual.Handle(p, auditKind, a.handle, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	s, err := secondaryindex.New(patterntest.View[Employee](t, e, tbl), withProcessor(remoteConfig(nil), p), indexes...)
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

func auditOf(t testing.TB, pk, rk string) secondaryindex.WriteOptions {
	t.Helper()
	m, err := auditKind.Message(audit{PK: pk, RK: rk})
	if err != nil {
		t.Fatal(err)
	}
	m.ID = "audit-" + pk + "-" + rk
	return secondaryindex.WriteOptions{Messages: []eventual.Message{m}}
}

func wideName() secondaryindex.Index[Employee] {
	ix := nameIndex(secondaryindex.TableWide)
	ix.Buckets = wideBuckets
	return ix
}

// TestUserMessages: the caller's message commits with each kind of write,
// for every placement (SamePartition too: its intent goes in the primary's
// partition), and is handled once the queue drained; a write that is
// refused sends none.
func TestUserMessages(t *testing.T) {
	t.Parallel()
	for _, pl := range []secondaryindex.Placement{secondaryindex.SamePartition, secondaryindex.OtherPartition, secondaryindex.TableWide} {
		t.Run(pl.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			tbl := employees(t, env)
			qs := patterntest.Queues(t, env, 1)
			a := &audited{}
			email := emailIndex(pl)
			s, p := messageSet(t, env, qs, tbl, fast(), a, email)
			e := Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "Jones", Email: "j@contoso.com"}
			if err := s.Insert(ctx, &e, auditOf(t, "Sales", "insert")); err != nil {
				t.Fatal(err)
			}
			e.Age = 40
			if err := s.Update(ctx, &e, auditOf(t, "Sales", "update")); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Modify(ctx, "Sales", empid(1), func(e *Employee) error { e.Age++; return nil }, entity.ModifyOptions{}, auditOf(t, "Sales", "modify")); err != nil {
				t.Fatal(err)
			}
			// Refused: the email is held; the message is not sent.
			dup := Employee{PartitionKey: "Sales", RowKey: empid(2), Email: "j@contoso.com"}
			var ue *secondaryindex.UniqueError
			if err := s.Insert(ctx, &dup, auditOf(t, "Sales", "refused")); !errors.As(err, &ue) {
				t.Fatalf("duplicate insert: %v", err)
			}
			if err := s.Delete(ctx, "Sales", empid(1), "", auditOf(t, "Sales", "delete")); err != nil {
				t.Fatal(err)
			}
			drainWide(t, p, qs)
			for _, op := range []string{"insert", "update", "modify", "delete"} {
				if n := a.count("Sales/" + op); n != 1 {
					t.Errorf("%s: its message handled %d times", op, n)
				}
			}
			if n := a.count("Sales/refused"); n != 0 {
				t.Errorf("the refused insert's message was handled %d times", n)
			}
			if ks, _ := rawScan(t, tbl.Name()); len(ks) != 0 {
				t.Errorf("left after the delete: %q", ks)
			}
		})
	}
}

// TestUserMessageRefused: messages a Set cannot commit are refused with a
// typed error before any request — nothing is written, not even a unique
// value's reservation: without a processor (a *ConfigError), an invalid
// message or two with one ID (an *eventual.MessageError), two
// WriteOptions.
func TestUserMessageRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	local := localSet(t, tbl)
	e := Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "Jones", Email: "j@contoso.com"}
	var ce *secondaryindex.ConfigError
	if err := local.Insert(ctx, &e, auditOf(t, "Sales", "x")); !errors.As(err, &ce) || !errors.Is(err, secondaryindex.ErrInvalidConfig) {
		t.Errorf("messages without a processor: %v", err)
	}
	qs := patterntest.Queues(t, env, 1)
	s, _ := wideSet(t, qs, tbl, nil, fast())
	bad := auditOf(t, "Sales", "x")
	bad.Messages[0].Kind = ""
	twice := auditOf(t, "Sales", "x")
	twice.Messages = append(twice.Messages, twice.Messages[0])
	for name, err := range map[string]error{
		"invalid":        s.Insert(ctx, &e, bad),
		"one id twice":   s.Insert(ctx, &e, twice),
		"two options":    s.Insert(ctx, &e, auditOf(t, "a", "b"), auditOf(t, "c", "d")),
		"delete invalid": s.Delete(ctx, "Sales", empid(1), "", bad),
	} {
		var me *eventual.MessageError
		if !errors.As(err, &me) && !errors.As(err, &ce) {
			t.Errorf("%s: %v, want a typed error", name, err)
		}
	}
	if ks, _ := rawScan(t, tbl.Name()); len(ks) != 0 {
		t.Errorf("written: %q", ks)
	}
}

// TestUserMessageCrash inserts an employee indexed table-wide with the
// caller's audit message in the same transaction, and kills the process
// after each storage request in turn (the transaction of the primary, the
// index intent and the message's intent; the enqueues; the intents'
// deletes). Recovery is the outbox relay and a worker that drains the
// queue, never the insert again: the audit message is handled exactly
// when the employee is stored (read raw), and nothing drifted.
func TestUserMessageCrash(t *testing.T) {
	t.Parallel()
	n := crashtest.EveryStep(t, env, crashtest.Scenario{Timeout: time.Minute, Prepare: func(t *testing.T) crashtest.Run {
		tbl := employees(t, env)
		qs := patterntest.Queues(t, env, 1)
		a := &audited{}
		s, _ := messageSet(t, env, qs, tbl, crashy(), a, wideName())
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				ks, _ := messageSet(t, kenv, qs, tbl, crashy(), &audited{}, wideName())
				e := Employee{PartitionKey: "Sales", RowKey: empid(1), FirstName: "John", LastName: "Jones"}
				return ks.Insert(ctx, &e, auditOf(t, "Sales", empid(1)))
			},
			Recover: func(ctx context.Context) error {
				if _, err := s.Relay(ctx); err != nil {
					return err
				}
				_, p := messageSet(t, env, qs, tbl, crashy(), a, wideName())
				dctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				return patterntest.Drain(dctx, p, qs)
			},
			Check: func(t *testing.T) {
				stored := rawGet(t, rawTable(t, tbl.Name()), "Sales", empid(1)) != nil
				if got := a.count("Sales/" + empid(1)); (got > 0) != stored {
					t.Errorf("employee stored %v, its audit message handled %d times", stored, got)
				}
				if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
					t.Errorf("drift: %v", fs)
				}
				ks, _ := rawScan(t, tbl.Name())
				for _, k := range ks {
					if strings.Contains(k, "/tablekit.") {
						t.Errorf("an intent is left: %s", k)
					}
				}
			},
		}
	}})
	if n < 3 {
		t.Errorf("the scenario made %d requests", n)
	}
	_ = fmt.Sprint
}
