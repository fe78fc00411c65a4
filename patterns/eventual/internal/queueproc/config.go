package queueproc

import (
	"context"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/internal/clock"
	"github.com/tablekit/tablekit/internal/errline"
)

// Service limits of Azure Queue Storage.
const (
	// MaxBatch is the most messages one receive may return.
	MaxBatch = 32
	// MaxMessageBytes is the largest message text, in UTF-8 bytes.
	MaxMessageBytes = 64 << 10
	// MaxVisibility is the longest visibility timeout.
	MaxVisibility = 7 * 24 * time.Hour
)

// Config is the loop's configuration. Every field must be set: the
// defaults are the caller's (package eventual documents them).
type Config struct {
	// Workers is how many handlers run at once.
	Workers int
	// BatchSize is how many messages one receive asks for, 1 to 32. A new
	// batch is asked for while half a batch still waits for the workers, so
	// up to Workers - 1 + 1.5 × BatchSize messages are in hand.
	BatchSize int
	// Visibility is how long a received message stays invisible; it is
	// renewed halfway through while the message waits or runs. Whole seconds,
	// at least one.
	Visibility time.Duration
	// MaxDeliveries is how many deliveries a message gets before it is
	// moved to the poison queue.
	MaxDeliveries int
	// RetryDelay is how long a failed message stays invisible after its
	// first failure, doubling with each delivery up to MaxRetryDelay. It is
	// rounded up to whole seconds; 0 makes it visible at once.
	RetryDelay, MaxRetryDelay time.Duration
	// PollInterval is the wait after an empty receive, doubling while the
	// queue stays empty up to MaxPollInterval.
	PollInterval, MaxPollInterval time.Duration
	// ShutdownGrace is how long running handlers and a receive in flight
	// may go on after Run's context ends before their context is
	// cancelled.
	ShutdownGrace time.Duration
	// Clock is the time source.
	Clock clock.Clock
	// PoisonText returns the text stored in the poison queue for m; nil
	// stores m's text unchanged.
	PoisonText func(m *Message, r Record) string
	// KeepRecord, if set, stores the record of m once its copy is in the
	// poison queue with the id poisonID, before m is deleted from its
	// queue. A failure is reported to OnError; m is deleted all the same.
	KeepRecord func(ctx context.Context, m *Message, r Record, poisonID string) error
	// Observe, if set, is told the outcome of every delivery. It is called
	// from the workers, concurrently.
	Observe func(Outcome)
	// OnError, if set, is told of failures of the loop itself: a receive,
	// renewal, delete, release or poison move that failed.
	OnError func(error)
}

func (c *Config) validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf("queueproc: "+format, args...))
		}
	}
	check(c.Workers > 0, "Workers is %d, want at least 1", c.Workers)
	check(c.BatchSize >= 1 && c.BatchSize <= MaxBatch, "BatchSize is %d, want 1 to %d", c.BatchSize, MaxBatch)
	check(c.Visibility >= time.Second && c.Visibility <= MaxVisibility, "Visibility is %v, want 1s to 7 days", c.Visibility)
	check(c.MaxDeliveries > 0, "MaxDeliveries is %d, want at least 1", c.MaxDeliveries)
	check(c.RetryDelay >= 0 && c.MaxRetryDelay >= c.RetryDelay && c.MaxRetryDelay <= MaxVisibility,
		"RetryDelay %v and MaxRetryDelay %v: want 0 <= RetryDelay <= MaxRetryDelay <= 7 days", c.RetryDelay, c.MaxRetryDelay)
	check(c.PollInterval > 0 && c.MaxPollInterval >= c.PollInterval,
		"PollInterval %v and MaxPollInterval %v: want 0 < PollInterval <= MaxPollInterval", c.PollInterval, c.MaxPollInterval)
	check(c.ShutdownGrace >= 0, "ShutdownGrace is %v", c.ShutdownGrace)
	check(c.Clock != nil, "Clock is nil")
	return errline.Join(errs...)
}

// Seconds returns d in whole seconds, rounded up, as the queue service
// takes visibility timeouts.
func Seconds(d time.Duration) int32 {
	if d <= 0 {
		return 0
	}
	return int32((d + time.Second - 1) / time.Second)
}

// RetryDelay returns how long a message that failed on delivery number
// n (1 for the first) stays invisible: base doubled n-1 times, at most
// maxDelay.
func RetryDelay(base, maxDelay time.Duration, n int64) time.Duration {
	if base <= 0 || n < 1 {
		return 0
	}
	d := base
	for i := int64(1); i < n && d < maxDelay; i++ {
		d *= 2
	}
	return min(d, maxDelay)
}
