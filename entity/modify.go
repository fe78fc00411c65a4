package entity

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// RetryPolicy bounds an optimistic-concurrency loop.
type RetryPolicy struct {
	// Attempts is the most read-modify-write rounds; 0 means 10.
	Attempts int
	// BaseDelay is the first backoff; it doubles each round with full
	// jitter, up to MaxDelay. 0 means 20 ms; MaxDelay 0 means 1 s.
	BaseDelay, MaxDelay time.Duration
}

// ErrConflict reports an optimistic-concurrency loop that lost every round
// to other writers. It wraps the last ErrPreconditionFailed.
var ErrConflict = errors.New("tablekit: too many concurrent writers")

func (r RetryPolicy) withDefaults() RetryPolicy {
	if r.Attempts <= 0 {
		r.Attempts = 10
	}
	if r.BaseDelay <= 0 {
		r.BaseDelay = 20 * time.Millisecond
	}
	if r.MaxDelay <= 0 {
		r.MaxDelay = time.Second
	}
	return r
}

// backoff sleeps before round n (from 1), or returns ctx's error.
func (r RetryPolicy) backoff(ctx context.Context, n int) error {
	d := r.BaseDelay << min(n-1, 20)
	if d > r.MaxDelay || d <= 0 {
		d = r.MaxDelay
	}
	d = time.Duration(rand.Int64N(int64(d)) + 1) // full jitter spreads the writers
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// Retry runs attempt until it succeeds, fails with anything but
// ErrPreconditionFailed, runs out of rounds (ErrConflict) or ctx ends. Each
// round must start from a fresh read: this is the loop of every ETag-guarded
// pattern of the design guide (§3, §6.4, §6.9).
func (r RetryPolicy) Retry(ctx context.Context, attempt func(ctx context.Context) error) error {
	r = r.withDefaults()
	var last error
	for n := 1; n <= r.Attempts; n++ {
		if n > 1 {
			if err := r.backoff(ctx, n-1); err != nil {
				return errors.Join(err, last)
			}
		}
		last = attempt(ctx)
		if !errors.Is(last, ErrPreconditionFailed) {
			return last
		}
	}
	return errors.Join(ErrConflict, last)
}

// Modify reads the entity, lets change edit it, and writes it back with mode
// on condition that nobody wrote it in between; when somebody did, it starts
// again from a fresh read, with backoff, at most policy.Attempts times.
// change may return an error to give up (returned as is). The written entity
// is returned.
//
// With Replace, properties that T does not model are removed (give T an
// `extra` field to keep them); Merge keeps them, but cannot remove a
// property.
func (t *Table[T]) Modify(ctx context.Context, partitionKey, rowKey string, mode UpdateMode, policy RetryPolicy, change func(*T) error) (T, error) {
	var out T
	if !t.shape.hasETag() {
		return out, &TypeError{Type: t.shape.goType(), Reason: "Modify needs an etag field"}
	}
	if _, err := mode.sdk(); err != nil {
		return out, err
	}
	err := policy.Retry(ctx, func(ctx context.Context) error {
		cur, err := t.Get(ctx, partitionKey, rowKey)
		if err != nil {
			return err
		}
		if err := change(&cur); err != nil {
			return err
		}
		if err := t.Update(ctx, &cur, mode); err != nil {
			return err
		}
		out = cur
		return nil
	})
	return out, err
}
