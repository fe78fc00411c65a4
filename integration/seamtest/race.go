package seamtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
)

// The second writers' kinds: what another process does to the same keys
// inside the retry window.
const (
	Insert  = "insert"
	Replace = "replace"
	Merge   = "merge"
	Delete  = "delete"
)

// Competitors is every kind of second writer.
var Competitors = []string{Insert, Replace, Merge, Delete}

// Race is a lost-reply race: one operation, and the second writers to run
// inside its retry window.
type Race struct {
	// Prepare sets up, for the (sub)test t, the state a run starts from —
	// its own tables, queues and containers — and returns the run.
	Prepare func(t *testing.T) RaceRun
	// Competitors are the kinds of second writer to try; nil means all.
	Competitors []string
	// Timeout bounds each run; 0 means one minute.
	Timeout time.Duration
	// Parallel is the most lost-reply runs at once; 0 runs them one after
	// another. A run waits on the service and on timers far more than it
	// computes: with Parallel above 1 EveryReply runs them from
	// goroutines of its own, as subtests that do not call t.Parallel, so
	// Prepare must give each run storage of its own and must not call
	// t.Parallel, and a Race's closures must be safe for concurrent use.
	Parallel int
}

// RaceRun is one run of a race.
type RaceRun struct {
	// Work is the operation under test; every request it makes goes through
	// clients of env, the view that loses a reply.
	Work func(ctx context.Context, env *integration.Env) error
	// Compete is the second writer of the given kind, with healthy clients,
	// run after req (whose reply is lost) was executed and before azcore
	// resends it. A kind that cannot apply to this request (a merge of an
	// entity that is not there) returns an error, which is logged.
	Compete func(ctx context.Context, kind string, req *http.Request) error
	// Check judges the outcome: err is Work's answer; the state is read with
	// raw clients (see Truthful). kind is "" for the run without a fault.
	Check func(t *testing.T, kind string, err error)
}

// Retries is the azcore retry budget of a race's view: enough that only
// the injected lost reply matters, a few milliseconds apart.
const Retries = 3

// EveryReply runs r once without a fault, counting its requests (n), then
// for each request i in 0…n-1 and each competitor kind in a subtest named
// "reply i of n lost/kind" (r.Parallel at a time): the reply of request i
// is lost, the competitor runs before the resend, and Check judges what
// Work answered. It returns n.
func EveryReply(t *testing.T, env *integration.Env, r Race) int {
	t.Helper()
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	kinds := r.Competitors
	if kinds == nil {
		kinds = Competitors
	}
	var n int
	t.Run("no fault", func(t *testing.T) {
		counter := &counting{}
		run := r.Prepare(t)
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		err := run.Work(ctx, view(env, counter))
		n = int(counter.n.Load())
		run.Check(t, "", err)
	})
	if t.Failed() {
		return n
	}
	if n == 0 {
		t.Fatal("seamtest: the operation made no storage request through the env it was given")
	}
	// With r.Parallel, runs are started from goroutines (t.Run may be
	// called from several at once) and all have returned before
	// EveryReply does.
	var slots chan struct{}
	if r.Parallel > 1 {
		slots = make(chan struct{}, r.Parallel)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range n {
		for _, kind := range kinds {
			name := fmt.Sprintf("reply %d of %d lost/%s", i+1, n, kind)
			lose := func(t *testing.T) {
				run := r.Prepare(t)
				ctx, cancel := context.WithTimeout(t.Context(), timeout)
				defer cancel()
				inj := faults.New(faults.Config{})
				var seen atomic.Int64
				fired := false
				inj.LoseNextThen(1, func(*http.Request) bool { return seen.Add(1)-1 == int64(i) },
					func(req *http.Request) {
						fired = true
						if err := run.Compete(ctx, kind, req); err != nil {
							t.Logf("second writer (%s) after request %d: %v", kind, i+1, err)
						}
					})
				err := run.Work(ctx, view(env, inj))
				if !fired {
					t.Logf("the run made fewer than %d requests: no reply lost", i+1)
				}
				run.Check(t, kind, err)
			}
			if slots == nil {
				t.Run(name, lose)
				continue
			}
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				t.Run(name, lose)
			})
		}
	}
	return n
}

// view is env with p on every try and a small, fast retry budget.
func view(env *integration.Env, p policy.Policy) *integration.Env {
	return env.With(p).WithOptions(func(o *azcore.ClientOptions) {
		o.Retry.MaxRetries = Retries
		o.Retry.RetryDelay = 5 * time.Millisecond
		o.Retry.MaxRetryDelay = 50 * time.Millisecond
	})
}

// Truthful fails t when err misreports the final state: applied says
// whether the operation's own change is there (read by the test with raw
// clients). An applied change is reported as success or
// entity.ErrOutcomeUnknown, never as a refusal; a change that is not there
// is never reported as success.
func Truthful(t testing.TB, op string, err error, applied bool) {
	t.Helper()
	switch {
	case applied && err != nil && !errors.Is(err, entity.ErrOutcomeUnknown):
		t.Errorf("%s: the change was applied but the call reported %v", op, err)
	case !applied && err == nil:
		t.Errorf("%s: the call reported success but its change is not in the final state", op)
	}
}

// counting counts the tries it sees.
type counting struct{ n atomic.Int64 }

func (c *counting) Do(req *policy.Request) (*http.Response, error) {
	c.n.Add(1)
	return req.Next()
}
