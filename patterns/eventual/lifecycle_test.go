package eventual_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/internal/clock"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestShutdownLosesNothing stops a processor while one handler runs and
// another message waits in hand: the running handler's context is
// cancelled after the grace period and its message released, the waiting
// one released at once; both are visible again immediately and a new
// processor finishes them.
func TestShutdownLosesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	qs := patterntest.Queues(t, env, 1)
	rec := newOutcomes()
	cfg := patterntest.Fast()
	cfg.Workers = 1
	cfg.VisibilityTimeout = 30 * time.Second // a crash would hide them for 30 s; a shutdown does not
	cfg.ShutdownGrace = 100 * time.Millisecond
	cfg.Hooks = rec.hooks()
	p, err := eventual.New(qs, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var started atomic.Int32
	if err := eventual.Handle(p, archiveKind, func(ctx context.Context, m ArchiveEmployee) error {
		started.Add(1)
		<-ctx.Done() // a long handler that honours its context
		return ctx.Err()
	}, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"000001", "000002"} {
		m, _ := archiveKind.Message(ArchiveEmployee{"Sales", id})
		if err := p.Enqueue(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	stop := run(t, p)
	waitFor(t, "the first handler", func() bool { return started.Load() == 1 })
	stop()
	if got := rec.count(eventual.Released); got != 2 {
		t.Fatalf("%d messages released, want 2: %+v", got, rec.list())
	}
	for _, o := range rec.list() {
		if !errors.Is(o.Err, context.Canceled) {
			t.Errorf("released with %v, want context.Canceled", o.Err)
		}
	}
	if got := len(peekAll(t, qs[0].Work)); got != 2 {
		t.Fatalf("%d messages visible right after the shutdown, want 2", got)
	}
	// A fresh processor finishes them.
	done := newOutcomes()
	cfg.Hooks = done.hooks()
	p2, err := eventual.New(qs, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := eventual.Handle(p2, archiveKind, func(context.Context, ArchiveEmployee) error { return nil }, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := patterntest.Drain(dctx, p2, qs); err != nil {
		t.Fatal(err)
	}
	if got := done.count(eventual.Done); got != 2 {
		t.Errorf("%d done after the restart, want 2", got)
	}
}

// TestVisibilityRenewal runs a handler for 9 s with a 4 s visibility
// timeout while a second worker polls the same queue: the renewals keep
// the message invisible, so it is delivered once; the cost meter counts
// the UpdateMessage requests that did it. It does not run in parallel:
// its renewals must reach the service within 2 s, which an Azurite busy
// with the package's parallel crash tests does not always allow.
func TestVisibilityRenewal(t *testing.T) {
	ctx := context.Background()
	meter := cost.NewMeter()
	metered := env.With(meter.Policy())
	qs := patterntest.Queues(t, env, 1)
	rec := newOutcomes()
	cfg := patterntest.Fast()
	cfg.Workers = 1
	// A 4 s window renewed every 2 s: a renewal may be late by up to 2 s
	// (a loaded machine, an Azurite pause) before another worker could
	// receive the message, which is what the test would then catch.
	cfg.VisibilityTimeout = 4 * time.Second
	cfg.Hooks = rec.hooks()
	var runs atomic.Int32
	slow := func(ctx context.Context, _ ArchiveEmployee) error {
		runs.Add(1)
		select {
		case <-time.After(9 * time.Second):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var procs []*eventual.Processor
	for range 2 {
		p, err := eventual.New(patterntest.SameQueues(t, metered, qs), nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := eventual.Handle(p, archiveKind, slow, eventual.HandleOptions{}); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, p)
	}
	m, _ := archiveKind.Message(ArchiveEmployee{"Sales", "000001"})
	if err := procs[0].Enqueue(ctx, m); err != nil {
		t.Fatal(err)
	}
	before := meter.Snapshot()
	for _, p := range procs {
		defer run(t, p)()
	}
	waitFor(t, "the slow handler", func() bool { return rec.count(eventual.Done) == 1 })
	used := meter.Snapshot().Sub(before)
	if got := runs.Load(); got != 1 {
		t.Errorf("the handler ran %d times, want 1", got)
	}
	if o := rec.list()[0]; o.DequeueCount != 1 {
		t.Errorf("dequeue count %d, want 1", o.DequeueCount)
	}
	// Renewals at 2 s, 4 s, 6 s, 8 s (each halfway through a 4 s window).
	if n := used.Count(cost.Queue, cost.OpUpdateMessage); n < 3 || n > 5 {
		t.Errorf("%d UpdateMessage requests, want about 4", n)
	}
}

// TestRenewalOnTheProcessorsClock runs a processor on a fake clock: the
// renewal of a running handler's message comes when the clock reaches half
// the visibility timeout, not before, with no real waiting.
func TestRenewalOnTheProcessorsClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	metered := env.With(meter.Policy())
	qs := patterntest.Queues(t, env, 1)
	fake := clock.NewFake(time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC))
	cfg := patterntest.Fast()
	cfg.Workers, cfg.BatchSize = 1, 1
	cfg.Clock = fake
	rec := newOutcomes()
	cfg.Hooks = rec.hooks()
	p, err := eventual.New(patterntest.SameQueues(t, metered, qs), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	if err := eventual.Handle(p, archiveKind, func(context.Context, ArchiveEmployee) error {
		close(started)
		<-release
		return nil
	}, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	m, _ := archiveKind.Message(ArchiveEmployee{"Sales", "000001"})
	if err := p.Enqueue(ctx, m); err != nil {
		t.Fatal(err)
	}
	defer run(t, p)()
	<-started
	renewals := func() int64 { return meter.Snapshot().Count(cost.Queue, cost.OpUpdateMessage) }
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := fake.WaitForWaiters(wctx, 1); err != nil { // the lease waits
		t.Fatal(err)
	}
	fake.Advance(14 * time.Second)
	time.Sleep(50 * time.Millisecond)
	if n := renewals(); n != 0 {
		t.Fatalf("%d renewals at 14 s of a 30 s visibility timeout", n)
	}
	fake.Advance(time.Second)
	waitFor(t, "the renewal at 15 s", func() bool { return renewals() == 1 })
	close(release)
	waitFor(t, "the delete", func() bool { return rec.count(eventual.Done) == 1 })
	if n := count(t, qs[0].Work); n != 0 {
		t.Errorf("%d messages left: the delete used a stale pop receipt?", n)
	}
}
