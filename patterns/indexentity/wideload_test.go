package indexentity_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestTableWideUnderFaults has 16 writers insert, re-city and delete 100
// employees across 20 departments, with a TableWide index of 4 buckets,
// while 10% of all storage requests fail (5% before they are sent, 5%
// after they were executed, their replies lost); the worker is killed
// twice (at a third and at two thirds of the writes) and a new one
// started each time. Once the outbox is relayed and the queue drained,
// each city's table-wide list, read with LookupValueAll and with
// ValueMembers, names exactly the employees the table (read with a plain
// client) says hold it, and the drift checker finds nothing.
func TestTableWideUnderFaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cities := []string{"Paris", "Oslo", "Rome", "Lima"}
	depts := make([]string, 20)
	for i := range depts {
		depts[i] = "D" + keys.Pad(int64(i), 2)
	}
	w := newWideWorld(t, 4)
	seeder, p0 := w.set(t, env, patterntest.Fast())
	for i := range 100 {
		e := Employee{PartitionKey: depts[i%20], RowKey: keys.Pad(int64(i/20), 6), City: cities[i%4]}
		if err := seeder.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
	}
	if err := patterntest.Drain(ctx, p0, w.qs); err != nil {
		t.Fatal(err)
	}

	f := faults.New(faults.Config{FailBefore: 0.05, LoseReply: 0.05, Seed: 19})
	faulty := patterntest.Faulty(env, f)
	cfg := patterntest.Fast()
	cfg.VisibilityTimeout = 3 * time.Second
	cfg.MaxDeliveries = 50
	writers, _ := w.set(t, faulty, cfg)

	// Three workers in turn; the first two are killed.
	type worker struct {
		kill   *crashtest.Killer
		cancel context.CancelFunc
		done   chan error
	}
	start := func(k *crashtest.Killer) worker {
		e := faulty
		if k != nil {
			e = faulty.With(k)
		}
		_, p := w.set(t, e, cfg)
		c, cancel := context.WithCancel(ctx)
		wk := worker{kill: k, cancel: cancel, done: make(chan error, 1)}
		go func() { wk.done <- p.Run(c) }()
		return wk
	}
	workers := []worker{start(crashtest.NewKiller(-1))}
	var done, failed atomic.Int64
	var mu sync.Mutex // workers
	const ops = 16 * 15
	patterntest.Parallel(t, 16, ops, func(i int) error {
		if n := done.Add(1); n == ops/3 || n == 2*ops/3 {
			mu.Lock()
			defer mu.Unlock()
			last := workers[len(workers)-1]
			last.kill.Kill()
			last.cancel()
			var next *crashtest.Killer
			if n == ops/3 {
				next = crashtest.NewKiller(-1)
			}
			workers = append(workers, start(next))
		}
		r := rand.New(rand.NewPCG(uint64(i), 7))
		pk, rk := depts[r.IntN(20)], keys.Pad(int64(r.IntN(5)), 6)
		c := cities[r.IntN(4)]
		var err error
		switch i % 10 {
		case 0:
			if err = writers.Delete(ctx, pk, rk, ""); errors.Is(err, entity.ErrNotFound) {
				err = nil
			}
		case 1:
			if err = writers.Insert(ctx, &Employee{PartitionKey: pk, RowKey: rk, City: c}); errors.Is(err, entity.ErrAlreadyExists) {
				err = nil
			}
		default:
			_, err = writers.Modify(ctx, pk, rk, func(e *Employee) error { e.City = c; return nil }, entity.ModifyOptions{})
			if errors.Is(err, entity.ErrNotFound) {
				err = nil
			}
		}
		if err != nil {
			failed.Add(1) // failed after retries, or outcome unknown: the lists follow the table either way
		}
		return nil
	})
	for _, wk := range workers[:len(workers)-1] {
		<-wk.done // killed: its error is the kill's
	}
	last := workers[len(workers)-1]
	last.cancel()
	if err := <-last.done; err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	healthy, p := w.set(t, env, cfg)
	if _, err := healthy.Relay(dctx); err != nil {
		t.Fatal(err)
	}
	if err := patterntest.Drain(dctx, p, w.qs); err != nil {
		t.Fatal(err)
	}

	want := wideExpect(t, w.emps.Name())
	reader, _ := w.set(t, env, patterntest.Fast())
	for _, c := range cities {
		if got := wideLookup(t, reader, c, indexentity.LookupOptions{}); !slices.Equal(got, want[c]) {
			t.Errorf("%s: %v, want %v", c, got, want[c])
		}
		ks, err := reader.ValueMembers(ctx, "city", c)
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for _, k := range ks {
			listed = append(listed, k.PartitionKey+"/"+k.RowKey)
		}
		if !slices.Equal(listed, want[c]) {
			t.Errorf("%s's list: %v, want %v", c, listed, want[c])
		}
	}
	noDrift(t, reader)
	st := f.Stats()
	if st.LostReplies == 0 || st.FailedBefore == 0 {
		t.Errorf("faults injected: %+v", st)
	}
	t.Logf("%d writes, %d failed; faults %+v", ops, failed.Load(), st)
}
