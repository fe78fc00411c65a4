package eventual_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestCrashAtEveryStep kills the worker of the guide's archive example
// after each of its storage requests in turn — after the receive, between
// the read, the insert into Archive and the delete from Current, between
// the department counter's read and its transaction, and between the
// handler's success and the delete of the message — then starts a fresh
// worker and checks that the employee ends in Archive only, exactly once,
// and was counted exactly once.
func TestCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	n := crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		ctx := context.Background()
		a := archiver{patterntest.Table[Employee](t, env), patterntest.Table[Employee](t, env), patterntest.Table[Department](t, env)}
		ids := seed(t, a.current, a.depts, "Sales", 1)
		qs := patterntest.Queues(t, env, 1)
		sender, err := eventual.New(qs, nil, patterntest.Fast())
		if err != nil {
			t.Fatal(err)
		}
		m, err := archiveKind.Message(ArchiveEmployee{"Sales", ids[0]})
		if err != nil {
			t.Fatal(err)
		}
		if err := sender.Enqueue(ctx, m); err != nil {
			t.Fatal(err)
		}
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				ka := archiver{
					patterntest.View[Employee](t, kenv, a.current),
					patterntest.View[Employee](t, kenv, a.archive),
					patterntest.View[Department](t, kenv, a.depts),
				}
				return runUntilDone(ctx, t, patterntest.SameQueues(t, kenv, qs), ka, 1)
			},
			Recover: func(ctx context.Context) error {
				p, err := eventual.New(qs, nil, patterntest.Crashy())
				if err != nil {
					return err
				}
				if err := eventual.Handle(p, archiveKind, a.handle, eventual.HandleOptions{}); err != nil {
					return err
				}
				return patterntest.Drain(ctx, p, qs)
			},
			Crashed: func(t *testing.T, passed int) {
				// No isolation, but nothing is ever lost: the employee is in
				// Current, in Archive, or (between the steps) in both.
				inCurrent, inArchive := len(rowKeys(t, a.current)) == 1, len(rowKeys(t, a.archive)) == 1
				if !inCurrent && !inArchive {
					t.Errorf("after %d requests the employee is in neither table", passed)
				}
				if d, err := a.depts.Get(context.Background(), "Sales", "dept"); err != nil || d.Archived > 1 {
					t.Errorf("after %d requests Archived = %d (%v)", passed, d.Archived, err)
				}
			},
			Check: func(t *testing.T) { checkArchived(t, a, qs, ids) },
		}
	}})
	// receive, read, insert, delete, read counter, counter transaction,
	// delete message: seven requests at least.
	if n < 7 {
		t.Errorf("the scenario made %d requests, want at least 7", n)
	}
}

// runUntilDone runs one worker over qs until n messages are done or ctx
// ends.
func runUntilDone(ctx context.Context, t testing.TB, qs []eventual.Queue, a archiver, n int) error {
	var mu sync.Mutex
	finished := make(chan struct{})
	left := n
	cfg := patterntest.Crashy()
	cfg.Workers, cfg.BatchSize = 1, 1 // strictly sequential: the same requests in the same order every run
	cfg.Hooks.Outcome = func(o eventual.Outcome) {
		if o.Result != eventual.Done {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if left--; left == 0 {
			close(finished)
		}
	}
	p, err := eventual.New(qs, nil, cfg)
	if err != nil {
		return err
	}
	if err := eventual.Handle(p, archiveKind, a.handle, eventual.HandleOptions{}); err != nil {
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
}

// checkArchived checks the invariant of the archive example: every
// employee in Archive and not in Current, each counted once, and no
// message left in the work or poison queue.
func checkArchived(t *testing.T, a archiver, qs []eventual.Queue, ids []string) {
	t.Helper()
	ctx := context.Background()
	if got := rowKeys(t, a.current); len(got) != 0 {
		t.Errorf("Current still holds %v", got)
	}
	if got := rowKeys(t, a.archive); !slices.Equal(got, ids) {
		t.Errorf("Archive holds %v, want %v", got, ids)
	}
	d, err := a.depts.Get(ctx, "Sales", "dept")
	if err != nil {
		t.Fatal(err)
	}
	if d.Archived != int64(len(ids)) {
		t.Errorf("Archived = %d, want %d", d.Archived, len(ids))
	}
	for _, q := range qs {
		for name, c := range map[string]int{"work": count(t, q.Work), "poison": count(t, q.Poison)} {
			if c != 0 {
				t.Errorf("%d messages left in the %s queue", c, name)
			}
		}
	}
}

func count(t testing.TB, q *azqueue.QueueClient) int {
	t.Helper()
	n, err := patterntest.MessageCount(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
