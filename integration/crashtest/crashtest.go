package crashtest

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
)

// ErrKilled is the error of every request a Killer stops.
var ErrKilled = faults.ErrKilled

// Killer is faults.Killer, the policy that kills a run: it lets a number
// of requests through and then fails every later one before it is sent.
type Killer = faults.Killer

// NewKiller returns a Killer that lets after requests through; after < 0
// lets every request through until Kill is called.
func NewKiller(after int) *Killer { return faults.NewKiller(after) }

// NewExecutedKiller returns a Killer that lets after requests through,
// sends request after+1 and kills the process once the service has
// executed it, before its reply is read: the crash that leaves a change
// applied with nobody knowing.
func NewExecutedKiller(after int) *Killer { return faults.NewExecutedKiller(after) }

// Scenario is a consistency check run once without a crash and once per
// crash point.
type Scenario struct {
	// Prepare sets up, for the (sub)test t, the state a run starts from —
	// its own tables, queues and containers — and returns the run.
	Prepare func(t *testing.T) Run
	// Timeout bounds each phase of a run; 0 means one minute.
	Timeout time.Duration
	// Parallel is the most crash runs at once; 0 means go test's
	// -parallel (two on two cores). A run waits on the service and on
	// timers — visibility timeouts, polling, retries — far more than it
	// computes, so a test may ask for more; the default stays at
	// -parallel because runs with deadlines of their own (an index's
	// Grace, a message's visibility) must not be slowed past them by
	// their neighbours. The crash runs are subtests that do not call
	// t.Parallel, run from goroutines of EveryStep's own, so they do not
	// queue behind the package's other parallel tests. Each run
	// must therefore have storage of its own (Prepare), and Prepare must
	// not call t.Parallel.
	Parallel int
}

// Run is one run of a scenario.
type Run struct {
	// Work is the operation under test. Every storage request it makes
	// must go through clients of env, the view the harness can kill. It
	// returns when the operation has finished, or soon after ctx ends
	// (ctx ends when the Killer fires).
	Work func(ctx context.Context, env *integration.Env) error
	// Crashed, if set, inspects the state the crash left, before recovery:
	// the invariant that holds at every instant (nothing lost even
	// mid-way), where Check asserts the converged one. passed is the number
	// of requests the run made.
	Crashed func(t *testing.T, passed int)
	// Recover finishes whatever a crash left (a fresh worker that drains
	// the queue, a relay), with healthy clients, and returns once the
	// pattern has converged. It runs after every run, crashed or not.
	Recover func(ctx context.Context) error
	// Check asserts the pattern's invariant on the final state.
	Check func(t *testing.T)
}

// EveryStep runs s without a crash, counting its storage requests (n),
// then once per crash point k = 0 … n-1 in subtests run s.Parallel at a
// time, each in two ways: "before k+1 of n" is killed before its request
// k+1 is sent, and "k+1 of n executed" is killed once the service has
// executed request k+1, before its reply is read. Each run is recovered
// and checked. It returns n.
func EveryStep(t *testing.T, env *integration.Env, s Scenario) int {
	t.Helper()
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	var n int
	t.Run("no crash", func(t *testing.T) {
		k := NewKiller(-1)
		runOnce(t, env, s, k, timeout)
		n = k.Passed()
	})
	if t.Failed() {
		return n
	}
	if n == 0 {
		t.Fatal("crashtest: the scenario made no storage request through the env it was given")
	}
	t.Run("crash", func(t *testing.T) {
		// t.Run may be called from several goroutines at once; every call
		// returns before this function does.
		slots := make(chan struct{}, s.width())
		var wg sync.WaitGroup
		for k := range n {
			for _, executed := range []bool{false, true} {
				name := fmt.Sprintf("before %d of %d", k+1, n)
				newKiller := NewKiller
				if executed {
					name = fmt.Sprintf("%d of %d executed", k+1, n)
					newKiller = NewExecutedKiller
				}
				slots <- struct{}{}
				wg.Go(func() {
					defer func() { <-slots }()
					t.Run(name, func(t *testing.T) {
						killer := newKiller(k)
						runOnce(t, env, s, killer, timeout)
						if !killer.Fired() {
							t.Logf("the run made only %d requests and was not killed", killer.Passed())
						}
					})
				})
			}
		}
		wg.Wait()
	})
	return n
}

// width is how many crash runs EveryStep runs at once.
func (s Scenario) width() int {
	if s.Parallel > 0 {
		return s.Parallel
	}
	parallel := runtime.GOMAXPROCS(0) // go test's default -parallel
	if f := flag.Lookup("test.parallel"); f != nil {
		if v, err := strconv.Atoi(f.Value.String()); err == nil && v > 0 {
			parallel = v
		}
	}
	return parallel
}

func runOnce(t *testing.T, env *integration.Env, s Scenario, k *Killer, timeout time.Duration) {
	t.Helper()
	run := s.Prepare(t)
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	go func() {
		select {
		case <-k.Killed():
			cancel()
		case <-ctx.Done():
		}
	}()
	err := run.Work(ctx, env.With(k))
	crashed := k.Fired()
	cancel()
	if err != nil && !crashed {
		t.Fatalf("crashtest: work failed without a crash: %v", err)
	}
	if crashed && run.Crashed != nil {
		run.Crashed(t, k.Passed())
	}
	rctx, rcancel := context.WithTimeout(t.Context(), timeout)
	defer rcancel()
	if err := run.Recover(rctx); err != nil {
		t.Fatalf("crashtest: recovery after %d requests: %v", k.Passed(), err)
	}
	run.Check(t)
}

// Barrier makes n goroutines meet: each Wait returns once n have called it
// (or ctx ends). It is how a test puts two deliveries of one message, or
// two writers, inside the same step at the same time.
type Barrier struct {
	mu    sync.Mutex
	n     int
	count int
	open  chan struct{}
}

// NewBarrier returns a barrier for n goroutines.
func NewBarrier(n int) *Barrier { return &Barrier{n: n, open: make(chan struct{})} }

// Wait blocks until n goroutines have called Wait, or ctx ends.
func (b *Barrier) Wait(ctx context.Context) error {
	b.mu.Lock()
	b.count++
	if b.count == b.n {
		close(b.open)
	}
	open := b.open
	b.mu.Unlock()
	select {
	case <-open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Arrived returns how many goroutines have called Wait.
func (b *Barrier) Arrived() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.count
}
