package queueproc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/tablekit/tablekit/internal/clock"
)

// fakeRenewals records the renewals of a lease on the fake clock and
// answers them from a script.
type fakeRenewals struct {
	clock *clock.Fake
	start time.Time

	mu      sync.Mutex
	calls   []renewal
	answers []error // the i-th renewal fails with answers[i] when set
	called  chan struct{}
}

type renewal struct {
	at      time.Duration // since start
	receipt string        // the receipt it was given
	vis     time.Duration
}

func newFakeRenewals(c *clock.Fake) *fakeRenewals {
	return &fakeRenewals{clock: c, start: c.Now(), called: make(chan struct{}, 100)}
}

func (f *fakeRenewals) renew(_ context.Context, receipt string, vis time.Duration) (string, error) {
	f.mu.Lock()
	n := len(f.calls)
	f.calls = append(f.calls, renewal{at: f.clock.Now().Sub(f.start), receipt: receipt, vis: vis})
	var err error
	if n < len(f.answers) {
		err = f.answers[n]
	}
	f.mu.Unlock()
	f.called <- struct{}{}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("r%d", n+1), nil
}

func (f *fakeRenewals) get() []renewal {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]renewal(nil), f.calls...)
}

// step advances the clock to at (since start), once the lease waits.
func step(t *testing.T, c *clock.Fake, start time.Time, at time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.WaitForWaiters(ctx, 1); err != nil {
		t.Fatalf("the lease is not waiting at %v: %v", c.Now().Sub(start), err)
	}
	c.Advance(start.Add(at).Sub(c.Now()))
}

func (f *fakeRenewals) waitCalls(t *testing.T, n int) {
	t.Helper()
	for len(f.get()) < n {
		select {
		case <-f.called:
		case <-time.After(5 * time.Second):
			t.Fatalf("%d renewals, want %d", len(f.get()), n)
		}
	}
}

func TestLeaseRenewsHalfwayWithTheLatestReceipt(t *testing.T) {
	c := clock.NewFake(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	f := newFakeRenewals(c)
	l := startLease(context.Background(), c, f.renew, "r0", c.Now(), 30*time.Second)

	step(t, c, f.start, 14*time.Second+999*time.Millisecond)
	if got := f.get(); len(got) != 0 {
		t.Fatalf("renewed before half the window: %+v", got)
	}
	step(t, c, f.start, 15*time.Second)
	f.waitCalls(t, 1)
	// The handler asks for longer windows: the next renewal is still due
	// halfway through the current one (at 30 s), and sets 60 s.
	l.setVisibility(time.Minute)
	step(t, c, f.start, 30*time.Second)
	f.waitCalls(t, 2)
	step(t, c, f.start, 59*time.Second)
	if got := f.get(); len(got) != 2 {
		t.Fatalf("renewed before half of the 60 s window: %+v", got)
	}
	step(t, c, f.start, 60*time.Second)
	f.waitCalls(t, 3)
	receipt, lost := l.finish()
	if lost != nil || receipt != "r3" {
		t.Fatalf("finish = %q, %v; want r3, nil", receipt, lost)
	}
	want := []renewal{
		{15 * time.Second, "r0", 30 * time.Second},
		{30 * time.Second, "r1", time.Minute},
		{60 * time.Second, "r2", time.Minute},
	}
	if got := f.get(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("renewals\n got %+v\nwant %+v", got, want)
	}
	// Nothing after finish.
	c.Advance(time.Hour)
	if got := f.get(); len(got) != 3 {
		t.Fatalf("renewed after finish: %+v", got)
	}
}

func TestLeaseRetriesAFailedRenewalBeforeTheWindowEnds(t *testing.T) {
	c := clock.NewFake(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	f := newFakeRenewals(c)
	transient := errors.New("connection reset")
	f.answers = []error{transient, transient}
	l := startLease(context.Background(), c, f.renew, "r0", c.Now(), 20*time.Second)
	step(t, c, f.start, 10*time.Second) // fails: 10 s left, next at 15 s
	f.waitCalls(t, 1)
	step(t, c, f.start, 15*time.Second) // fails: 5 s left, next at 17.5 s
	f.waitCalls(t, 2)
	step(t, c, f.start, 17500*time.Millisecond) // succeeds with the same receipt
	f.waitCalls(t, 3)
	receipt, lost := l.finish()
	if lost != nil || receipt != "r3" {
		t.Fatalf("finish = %q, %v; want r3, nil", receipt, lost)
	}
	got := f.get()
	for i, at := range []time.Duration{10 * time.Second, 15 * time.Second, 17500 * time.Millisecond} {
		if got[i].at != at || got[i].receipt != "r0" {
			t.Errorf("renewal %d = %+v, want at %v with r0", i, got[i], at)
		}
	}
}

func TestLeaseEndsWhenTheMessageIsGone(t *testing.T) {
	c := clock.NewFake(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	f := newFakeRenewals(c)
	gone := &azcore.ResponseError{StatusCode: http.StatusBadRequest, ErrorCode: "PopReceiptMismatch"}
	f.answers = []error{gone}
	l := startLease(context.Background(), c, f.renew, "r0", c.Now(), 10*time.Second)
	step(t, c, f.start, 5*time.Second)
	f.waitCalls(t, 1)
	receipt, lost := l.finish()
	if !errors.Is(lost, gone) || receipt != "r0" {
		t.Fatalf("finish = %q, %v; want r0 and the PopReceiptMismatch", receipt, lost)
	}
	c.Advance(time.Hour)
	if got := f.get(); len(got) != 1 {
		t.Fatalf("renewed after the message was gone: %+v", got)
	}
}

func TestLeaseFinishWaitsForARenewalInFlight(t *testing.T) {
	c := clock.NewFake(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	inFlight, release := make(chan struct{}), make(chan struct{})
	renew := func(context.Context, string, time.Duration) (string, error) {
		close(inFlight)
		<-release
		return "new", nil
	}
	l := startLease(context.Background(), c, renew, "old", c.Now(), 2*time.Second)
	step(t, c, c.Now(), time.Second)
	<-inFlight
	done := make(chan string)
	go func() { r, _ := l.finish(); done <- r }()
	select {
	case r := <-done:
		t.Fatalf("finish returned %q while the renewal was in flight", r)
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	if r := <-done; r != "new" {
		t.Fatalf("finish = %q, want the receipt of the renewal in flight", r)
	}
}

func TestRetryDelayAndSeconds(t *testing.T) {
	for _, c := range []struct {
		base, max time.Duration
		n         int64
		want      time.Duration
	}{
		{time.Second, time.Minute, 1, time.Second},
		{time.Second, time.Minute, 2, 2 * time.Second},
		{time.Second, time.Minute, 5, 16 * time.Second},
		{time.Second, time.Minute, 7, time.Minute},
		{time.Second, time.Minute, 1000, time.Minute},
		{0, time.Minute, 3, 0},
	} {
		if got := RetryDelay(c.base, c.max, c.n); got != c.want {
			t.Errorf("RetryDelay(%v, %v, %d) = %v, want %v", c.base, c.max, c.n, got, c.want)
		}
	}
	for d, want := range map[time.Duration]int32{0: 0, -time.Second: 0, time.Millisecond: 1, time.Second: 1, 1500 * time.Millisecond: 2, time.Minute: 60} {
		if got := Seconds(d); got != want {
			t.Errorf("Seconds(%v) = %d, want %d", d, got, want)
		}
	}
}
