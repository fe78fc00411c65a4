package secondaryindex_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestTableWideLoad is the order service's load on table-wide indexes: 16
// writers insert 20 orders each (50 with TABLEKIT_FULL=1: 35 to 52 s on
// Azurite on 2 cores shared with other suites, against 20 to 25 s for 20)
// into 40 customers' partitions (the order
// number, Email here, unique table-wide, one order in ten claiming one of
// five numbers others claim too; the status, LastName here, non-unique
// table-wide), then change the status of five of them, while a tenth of all
// storage requests lose their replies (executed, then resent by azcore)
// and the worker that keeps the entries is killed twice at arbitrary
// requests and replaced. Once the writers stopped and the queue drained
// (read with raw clients): every order number finds exactly its order,
// every status exactly the orders holding it, in key order, the entries
// are exactly two per order, and Check finds no drift.
//
// It runs alone (not in parallel), before the package's parallel tests:
// its load beside theirs would slow requests past the inserts' deadline
// of Grace/2 in the other tests.
func TestTableWideLoad(t *testing.T) {
	ctx := context.Background()
	const writers, customers, changes = 16, 40, 5
	per := loadPerWriter()
	t0 := time.Now()
	statuses := []string{"pending", "paid", "shipped"}
	tbl := employees(t, env)
	qs := patterntest.Queues(t, env, 2)
	s, _ := wideSet(t, qs, tbl, nil, fast())

	meter := cost.NewMeter()
	f := faults.New(faults.Config{LoseReply: 0.10, Seed: 19})
	faulty := patterntest.Faulty(env, meter.Policy(), f)
	fs, _ := wideSetOn(t, faulty, qs, tbl, nil, fast())

	// The worker: killed after 100, then 200 requests, then a healthy one
	// until the writers stop.
	wctx, stopWorkers := context.WithCancel(ctx)
	var kills atomic.Int32
	var wwg sync.WaitGroup
	wwg.Go(func() {
		for _, after := range []int{100, 200, -1} {
			if wctx.Err() != nil {
				return
			}
			penv := faulty
			var k *crashtest.Killer
			if after >= 0 {
				k = crashtest.NewKiller(after)
				penv = faulty.With(k)
			}
			_, p := wideSetOn(t, penv, qs, tbl, nil, loadWorker())
			rctx, cancel := context.WithCancel(wctx)
			if k != nil {
				go func() {
					select {
					case <-k.Killed():
						kills.Add(1)
					case <-rctx.Done():
					}
					cancel()
				}()
			}
			_ = p.Run(rctx)
			cancel()
		}
	})

	var mu sync.Mutex
	outcomes := map[string]int{}
	count := func(err error) {
		o := "ok"
		switch {
		case err == nil:
		case errors.Is(err, secondaryindex.ErrDuplicate):
			o = "taken"
		case errors.Is(err, entity.ErrOutcomeUnknown):
			o = "unknown"
		default:
			o = "failed"
		}
		mu.Lock()
		outcomes[o]++
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			var mine []Employee
			for i := range per {
				id := w*per + i
				e := Employee{PartitionKey: fmt.Sprintf("cust%02d", id%customers), RowKey: empid(id), FirstName: fmt.Sprint(w), LastName: statuses[r.IntN(len(statuses))], Email: fmt.Sprintf("order%05d", id)}
				if r.IntN(10) == 0 {
					e.Email = fmt.Sprintf("hot%d", r.IntN(5))
				}
				err := fs.Insert(ctx, &e)
				count(err)
				if err == nil {
					mine = append(mine, e)
				}
			}
			for range changes {
				if len(mine) == 0 {
					break
				}
				e := mine[r.IntN(len(mine))]
				st := statuses[r.IntN(len(statuses))]
				_, err := fs.Modify(ctx, e.PartitionKey, e.RowKey, func(e *Employee) error { e.LastName = st; return nil }, entity.ModifyOptions{})
				count(err)
			}
		})
	}
	wg.Wait()
	written := time.Since(t0)
	stopWorkers()
	wwg.Wait()
	if _, err := s.Relay(ctx); err != nil {
		t.Fatal(err)
	}
	_, p := wideSet(t, qs, tbl, nil, loadWorker())
	drainWide(t, p, qs)
	drained := time.Since(t0)
	t.Logf("writes %v; workers killed %d times; faults %+v; storage %v", outcomes, kills.Load(), f.Stats(), meter.Snapshot())
	if outcomes["ok"] < writers*per/2 || kills.Load() != 2 || outcomes["taken"] == 0 || f.Stats().LostReplies == 0 {
		t.Errorf("the load did too little: %v, %d kills, %+v", outcomes, kills.Load(), f.Stats())
	}

	// The final state, read raw.
	_, all := rawScan(t, tbl.Name())
	byStatus := map[string][]string{}
	emails := map[string]string{}
	entries := 0
	for k, m := range all {
		pk, rk, _ := strings.Cut(k, "/")
		if !strings.HasPrefix(rk, "empid_") {
			if strings.HasPrefix(pk, "email_") || strings.HasPrefix(pk, "name_") {
				entries++
			}
			continue
		}
		st, email := m["LastName"].(string), m["Email"].(string)
		byStatus[st] = append(byStatus[st], k)
		if other, ok := emails[email]; ok {
			t.Errorf("order number %s held by %s and %s", email, other, k)
		}
		emails[email] = k
	}
	if entries != 2*len(emails) {
		t.Errorf("%d entries for %d orders", entries, len(emails))
	}
	numbers := slices.Sorted(maps.Keys(emails))
	patterntest.Parallel(t, 8, len(numbers), func(i int) error {
		email, k := numbers[i], emails[numbers[i]]
		got, err := s.LookupValue(ctx, "email", email, secondaryindex.LookupOptions{})
		if err != nil || got.PartitionKey+"/"+got.RowKey != k {
			t.Errorf("order %s: %s/%s, %v; want %s", email, got.PartitionKey, got.RowKey, err, k)
		}
		return nil
	})
	for _, st := range statuses {
		want := byStatus[st]
		slices.SortFunc(want, keys.Compare)
		var got []string
		for e, err := range s.LookupValueAll(ctx, "name", st, secondaryindex.LookupOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, e.PartitionKey+"/"+e.RowKey)
		}
		if !inOrder(got, want) {
			t.Errorf("status %s: %d orders, want %d", st, len(got), len(want))
		}
	}
	n := 0
	for _, err := range s.LookupValuePrefix(ctx, "email", "", secondaryindex.LookupOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != len(emails) {
		t.Errorf("a prefix lookup of every order number found %d, want %d", n, len(emails))
	}
	if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
		t.Errorf("drift after the queue drained: %d findings, first %v", len(fs), fs[0])
	}
	if n := poisoned(t, qs); n != 0 {
		t.Errorf("%d messages poisoned", n)
	}
	t.Logf("%d orders per writer: written in %v, drained at %v, checked at %v", per, written, drained, time.Since(t0))
}

// loadPerWriter is how many orders each writer of TestTableWideLoad
// inserts: 20, or with TABLEKIT_FULL=1 the full size, 50.
func loadPerWriter() int {
	if os.Getenv("TABLEKIT_FULL") == "1" {
		return 50
	}
	return 20
}

// loadWorker is the processor configuration of TestTableWideLoad's
// workers: fast's, with 8 handlers taking 4 messages at a time, so that
// the workers keep up with 16 writers and a message seldom waits in hand
// long enough to need its visibility renewed.
func loadWorker() eventual.Config {
	c := fast()
	c.Workers, c.BatchSize = 8, 4
	return c
}
