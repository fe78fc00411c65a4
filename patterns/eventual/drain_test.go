package eventual_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestDrainHandlesEverythingThenReturns enqueues 500 messages and one
// that can never succeed, and drains: Drain returns nil once each of the
// 500 ran and the odd one was poisoned, reporting 500 done and 1
// poisoned, nothing left; the raw queues agree (0 in the work queue, 1 in
// the poison queue).
func TestDrainHandlesEverythingThenReturns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	qs := patterntest.Queues(t, env, 2)
	cfg := patterntest.Fast()
	cfg.EnqueueConcurrency = 16
	p, err := eventual.New(qs, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	ran := map[string]int{}
	if err := eventual.Handle(p, noteKind, func(_ context.Context, n Note) error {
		mu.Lock()
		ran[n.Text]++
		mu.Unlock()
		return nil
	}, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	msgs := make([]eventual.Message, 500)
	for i := range msgs {
		if msgs[i], err = noteKind.Message(Note{fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Enqueue(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	if _, err := qs[1].Work.EnqueueMessage(ctx, "not an envelope", nil); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	rep, err := p.Drain(dctx)
	if err != nil {
		t.Fatalf("Drain = %+v, %v", rep, err)
	}
	if rep.Done != 500 || rep.Poisoned != 1 || rep.Left != 0 || rep.InPoison != 1 || rep.Released != 0 {
		t.Errorf("Drain reported %+v, want 500 done, 1 poisoned, 0 left, 1 in the poison queues", rep)
	}
	if len(ran) != 500 {
		t.Errorf("%d distinct messages ran, want 500", len(ran))
	}
	work, poison := 0, 0
	for _, q := range qs {
		work += count(t, q.Work)
		poison += count(t, q.Poison)
	}
	if work != 0 || poison != 1 {
		t.Errorf("raw counts: %d in the work queues, %d poisoned; want 0 and 1", work, poison)
	}
	// The processor is free again.
	if _, err := p.Drain(dctx); err != nil {
		t.Errorf("second Drain = %v", err)
	}
}

// TestDrainDeadlineReportsWhatIsLeft: a message delayed for an hour keeps
// the queue from draining; at the deadline Drain stops, returns an error
// matching context.DeadlineExceeded, and reports the message left. A
// Drain while the processor runs is refused with ErrRunning.
func TestDrainDeadlineReportsWhatIsLeft(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	qs := patterntest.Queues(t, env, 1)
	cfg := patterntest.Fast()
	handled := make(chan struct{}, 1)
	cfg.Hooks.Outcome = func(eventual.Outcome) { handled <- struct{}{} }
	p, err := eventual.New(qs, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := eventual.Handle(p, noteKind, func(context.Context, Note) error { return nil }, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	later, _ := noteKind.Message(Note{"later"})
	later.Delay = time.Hour
	now, _ := noteKind.Message(Note{"now"})
	if err := p.Enqueue(ctx, later, now); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	type result struct {
		rep eventual.DrainReport
		err error
	}
	first := make(chan result, 1)
	go func() {
		rep, err := p.Drain(dctx)
		first <- result{rep, err}
	}()
	// While the first Drain runs (it has handled "now"), Run and Drain
	// are refused.
	<-handled
	if _, err := p.Drain(ctx); !errors.Is(err, eventual.ErrRunning) {
		t.Errorf("Drain while draining = %v, want ErrRunning", err)
	}
	if err := p.Run(ctx); !errors.Is(err, eventual.ErrRunning) {
		t.Errorf("Run while draining = %v, want ErrRunning", err)
	}
	r := <-first
	if !errors.Is(r.err, context.DeadlineExceeded) || r.rep.Left != 1 || r.rep.Done != 1 || r.rep.InPoison != 0 {
		t.Errorf("Drain = %+v, %v; want the deadline, 1 done, 1 left", r.rep, r.err)
	}
}
