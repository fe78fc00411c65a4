package eventual_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestCancelledContextStopsEveryEntryPoint: each public operation called
// with a context that has ended returns an error matching
// context.Canceled, and nothing was written: read raw, the tables hold
// only what was there and the queues no message.
func TestCancelledContextStopsEveryEntryPoint(t *testing.T) {
	t.Parallel()
	pr := newPayroll(t)
	p, o := pr.on(t, env, patterntest.Fast())
	steps := newStepTable(t, env)
	archive := newStepTable(t, env)
	if err := steps.Insert(t.Context(), &stepItem{PartitionKey: "p", RowKey: "counter"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	m, err := raiseKind.Message(RaiseRecorded{"Sales"})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]func() error{
		"Enqueue": func() error { return p.Enqueue(ctx, m) },
		"Submit": func() error {
			return o.Submit(ctx, "Sales", func(b *entity.Batch) error {
				b.UpdateAny(&Employee{PartitionKey: "Sales", RowKey: "000123", Salary: 9}, entity.Merge)
				return nil
			}, m)
		},
		"Relay":        func() error { _, err := o.Relay(ctx); return err },
		"Replay":       func() error { _, err := p.Replay(ctx, eventual.ReplayOptions{}); return err },
		"Drain":        func() error { _, err := p.Drain(ctx); return err },
		"SweepMarkers": func() error { _, err := eventual.SweepMarkers(ctx, steps, time.Now()); return err },
		"Move":         func() error { return eventual.Move(ctx, steps, archive, "p", "counter", nil) },
		"Once": func() error {
			_, err := eventual.OnceKey(ctx, steps, "p", "k", eventual.OnceConfig{}, stepIncrement(steps))
			return err
		},
		"Insert": func() error { return eventual.Insert(ctx, steps, &stepItem{PartitionKey: "p", RowKey: "new"}) },
		"Delete": func() error { return eventual.Delete(ctx, steps, "p", "counter") },
	}
	for name, f := range cases {
		if err := f(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s = %v, want context.Canceled", name, err)
		}
	}
	if rks := rowKeys(t, steps); len(rks) != 1 || rks[0] != "counter" {
		t.Errorf("the step table holds %v, want the counter only", rks)
	}
	if rks := rowKeys(t, archive); len(rks) != 0 {
		t.Errorf("the archive holds %v", rks)
	}
	if rks := rowKeys(t, pr.emps); len(rks) != 1 {
		t.Errorf("the employees' partition holds %v: an intent was written", rks)
	}
	if e, err := pr.emps.Get(t.Context(), "Sales", "000123"); err != nil || e.Salary != 1000 {
		t.Errorf("the employee is %+v (%v), want unchanged", e, err)
	}
	if n := count(t, pr.qs[0].Work); n != 0 {
		t.Errorf("%d messages sent", n)
	}
}
