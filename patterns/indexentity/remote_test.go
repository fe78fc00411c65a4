package indexentity_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// world is the storage of a Set whose lists are kept by patterns/eventual:
// the employees' table, the index entities' table, a blob container and
// the queues.
type world struct {
	placement indexentity.Placement
	emps      *entity.Table[Employee]
	entries   *entity.Table[entity.DynamicEntity]
	container string
	qs        []eventual.Queue
}

func newWorld(t testing.TB, placement indexentity.Placement, queueCount int) *world {
	t.Helper()
	w := &world{placement: placement, emps: patterntest.Table[Employee](t, env), entries: patterntest.Table[entity.DynamicEntity](t, env), qs: patterntest.Queues(t, env, queueCount)}
	c := env.Container(t)
	u, err := url.Parse(c.URL())
	if err != nil {
		t.Fatal(err)
	}
	w.container = strings.Trim(u.Path[strings.LastIndexByte(strings.TrimSuffix(u.Path, "/"), '/'):], "/")
	return w
}

// set returns a Set of w through e's clients, with a processor of w's
// queues configured by cfg.
func (w *world) set(t testing.TB, e *integration.Env, cfg eventual.Config, icfg indexentity.Config) (*indexentity.Set[Employee], *eventual.Processor) {
	t.Helper()
	p, err := eventual.New(patterntest.SameQueues(t, e, w.qs), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	icfg.Entries = patterntest.View[entity.DynamicEntity](t, e, w.entries)
	icfg.Blobs = w.blobs(e)
	if icfg.Outbox.Grace == 0 {
		icfg.Outbox.Grace = -1 // Relay sends every intent: no Submit of this Set is under way when it runs
	}
	icfg.Processor = p
	s, err := indexentity.New(patterntest.View[Employee](t, e, w.emps), icfg,
		indexentity.Index[Employee]{Name: "lastname", Value: lastName, Placement: w.placement})
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

func (w *world) blobs(e *integration.Env) *container.Client {
	return e.BlobService.ServiceClient().NewContainerClient(w.container)
}

// recover relays what crashed writers left and drains the queues with a
// healthy processor.
func (w *world) recover(ctx context.Context, t testing.TB, cfg eventual.Config) error {
	s, p := w.set(t, env, cfg, indexentity.Config{Retry: hot})
	if _, err := s.Relay(ctx); err != nil {
		return err
	}
	return patterntest.Drain(ctx, p, w.qs)
}

// check asserts the converged state: every list as the employees say, no
// drift, no message left or poisoned.
func (w *world) check(t *testing.T, names ...string) {
	t.Helper()
	s, _ := w.set(t, env, patterntest.Fast(), indexentity.Config{})
	want := expect(t, w.emps, "Sales", lastName)
	for _, name := range names {
		if got := lookup(t, s, "lastname", "Sales", name); !slices.Equal(got, want[name]) {
			t.Errorf("%s: %v, want %v", name, got, want[name])
		}
		got, err := s.Members(context.Background(), "lastname", "Sales", name)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want[name]) {
			t.Errorf("%s's list: %v, want %v", name, got, want[name])
		}
	}
	noDrift(t, s)
	for _, q := range w.qs {
		for what, c := range map[string]int{"work": count(t, q.Work), "poison": count(t, q.Poison)} {
			if c != 0 {
				t.Errorf("%d messages left in the %s queue", c, what)
			}
		}
		resp, err := q.Poison.PeekMessages(context.Background(), &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(3))})
		if err == nil {
			for _, m := range resp.Messages {
				rec, _, _ := eventual.ParsePoison(*m.MessageText)
				t.Logf("poisoned: %+v", rec)
			}
		}
	}
}

