package secondaryindex_test

import (
	"context"
	"errors"
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

// TestCrashAtEveryStep changes an employee's email (unique) and last
// name (non-unique), both indexed in other partitions, and kills the
// process after each storage request in turn: the writer's read,
// reservation, transaction with the outbox intent, enqueue and intent
// delete, then the worker's receive, reads, entry writes and deletes and
// the message's delete. Before recovery, a verified lookup of the old or
// new values never returns an employee that does not hold them. Recovery
// is what a restarted program does — the writer's call again (it never
// returned success), the outbox relay, a worker that drains the queue —
// after which nothing has drifted and no message is poisoned.
func TestCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	n := crashtest.EveryStep(t, env, crashtest.Scenario{Timeout: time.Minute, Prepare: func(t *testing.T) crashtest.Run {
		ctx := context.Background()
		tbl := employees(t, env)
		qs := patterntest.Queues(t, env, 1)
		s, _ := remoteSet(t, env, qs, tbl, nil, fast())
		for i, email := range []string{"jonesj@contoso.com", "other@contoso.com"} {
			e := Employee{PartitionKey: "Sales", RowKey: empid(i), FirstName: "John", LastName: "Jones", Email: email}
			if err := s.Insert(ctx, &e); err != nil {
				t.Fatal(err)
			}
		}
		if err := drainSet(ctx, t, env, qs, tbl); err != nil {
			t.Fatal(err)
		}
		change := func(e *Employee) error {
			e.Email, e.LastName = "john.jones@contoso.com", "Jonas"
			return nil
		}
		var wrote bool
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				done := make(chan struct{})
				var once sync.Once
				cfg := crashy()
				cfg.Hooks.Outcome = func(o eventual.Outcome) {
					if o.Result == eventual.Done {
						once.Do(func() { close(done) })
					}
				}
				ks, kp := remoteSet(t, kenv, qs, tbl, nil, cfg)
				if _, err := ks.Modify(ctx, "Sales", empid(0), change, entity.ModifyOptions{}); err != nil {
					return err
				}
				wrote = true
				// One worker, until it has handled the message.
				rctx, cancel := context.WithCancel(ctx)
				ran := make(chan error, 1)
				go func() { ran <- kp.Run(rctx) }()
				select {
				case <-done:
				case <-ctx.Done():
				}
				cancel()
				return <-ran
			},
			Crashed: func(t *testing.T, passed int) {
				for _, q := range [][2]string{{"email", "jonesj@contoso.com"}, {"email", "john.jones@contoso.com"}, {"name", "Jones"}, {"name", "Jonas"}} {
					for e, err := range s.LookupAll(context.Background(), q[0], "Sales", q[1], secondaryindex.LookupOptions{Verify: true}) {
						if err != nil {
							t.Fatal(err)
						}
						if v := map[string]string{"email": strings.ToLower(e.Email), "name": e.LastName}[q[0]]; v != q[1] {
							t.Errorf("after %d requests a verified lookup of %s %q returned %s holding %q", passed, q[0], q[1], e.RowKey, v)
						}
					}
				}
			},
			Recover: func(ctx context.Context) error {
				if !wrote {
					if _, err := s.Modify(ctx, "Sales", empid(0), change, entity.ModifyOptions{}); err != nil {
						return err
					}
				}
				if _, err := s.Relay(ctx); err != nil {
					return err
				}
				return drainSet(ctx, t, env, qs, tbl)
			},
			Check: func(t *testing.T) {
				if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
					t.Errorf("drift: %v", fs)
				}
				got, err := s.Lookup(context.Background(), "email", "Sales", "john.jones@contoso.com", secondaryindex.LookupOptions{})
				if err != nil || got.RowKey != empid(0) || got.LastName != "Jonas" {
					t.Errorf("lookup of the new email: %+v, %v", got, err)
				}
				if _, err := s.Lookup(context.Background(), "email", "Sales", "jonesj@contoso.com", secondaryindex.LookupOptions{}); !errors.Is(err, entity.ErrNotFound) {
					t.Errorf("the old email's entry: %v", err)
				}
				if n := poisoned(t, qs); n != 0 {
					t.Errorf("%d messages poisoned", n)
				}
			},
		}
	}})
	// read, reserve (read, insert), transaction, enqueue, delete intent,
	// receive, and the worker's reads and writes: at least a dozen.
	if n < 12 {
		t.Errorf("the scenario made %d requests", n)
	}
}

// crashy is fast with a one-second visibility timeout: a message a
// crashed worker held reappears after a second.
func crashy() eventual.Config {
	c := fast()
	c.VisibilityTimeout = time.Second
	c.Workers = 1
	return c
}

// drainSet drains qs with a fresh processor serving a fresh Set of tbl.
func drainSet(ctx context.Context, t testing.TB, e *integration.Env, qs []eventual.Queue, tbl *entity.Table[Employee]) error {
	_, p := remoteSet(t, e, qs, tbl, nil, crashy())
	dctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	start := time.Now()
	rep, err := p.Drain(dctx)
	if err != nil {
		// What the drain did tells slowness (many Done) from a message
		// that never settles (Retried growing, Done flat).
		t.Logf("drain after %v: %+v", time.Since(start).Round(time.Millisecond), rep)
	}
	return err
}
