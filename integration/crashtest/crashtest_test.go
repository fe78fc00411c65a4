package crashtest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestBarrier(t *testing.T) {
	b := NewBarrier(3)
	var wg sync.WaitGroup
	var passed atomic.Int32
	for range 2 {
		wg.Go(func() {
			if b.Wait(context.Background()) == nil {
				passed.Add(1)
			}
		})
	}
	for b.Arrived() < 2 {
		time.Sleep(time.Millisecond)
	}
	if passed.Load() != 0 {
		t.Fatal("the barrier opened with 2 of 3")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := b.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if passed.Load() != 2 {
		t.Errorf("%d waiters passed, want 2", passed.Load())
	}
	short, cancelShort := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancelShort()
	if err := NewBarrier(2).Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait alone = %v, want the context's error", err)
	}
}