// truthful asserts what holds at every instant: a lookup never yields an
// employee who does not hold the value looked up.
func (w *world) truthful(t testing.TB, s *indexentity.Set[Employee], names ...string) {
	t.Helper()
	for _, name := range names {
		for e, err := range s.LookupAll(context.Background(), "lastname", "Sales", name, indexentity.LookupOptions{}) {
			if err != nil {
				t.Error(err)
				return
			}
			if e.LastName != name {
				t.Errorf("looking up %s yielded %s/%s named %s", name, e.PartitionKey, e.RowKey, e.LastName)
			}
		}
	}
}

func count(t testing.TB, q *azqueue.QueueClient) int {
	t.Helper()
	n, err := patterntest.MessageCount(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// seedRemote inserts employees with the given last names (ids 000001, …)
// and drains the queues, so that every list is there.
func (w *world) seedRemote(t testing.TB, names ...string) {
	t.Helper()
	ctx := context.Background()
	s, p := w.set(t, env, patterntest.Fast(), indexentity.Config{})
	for i, name := range names {
		if err := s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: keys.Pad(int64(i+1), 6), LastName: name}); err != nil {
			t.Fatal(err)
		}
	}
	if err := patterntest.Drain(ctx, p, w.qs); err != nil {
		t.Fatal(err)
	}
}

var placements = []indexentity.Placement{indexentity.OtherPartition, indexentity.Blob}

// TestRemoteCrashAtEveryStep renames an employee from Jones to Smith in
// an index kept by patterns/eventual — the employee and the outbox's
// intent in one transaction, the message sent and the intent deleted;
// then the worker's read of the employee, the two lists' reads and
// conditional writes, the read again, the message's delete — and kills
// the writer or the worker after each storage request in turn. Until the
// queue drains, a lookup never yields an employee of another name; after
// a fresh worker drained it (and the outbox relayed), the lists are
// exact and the drift checker finds nothing.
func TestRemoteCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	for _, placement := range placements {
		t.Run(placement.String(), func(t *testing.T) {
			t.Parallel()
			n := crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
				w := newWorld(t, placement, 1)
				w.seedRemote(t, "Jones", "Smith", "Jones")
				return crashtest.Run{
					Work: func(ctx context.Context, kenv *integration.Env) error {
						var done sync.Once
						finished := make(chan struct{})
						cfg := patterntest.Crashy()
						cfg.Workers, cfg.BatchSize = 1, 1 // the same requests in the same order every run
						cfg.Hooks.Outcome = func(o eventual.Outcome) {
							if o.Result == eventual.Done {
								done.Do(func() { close(finished) })
							}
						}
						s, p := w.set(t, kenv, cfg, indexentity.Config{})
						if _, err := s.Modify(ctx, "Sales", "000001", func(e *Employee) error { e.LastName = "Smith"; return nil }, entity.ModifyOptions{}); err != nil {
							return err
						}
						rctx, cancel := context.WithCancel(ctx)
						stopped := make(chan error, 1)
						go func() { stopped <- p.Run(rctx) }()
						select {
						case <-finished:
						case <-ctx.Done():
						}
						cancel()
						return <-stopped
					},
					Crashed: func(t *testing.T, passed int) {
						s, _ := w.set(t, env, patterntest.Fast(), indexentity.Config{})
						w.truthful(t, s, "Jones", "Smith")
					},
					Recover: func(ctx context.Context) error { return w.recover(ctx, t, patterntest.Crashy()) },
					Check:   func(t *testing.T) { w.check(t, "Jones", "Smith") },
				}
			}})
			// read, transaction, enqueue, intent delete, receive, read,
			// two reads and two writes of lists, read, message delete.
			if n < 12 {
				t.Errorf("the scenario made %d requests, want at least 12", n)
			}
		})
	}
}

// TestRemoteLoadUnderFaults has 16 writers change the last names of the
// same 50 employees (and delete and insert some) while workers keep the
// lists, with 10% of all storage requests failing: 5% before they are
// sent, 5% after they were executed, their replies lost. Half-way, the
// workers are killed and new ones started. While it runs, lookups never
// yield an employee of another name; once the outbox is relayed and the
// queues drained, every list is exact and the drift checker finds
// nothing.
func TestRemoteLoadUnderFaults(t *testing.T) {
	t.Parallel()
	for _, placement := range placements {
		t.Run(placement.String(), func(t *testing.T) {
			t.Parallel()
			remoteLoad(t, placement)
		})
	}
}

