package eventual_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// raceHandler is the archive handler with a barrier before the counter:
// the deliveries of one message meet there and then race for the
// department counter.
func raceHandler(a archiver, meet func(ctx context.Context, id string) error) func(context.Context, ArchiveEmployee) error {
	return func(ctx context.Context, m ArchiveEmployee) error {
		if err := eventual.Move(ctx, a.current, a.archive, m.Department, m.ID, nil); err != nil {
			return err
		}
		if err := meet(ctx, m.ID); err != nil {
			return err
		}
		_, err := eventual.Once(ctx, a.depts, m.Department, "count", func(ctx context.Context, b *entity.Batch) error {
			d, err := a.depts.Get(ctx, m.Department, "dept")
			if err != nil {
				return err
			}
			d.Archived++
			b.Update(&d, entity.Merge)
			return nil
		})
		return err
	}
}

// TestDuplicateCopiesConcurrently delivers two copies of each message (the
// duplicate a retried enqueue leaves when its reply was lost: same id) to
// two workers at the same time; both run the handler together, and each
// employee is counted once.
func TestDuplicateCopiesConcurrently(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := archiver{patterntest.Table[Employee](t, env), patterntest.Table[Employee](t, env), patterntest.Table[Department](t, env)}
	ids := seed(t, a.current, a.depts, "Sales", 5)
	qs := patterntest.Queues(t, env, 1)
	cfg := patterntest.Fast()
	cfg.Workers, cfg.BatchSize = 1, 1
	sender, err := eventual.New(qs, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		m, err := archiveKind.Message(ArchiveEmployee{"Sales", id})
		if err != nil {
			t.Fatal(err)
		}
		if err := sender.Enqueue(ctx, m, m); err != nil { // the same message twice
			t.Fatal(err)
		}
	}
	barriers := map[string]*crashtest.Barrier{}
	for _, id := range ids {
		barriers[id] = crashtest.NewBarrier(2)
	}
	meet := func(ctx context.Context, id string) error {
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		return barriers[id].Wait(wctx)
	}
	rec := newOutcomes()
	cfg.Hooks = rec.hooks()
	for range 2 { // two workers, one message each at a time
		p, err := eventual.New(qs, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := eventual.Handle(p, archiveKind, raceHandler(a, meet), eventual.HandleOptions{}); err != nil {
			t.Fatal(err)
		}
		defer run(t, p)()
	}
	deadline := time.Now().Add(30 * time.Second)
	for rec.count(eventual.Done) < 2*len(ids) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	for id, b := range barriers {
		if b.Arrived() != 2 {
			t.Errorf("message %s: %d deliveries met in the handler, want 2", id, b.Arrived())
		}
	}
	if got := rec.count(eventual.Done); got != 2*len(ids) {
		t.Errorf("%d deliveries done, want %d: %+v", got, 2*len(ids), rec.list())
	}
	checkArchived(t, a, qs, ids)
}

// TestRedeliveryWhileRunning stalls a worker whose visibility renewals
// fail (a network partition, a long pause): its message becomes visible
// again and a second worker receives it while the first still runs. Both
// finish; the stale worker's delete is refused (its pop receipt is no
// longer current) and counts as done; the increment is applied once.
func TestRedeliveryWhileRunning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := archiver{patterntest.Table[Employee](t, env), patterntest.Table[Employee](t, env), patterntest.Table[Department](t, env)}
	ids := seed(t, a.current, a.depts, "Sales", 1)
	qs := patterntest.Queues(t, env, 1)
	cfg := patterntest.Fast()
	cfg.Workers, cfg.BatchSize = 1, 1 // a busy worker receives nothing more
	cfg.VisibilityTimeout = 2 * time.Second
	sender, err := eventual.New(qs, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := archiveKind.Message(ArchiveEmployee{"Sales", ids[0]})
	if err != nil {
		t.Fatal(err)
	}
	if err := sender.Enqueue(ctx, m); err != nil {
		t.Fatal(err)
	}
	barrier := crashtest.NewBarrier(2)
	meet := func(ctx context.Context, _ string) error {
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		return barrier.Wait(wctx)
	}
	rec := newOutcomes()
	cfg.Hooks = rec.hooks()

	// The first worker cannot renew: every UpdateMessage fails before it
	// is sent.
	renewals := faults.New(faults.Config{FailBefore: 1, Match: func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/messages/")
	}})
	stale := env.With(renewals)
	first, err := eventual.New(patterntest.SameQueues(t, stale, qs), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var firstRan atomic.Int32
	h := raceHandler(a, meet)
	if err := eventual.Handle(first, archiveKind, func(ctx context.Context, m ArchiveEmployee) error {
		firstRan.Add(1)
		return h(ctx, m)
	}, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	defer run(t, first)()
	for firstRan.Load() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	second, err := eventual.New(qs, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := eventual.Handle(second, archiveKind, h, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	defer run(t, second)()

	deadline := time.Now().Add(30 * time.Second)
	for rec.count(eventual.Done) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	outs := rec.list()
	if len(outs) != 2 || outs[0].Result != eventual.Done || outs[1].Result != eventual.Done {
		t.Fatalf("outcomes %+v, want two Done", outs)
	}
	counts := []int64{outs[0].DequeueCount, outs[1].DequeueCount}
	slices.Sort(counts)
	// A loaded machine may let a 2 s visibility lapse once more before the
	// second worker's first renewal: the redelivery is then the third.
	if counts[0] != 1 || counts[1] < 2 {
		t.Errorf("dequeue counts %v, want the first delivery and a redelivery", counts)
	}
	if renewals.Stats().FailedBefore == 0 {
		t.Error("the first worker never tried to renew")
	}
	// The failed renewals are reported; the stale worker's delete, refused
	// because its pop receipt is no longer current, counts as done.
	for _, err := range rec.errors() {
		if !strings.Contains(err.Error(), "renewing the visibility") {
			t.Errorf("unexpected error reported: %v", err)
		}
	}
	checkArchived(t, a, qs, ids)
}
