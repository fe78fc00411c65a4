package eventual_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

var long = flag.Bool("long", false, "run the load test at full size: 2,000 messages")

// TestLoadUnderFaults archives employees with 16 workers over 2 queues
// while 10% of all storage requests fail: 5% before they are sent, 5%
// after they were executed, their replies lost (so azcore resends
// enqueues, deletes and transactions that were applied). Every employee
// ends in Archive only and is counted exactly once on its department; no
// message is left. 300 messages; 2,000 with -long.
func TestLoadUnderFaults(t *testing.T) {
	t.Parallel()
	n := 300
	if *long {
		n = 2000
	}
	ctx := context.Background()
	const depts = 64
	a := archiver{patterntest.Table[Employee](t, env), patterntest.Table[Employee](t, env), patterntest.Table[Department](t, env)}
	var want []string
	perDept := map[string]int{}
	for d := range depts {
		dept := fmt.Sprintf("D%02d", d)
		k := n / depts
		if d < n%depts {
			k++
		}
		for _, id := range seed(t, a.current, a.depts, dept, k) {
			want = append(want, dept+"/"+id)
		}
		perDept[dept] = k
	}
	slices.Sort(want)
	qs := patterntest.Queues(t, env, 2)

	meter := cost.NewMeter()
	f := faults.New(faults.Config{FailBefore: 0.05, LoseReply: 0.05, Seed: 10})
	faulty := patterntest.Faulty(env, f, meter.Policy())
	fa := archiver{patterntest.View[Employee](t, faulty, a.current), patterntest.View[Employee](t, faulty, a.archive), patterntest.View[Department](t, faulty, a.depts)}
	rec := newOutcomes()
	cfg := patterntest.Fast()
	cfg.Workers = 8 // per queue: 16 in all
	cfg.VisibilityTimeout = 2 * time.Second
	// The claim is convergence, each change counted once, not the poison
	// threshold: with 10% of requests failing and a delivery that outlives
	// its 2 s visibility on a loaded machine counted again, the default
	// MaxDeliveries poisoned one message in one full make test.
	cfg.MaxDeliveries = 20
	cfg.MaxPollInterval = 100 * time.Millisecond
	cfg.Hooks = rec.hooks()
	p, err := eventual.New(patterntest.SameQueues(t, faulty, qs), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := eventual.Handle(p, archiveKind, fa.handle, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	var msgs []eventual.Message
	for _, key := range want {
		dept, id, _ := strings.Cut(key, "/")
		m, err := archiveKind.Message(ArchiveEmployee{dept, id})
		if err != nil {
			t.Fatal(err)
		}
		m.Key = id
		msgs = append(msgs, m)
	}
	// An enqueue that failed after azcore's retries is the caller's to
	// send again.
	for len(msgs) > 0 {
		err := p.Enqueue(ctx, msgs...)
		var again []eventual.Message
		for _, e := range unjoin(err) {
			var ee *eventual.EnqueueError
			if !errors.As(e, &ee) {
				t.Fatal(e)
			}
			again = append(again, msgs[ee.Index])
		}
		msgs = again
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := patterntest.Drain(dctx, p, qs); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)

	if got := rowKeys(t, a.current); len(got) != 0 {
		t.Errorf("Current still holds %d employees", len(got))
	}
	var archived []string
	for e, err := range a.archive.Query(ctx, entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		archived = append(archived, e.PartitionKey+"/"+e.RowKey)
	}
	slices.Sort(archived) // the service's order is not the claim (Cosmos DB keeps none)
	if !slices.Equal(archived, want) {
		t.Errorf("Archive holds %d employees, want %d", len(archived), len(want))
	}
	for dept, k := range perDept {
		d, err := a.depts.Get(ctx, dept, "dept")
		if err != nil {
			t.Fatal(err)
		}
		if d.Archived != int64(k) {
			t.Errorf("%s: Archived = %d, want %d", dept, d.Archived, k)
		}
	}
	for _, q := range qs {
		if c := count(t, q.Poison); c != 0 {
			t.Errorf("%d messages poisoned", c)
		}
	}
	st := f.Stats()
	if st.LostReplies == 0 || st.FailedBefore == 0 {
		t.Errorf("faults injected: %+v", st)
	}
	used := meter.Snapshot()
	t.Logf("%d employees in %v: %d deliveries done (%d retried); faults %+v", n, took.Round(time.Millisecond),
		rec.count(eventual.Done), rec.count(eventual.Retry), st)
	t.Logf("storage transactions: %d, %.2f per employee: %v", used.Total(), float64(used.Total())/float64(n), used)
}

// unjoin splits an errors.Join error.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