func remoteLoad(t *testing.T, placement indexentity.Placement) {
	ctx := context.Background()
	names := []string{"Jones", "Smith", "Brown", "Green"}
	w := newWorld(t, placement, 2)
	seed := make([]string, 50)
	for i := range seed {
		seed[i] = names[i%4]
	}
	w.seedRemote(t, seed...)

	f := faults.New(faults.Config{FailBefore: 0.05, LoseReply: 0.05, Seed: 11})
	faulty := patterntest.Faulty(env, f)
	cfg := patterntest.Fast()
	// A lost reply to a visibility renewal loses the message to another
	// delivery: under 5% lost replies a message is delivered several
	// times, and none must be poisoned for it.
	cfg.VisibilityTimeout = 3 * time.Second
	cfg.MaxDeliveries = 50
	writers, _ := w.set(t, faulty, cfg, indexentity.Config{Retry: hot, Outbox: eventual.OutboxConfig{Grace: time.Hour}})

	// Workers, killed half-way.
	killer := crashtest.NewKiller(-1)
	_, p1 := w.set(t, faulty.With(killer), cfg, indexentity.Config{Retry: hot})
	ctx1, cancel1 := context.WithCancel(ctx)
	run1 := make(chan error, 1)
	go func() { run1 <- p1.Run(ctx1) }()
	_, p2 := w.set(t, faulty, cfg, indexentity.Config{Retry: hot})
	ctx2, cancel2 := context.WithCancel(ctx)
	run2 := make(chan error, 1)

	reader, _ := w.set(t, env, patterntest.Fast(), indexentity.Config{})
	stopReading := make(chan struct{})
	var reads sync.WaitGroup
	reads.Add(1)
	go func() {
		defer reads.Done()
		for {
			select {
			case <-stopReading:
				return
			default:
			}
			w.truthful(t, reader, names...)
		}
	}()

	start := time.Now()
	var failed, done atomic.Int64
	const ops = 16 * 10
	patterntest.Parallel(t, 16, ops, func(i int) error {
		if done.Add(1) == ops/2 {
			killer.Kill()
			cancel1()
			go func() { run2 <- p2.Run(ctx2) }()
		}
		r := rand.New(rand.NewPCG(uint64(i), 5))
		rk := keys.Pad(int64(r.IntN(50)+1), 6)
		name := names[r.IntN(4)]
		var err error
		switch i % 10 {
		case 0:
			err = writers.Delete(ctx, "Sales", rk, "")
			if errors.Is(err, entity.ErrNotFound) {
				err = nil
			}
		case 1:
			err = writers.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: rk, LastName: name})
			if errors.Is(err, entity.ErrAlreadyExists) {
				err = nil
			}
		default:
			_, err = writers.Modify(ctx, "Sales", rk, func(e *Employee) error { e.LastName = name; return nil }, entity.ModifyOptions{})
			if errors.Is(err, entity.ErrNotFound) {
				err = nil
			}
		}
		if err != nil {
			// A write that failed after azcore's retries, or whose outcome
			// stayed unknown: either way the lists must follow what the
			// table holds.
			failed.Add(1)
		}
		return nil
	})
	wrote := time.Since(start)
	close(stopReading)
	reads.Wait()
	<-run1
	cancel2()
	if err := <-run2; err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := w.recover(dctx, t, cfg); err != nil {
		t.Fatal(err)
	}
	w.check(t, names...)
	st := f.Stats()
	if st.LostReplies == 0 || st.FailedBefore == 0 {
		t.Errorf("faults injected: %+v", st)
	}
	t.Logf("%d writes in %v, %d failed, drained in %v; faults %+v", ops, wrote.Round(time.Millisecond), failed.Load(), time.Since(start).Round(time.Millisecond), st)
}
