package eventual_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestReplayKeepsAMessageOlderThanItsMarkers: a message's handler counts
// a raise Once, then fails in a later step on every delivery, so the
// message is poisoned with its marker written. Nine days later (the
// processor's clock) SweepMarkers has deleted the expired marker. Replay
// must not send that message back, where Once would count the raise a
// second time: it leaves it in the poison queue, visible, and reports it
// with an error matching ErrStaleReplay that names it. Read raw, the
// counter is still 1. ReplayOptions.Stale sends it back on purpose.
func TestReplayKeepsAMessageOlderThanItsMarkers(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pr := newPayroll(t)
	start := time.Now()
	var later atomic.Bool // the later step works once the cause is fixed
	on := func(now time.Time) *eventual.Processor {
		cfg := patterntest.Fast()
		cfg.Now = func() time.Time { return now }
		p, err := eventual.New(patterntest.SameQueues(t, env, pr.qs), nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := eventual.Handle(p, raiseKind, func(ctx context.Context, r RaiseRecorded) error {
			if _, err := eventual.Once(ctx, pr.depts, r.Department, "raise", func(ctx context.Context, b *entity.Batch) error {
				d, err := pr.depts.Get(ctx, r.Department, "dept")
				if err != nil {
					return err
				}
				d.Archived++
				b.Update(&d, entity.Merge)
				return nil
			}); err != nil {
				return err
			}
			if !later.Load() {
				return errors.New("the later step fails")
			}
			return nil
		}, eventual.HandleOptions{}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := on(start)
	m, err := raiseKind.Message(RaiseRecorded{"Sales"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Enqueue(ctx, m); err != nil {
		t.Fatal(err)
	}
	if rep, err := p.Drain(ctx); err != nil || rep.Poisoned != 1 {
		t.Fatalf("Drain = %+v, %v; want the message poisoned", rep, err)
	}
	nineDays := start.Add(9 * 24 * time.Hour)
	if n, err := eventual.SweepMarkers(ctx, pr.depts, nineDays); n != 1 || err != nil {
		t.Fatalf("SweepMarkers = %d, %v; want the marker gone", n, err)
	}
	later.Store(true)
	p = on(nineDays)
	n, err := p.Replay(ctx, eventual.ReplayOptions{})
	if n != 0 || !errors.Is(err, eventual.ErrStaleReplay) {
		t.Fatalf("Replay = %d, %v; want 0 and ErrStaleReplay", n, err)
	}
	if left := rawPeek(t, pr.qs[0].Poison); len(left) != 1 {
		t.Fatalf("%d messages visible in the poison queue, want the stale one", len(left))
	}
	if rep, err := p.Drain(ctx); err != nil || rep.Done != 0 {
		t.Fatalf("Drain after Replay = %+v, %v; want nothing run", rep, err)
	}
	raw := env.TableService.NewClient(pr.depts.Name())
	got, err := raw.GetEntity(ctx, "Sales", "dept", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := decodeDept(t, got.Value); d != 1 {
		t.Errorf("the raise was counted %d times, want 1", d)
	}
	// On purpose: Stale sends it back (and Once counts it again).
	if n, err := p.Replay(ctx, eventual.ReplayOptions{Stale: true}); n != 1 || err != nil {
		t.Fatalf("Replay with Stale = %d, %v; want 1", n, err)
	}
	if rep, err := p.Drain(ctx); err != nil || rep.Done != 1 {
		t.Fatalf("Drain after the stale Replay = %+v, %v", rep, err)
	}
	got, err = raw.GetEntity(ctx, "Sales", "dept", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := decodeDept(t, got.Value); d != 2 {
		t.Errorf("after a stale Replay the raise was counted %d times; the hazard ErrStaleReplay guards against is 2", d)
	}
}

func decodeDept(t *testing.T, body []byte) int64 {
	t.Helper()
	var d Department
	if err := entity.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	return d.Archived
}
