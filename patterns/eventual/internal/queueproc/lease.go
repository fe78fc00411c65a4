package queueproc

import (
	"context"
	"sync"
	"time"

	"github.com/tablekit/tablekit/internal/clock"
)

// minRetryGap is the shortest wait before a failed renewal is tried again.
const minRetryGap = 100 * time.Millisecond

// renewFunc makes a message invisible for vis from now, given the current
// pop receipt, and returns the new one (UpdateMessage).
type renewFunc func(ctx context.Context, receipt string, vis time.Duration) (string, error)

// lease keeps one message invisible from the moment it is received until
// finish is called: when half of the current visibility window has passed,
// it renews the window for the message's visibility (which the handler may
// change), and keeps the pop receipt each renewal returns.
//
// A renewal that fails transiently is tried again halfway to the end of
// the window; one answered "gone" (IsGone) ends the lease: the message is
// someone else's now.
type lease struct {
	clock clock.Clock
	renew renewFunc

	mu       sync.Mutex
	receipt  string
	vis      time.Duration // the window each renewal sets
	lost     error         // why the lease ended early, if it did
	renewals int

	stop chan struct{}
	done chan struct{}
}

// startLease starts keeping a message whose current window of length
// window began at start (just before the request that received it).
func startLease(ctx context.Context, c clock.Clock, renew renewFunc, receipt string, start time.Time, window time.Duration) *lease {
	l := &lease{
		clock:   c,
		renew:   renew,
		receipt: receipt,
		vis:     window,
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go l.run(ctx, start, window)
	return l
}

// setVisibility sets the window later renewals set; it takes effect at the
// next renewal, which stays due halfway through the current window.
func (l *lease) setVisibility(d time.Duration) {
	l.mu.Lock()
	l.vis = d
	l.mu.Unlock()
}

// finish stops renewing, waiting for a renewal in flight to return, and
// returns the latest pop receipt, and why the lease ended early if it did.
func (l *lease) finish() (receipt string, lost error) {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.receipt, l.lost
}

func (l *lease) run(ctx context.Context, start time.Time, window time.Duration) {
	defer close(l.done)
	deadline := start.Add(window)
	due := start.Add(window / 2)
	for {
		// A renewal in flight is never interrupted: its new receipt would
		// be lost, and the old one is then stale.
		select {
		case <-l.stop:
			return
		case <-ctx.Done():
			return
		case <-l.clock.After(due.Sub(l.clock.Now())):
		}
		select {
		case <-l.stop:
			return
		default:
		}
		l.mu.Lock()
		receipt, vis := l.receipt, l.vis
		l.mu.Unlock()
		sent := l.clock.Now()
		next, err := l.renew(ctx, receipt, vis)
		if err == nil {
			l.mu.Lock()
			l.receipt = next
			l.renewals++
			l.mu.Unlock()
			deadline = sent.Add(vis)
			due = sent.Add(vis / 2)
			continue
		}
		now := l.clock.Now()
		if IsGone(err) || ctx.Err() != nil || !now.Before(deadline) {
			l.mu.Lock()
			l.lost = err
			l.mu.Unlock()
			return
		}
		due = now.Add(max(deadline.Sub(now)/2, minRetryGap))
	}
}
