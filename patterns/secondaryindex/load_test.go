package secondaryindex_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestLoadOtherPartition is the concurrent-writers load on indexes in
// other partitions: 16 writers change the emails and last names of 50
// employees while 10% of all storage requests fail (5% before they are
// sent, 5% after they were applied, their replies lost), and the workers
// that keep the entries are killed again and again at arbitrary requests
// and replaced. Meanwhile a reader's verified lookups never return an
// employee whose value differs from the one looked up. Once the writers
// stopped and the queue drained, nothing has drifted, every lookup
// returns exactly the employees holding the value, and no message was
// poisoned.
func TestLoadOtherPartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const n, writers, rounds = 50, 16, 8
	tbl := employees(t, env)
	qs := patterntest.Queues(t, env, 2)
	s, _ := remoteSet(t, env, qs, tbl, nil, fast())
	for i := range n {
		e := Employee{PartitionKey: "Sales", RowKey: empid(i), LastName: "Initial", Email: fmt.Sprintf("e%d@contoso.com", i)}
		if err := s.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
	}
	if err := drainSet(ctx, t, env, qs, tbl); err != nil {
		t.Fatal(err)
	}

	meter := cost.NewMeter()
	f := faults.New(faults.Config{FailBefore: 0.05, LoseReply: 0.05, Seed: 11})
	faulty := patterntest.Faulty(env, meter.Policy(), f)
	fs, _ := remoteSet(t, faulty, qs, tbl, nil, fast())

	// Workers, killed after 20 to 120 requests each, and replaced.
	// Every goroutine that reports to t is stopped and waited for before
	// the test returns, also when a t.Fatal below ends it early (a report
	// after the test completed, such as a lookup failing once the
	// cleanups deleted the tables, panics the whole run).
	wctx, stopWorkers := context.WithCancel(ctx)
	var kills atomic.Int32
	var wwg sync.WaitGroup
	defer wwg.Wait()
	defer stopWorkers()
	wwg.Go(func() {
		r := rand.New(rand.NewPCG(3, 3))
		for wctx.Err() == nil {
			k := crashtest.NewKiller(20 + r.IntN(100))
			_, p := remoteSet(t, faulty.With(k), qs, tbl, nil, fast())
			rctx, cancel := context.WithCancel(wctx)
			go func() {
				select {
				case <-k.Killed():
					kills.Add(1)
				case <-rctx.Done():
				}
				cancel()
			}()
			_ = p.Run(rctx)
			cancel()
		}
	})

	// A reader of verified lookups.
	rctx, stopReader := context.WithCancel(ctx)
	var lookups atomic.Int32
	var rwg sync.WaitGroup
	defer rwg.Wait()
	defer stopReader()
	rwg.Go(func() {
		r := rand.New(rand.NewPCG(5, 5))
		for rctx.Err() == nil {
			index, value := "email", fmt.Sprintf("e%d@contoso.com", r.IntN(2*n))
			if r.IntN(2) == 0 {
				index, value = "name", []string{"Jones", "Smith", "Brown", "Taylor"}[r.IntN(4)]
			}
			for e, err := range s.LookupAll(rctx, index, "Sales", value, secondaryindex.LookupOptions{Verify: true}) {
				if err != nil {
					if rctx.Err() == nil {
						t.Errorf("lookup: %v", err)
					}
					return
				}
				lookups.Add(1)
				if got := map[string]string{"email": strings.ToLower(e.Email), "name": e.LastName}[index]; got != value {
					t.Errorf("a verified lookup of %s %q returned %s holding %q", index, value, e.RowKey, got)
				}
			}
		}
	})

	var mu sync.Mutex
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 2))
			for range rounds {
				id := empid(r.IntN(n))
				email := fmt.Sprintf("e%d@contoso.com", r.IntN(2*n))
				last := []string{"Jones", "Smith", "Brown", "Taylor"}[r.IntN(4)]
				_, err := fs.Modify(ctx, "Sales", id, func(e *Employee) error {
					e.Email, e.LastName = email, last
					return nil
				}, entity.ModifyOptions{})
				outcome := "ok"
				switch {
				case err == nil:
				case errors.Is(err, secondaryindex.ErrDuplicate):
					outcome = "taken"
				case errors.Is(err, entity.ErrOutcomeUnknown):
					outcome = "unknown"
				case errors.Is(err, entity.ErrContention):
					outcome = "conflict"
				default:
					outcome = "failed" // a fault azcore's retries did not get past
				}
				mu.Lock()
				outcomes[outcome]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	stopWorkers()
	wwg.Wait()
	if _, err := s.Relay(ctx); err != nil {
		t.Fatal(err)
	}
	if err := drainSet(ctx, t, env, qs, tbl); err != nil {
		t.Fatal(err)
	}
	stopReader()
	rwg.Wait()
	t.Logf("writes %v; workers killed %d times; %d verified lookups; faults %+v; storage %v", outcomes, kills.Load(), lookups.Load(), f.Stats(), meter.Snapshot())
	if outcomes["ok"] < writers || kills.Load() == 0 || lookups.Load() == 0 {
		t.Errorf("the load did too little: %v, %d kills, %d lookups", outcomes, kills.Load(), lookups.Load())
	}
	if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
		t.Errorf("drift after the queue drained: %v", fs)
	}
	checkLookups(t, s, tbl, "Sales")
	if n := poisoned(t, qs); n != 0 {
		t.Errorf("%d messages poisoned", n)
	}
}
