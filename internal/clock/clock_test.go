package clock

import (
	"context"
	"testing"
	"time"
)

func TestFakeFiresInOrderWhenDue(t *testing.T) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	f := NewFake(start)
	late := f.After(2 * time.Second)
	early := f.After(time.Second)
	if got := f.Waiters(); got != 2 {
		t.Fatalf("Waiters = %d, want 2", got)
	}
	f.Advance(999 * time.Millisecond)
	select {
	case <-early:
		t.Fatal("fired before it was due")
	default:
	}
	f.Advance(time.Millisecond)
	if at := <-early; !at.Equal(start.Add(time.Second)) {
		t.Fatalf("fired with %v", at)
	}
	select {
	case <-late:
		t.Fatal("the later waiter fired too")
	default:
	}
	f.Advance(time.Second)
	<-late
	if got := f.Waiters(); got != 0 {
		t.Fatalf("Waiters = %d after firing all", got)
	}
	// Zero and negative durations fire at once.
	select {
	case <-f.After(0):
	default:
		t.Fatal("After(0) did not fire at once")
	}
}

func TestWaitForWaiters(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() { <-f.After(time.Minute) }()
	if err := f.WaitForWaiters(ctx, 1); err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancelShort()
	if err := f.WaitForWaiters(short, 2); err == nil {
		t.Fatal("WaitForWaiters(2) returned with one waiter")
	}
}

func TestSleep(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Sleep(ctx, f, time.Hour) }()
	if err := f.WaitForWaiters(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	f.Advance(time.Hour)
	if err := <-done; err != nil {
		t.Fatalf("Sleep = %v", err)
	}
	go func() { done <- Sleep(ctx, f, time.Hour) }()
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Sleep after cancel = %v", err)
	}
}
