// Package patterntest is the test kit of tablekit's pattern packages
// whose work is carried by patterns/eventual (eventual, denormalize,
// secondaryindex, indexentity): tables and queues on the Azurite of
// package integration, views of them through another Env's clients, a
// processor configuration for tests, running a processor until its
// queues drain, and a request counter that a retry of a request that
// never reached the service does not disturb.
//
// It is imported by tests only. It imports entity, integration and
// patterns/eventual, so it lives under patterns/internal/, where only the
// pattern packages can import it, not in internal/, the floor under entity
// (package internal describes the layers).
package patterntest

import (
	"context"
	"errors"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// Table creates a table on e, deleted when the test ends, and returns a
// typed view of it.
func Table[T any](t testing.TB, e *integration.Env) *entity.Table[T] {
	t.Helper()
	tbl, err := entity.NewTable[T](e.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// View is a view of tbl's table as T through e's clients (another view
// of the same Azurite, with its own policies).
func View[T, U any](t testing.TB, e *integration.Env, tbl *entity.Table[U]) *entity.Table[T] {
	t.Helper()
	v, err := entity.NewTableFromService[T](e.TableService, tbl.Name())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Queues creates n work queues with their poison queues on e, deleted
// when the test ends.
func Queues(t testing.TB, e *integration.Env, n int) []eventual.Queue {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = e.QueueName(t)
	}
	qs := eventual.QueuesOf(e.QueueService, names...)
	for _, q := range qs {
		for _, c := range []*azqueue.QueueClient{q.Work, q.Poison} {
			if _, err := c.Create(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if _, err := c.Delete(ctx, nil); err != nil && !IsNotFound(err) {
					t.Errorf("deleting queue: %v", err)
				}
			})
		}
	}
	return qs
}

// SameQueues returns clients of qs's queues built from e (another view).
func SameQueues(t testing.TB, e *integration.Env, qs []eventual.Queue) []eventual.Queue {
	t.Helper()
	names := make([]string, len(qs))
	for i, q := range qs {
		parts, err := azqueue.ParseURL(q.Work.URL())
		if err != nil {
			t.Fatal(err)
		}
		names[i] = parts.QueueName
	}
	return eventual.QueuesOf(e.QueueService, names...)
}

// IsNotFound reports a 404 from the service.
func IsNotFound(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == 404
}

// Fast is a processor configuration for tests: immediate retries, quick
// polling. Its visibility timeout is long enough that a loaded machine
// never lets a message reappear while its handler runs; tests of crashes
// shorten it.
func Fast() eventual.Config {
	return eventual.Config{
		Workers:           4,
		VisibilityTimeout: 30 * time.Second,
		RetryDelay:        eventual.NoRetryDelay,
		PollInterval:      10 * time.Millisecond,
		MaxPollInterval:   50 * time.Millisecond,
		ShutdownGrace:     5 * time.Second,
	}
}

// Crashy is Fast with a one-second visibility timeout: a message a
// crashed worker held reappears after a second.
func Crashy() eventual.Config {
	c := Fast()
	c.VisibilityTimeout = time.Second
	return c
}

// Drain runs p until its work queues are empty and nothing is in flight,
// or ctx ends: Processor.Drain. qs, p's queues, is no longer needed.
func Drain(ctx context.Context, p *eventual.Processor, qs []eventual.Queue) error {
	_, err := p.Drain(ctx)
	return err
}

// MessageCount is the number of messages in q, visible or not.
func MessageCount(ctx context.Context, q *azqueue.QueueClient) (int, error) {
	props, err := q.GetProperties(ctx, nil)
	if err != nil {
		return 0, err
	}
	if props.ApproximateMessagesCount == nil {
		return 0, nil
	}
	return int(*props.ApproximateMessagesCount), nil
}

// Collect returns what seq yields (a Check's findings, a lookup's
// entities), failing the test on the first error.
func Collect[V any](t testing.TB, seq iter.Seq2[V, error]) []V {
	t.Helper()
	var out []V
	for v, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// Parallel runs f(0) … f(n-1) on workers goroutines and fails the test on
// the first error.
func Parallel(t testing.TB, workers, n int, f func(i int) error) {
	t.Helper()
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range n {
		select {
		case next <- i:
		case err := <-errs:
			close(next)
			wg.Wait()
			t.Fatal(err)
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// FaultyRetries is the azcore retry budget of a [Faulty] view: with 5% of
// replies lost, spending it on one request has a chance of 0.05^9 (about
// 2e-12), so a test under injected faults sees what lost replies do to
// outcomes, not a retry budget spent on a read.
const FaultyRetries = 8

// Faulty is env.With(policies...) (a fault injector, a meter) with
// [FaultyRetries] retries a few milliseconds apart instead of the test
// default of 2.
func Faulty(env *integration.Env, policies ...policy.Policy) *integration.Env {
	return env.With(policies...).WithOptions(func(o *azcore.ClientOptions) {
		o.Retry.MaxRetries = FaultyRetries
		o.Retry.RetryDelay = 5 * time.Millisecond
		o.Retry.MaxRetryDelay = 100 * time.Millisecond
	})
}
