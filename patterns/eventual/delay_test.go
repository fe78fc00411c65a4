package eventual_test

import (
	"context"
	"testing"
	"time"

	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// A message sent with a Delay stays invisible to workers until it has
// passed, then runs.
func TestDelayedMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	qs := patterntest.Queues(t, env, 1)
	p, err := eventual.New(qs, nil, patterntest.Fast())
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan time.Time, 2)
	kind := eventual.NewKind[int]("Delayed.v1")
	if err := eventual.Handle(p, kind, func(context.Context, int) error { ran <- time.Now(); return nil }, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	m, err := kind.Message(1)
	if err != nil {
		t.Fatal(err)
	}
	m.Delay = 1500 * time.Millisecond // sent as 2 s
	sent := time.Now()
	if err := p.Enqueue(ctx, m); err != nil {
		t.Fatal(err)
	}
	stop := run(t, p)
	defer stop()
	select {
	case at := <-ran:
		if d := at.Sub(sent); d < 1500*time.Millisecond {
			t.Errorf("the message ran %v after it was sent, before its delay", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the delayed message never ran")
	}
}
