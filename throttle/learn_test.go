package throttle_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/tablekit/tablekit/internal/batch"
	"github.com/tablekit/tablekit/throttle"
	"github.com/tablekit/tablekit/throttle/internal/proxytest"
)

// A load is a measured run in virtual time (a testing/synctest bubble):
// each process has its own Limiter of cfg (the default learns) and, per
// partition, one writer that sends transactions of batch entities (single
// upserts when batch is 1) one after the other, as BulkWrite's writer of a
// partition does, through azcore's default retry policy, to a
// proxytest.Proxy in front of a backend that answers in 20 to 40 ms.
type load struct {
	partitions int
	batch      int
	processes  int
	partRate   float64 // the proxy's entities/s per partition
	acctRate   float64 // the proxy's requests/s per account
	dropAt     time.Duration
	dropTo     float64 // the partition limit from dropAt on
	duration   time.Duration
	seed       uint64
	cfg        throttle.Config
}

// outcome is what the proxy saw in a window of a run.
type outcome struct {
	tries, throttled int
	throttledPct     float64   // of the window's tries
	achievedPct      float64   // of the binding limit: entities/s of the partitions', requests/s of the account's
	fairPct          []float64 // each process's entities/s, as % of an equal share of the partitions' limit
	rates            []float64 // each process's Limiter rate for partition p000 at the end
}

const measureEndpoint = "http://127.0.0.1:10002/devstoreaccount1"

func (ld load) run(t *testing.T, from, to time.Duration) outcome {
	t.Helper()
	var out outcome
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		proxy, err := proxytest.New(proxytest.Config{PartitionRate: ld.partRate, AccountRate: ld.acctRate})
		if err != nil {
			t.Fatal(err)
		}
		backend := &proxytest.Backend{Latency: 20 * time.Millisecond, Jitter: 20 * time.Millisecond, Seed: ld.seed}
		ctx, cancel := context.WithDeadline(t.Context(), start.Add(ld.duration))
		defer cancel()
		var wg sync.WaitGroup
		var lims []*throttle.Limiter
		for proc := range ld.processes {
			lim, err := throttle.NewLimiter(ld.cfg)
			if err != nil {
				t.Fatal(err)
			}
			lims = append(lims, lim)
			label := strconv.Itoa(proc)
			tr := proxy.Transport(label, backend)
			// The way to the service takes up to 5 ms, so that tries paced
			// apart do not arrive exactly so.
			rng := rand.New(rand.NewPCG(ld.seed, uint64(proc)))
			var mu sync.Mutex
			pl := runtime.NewPipeline("measure", "v1", runtime.PipelineOptions{PerRetry: []policy.Policy{lim}},
				&policy.ClientOptions{Transport: doer(func(r *http.Request) (*http.Response, error) {
					mu.Lock()
					d := time.Duration(rng.Int64N(int64(5 * time.Millisecond)))
					mu.Unlock()
					time.Sleep(d)
					return tr.Do(r)
				})})
			for part := range ld.partitions {
				wg.Go(func() { write(ctx, pl, fmt.Sprintf("p%03d", part), label, ld.batch) })
			}
		}
		if ld.dropAt > 0 {
			time.Sleep(ld.dropAt)
			proxy.SetRates(ld.dropTo, ld.acctRate)
		}
		wg.Wait()
		out = ld.measure(proxy.Events(), start, from, to)
		for _, l := range lims {
			out.rates = append(out.rates, l.Rate("127.0.0.1/devstoreaccount1", "readings", "p000"))
		}
	})
	return out
}

type doer func(*http.Request) (*http.Response, error)

func (d doer) Do(r *http.Request) (*http.Response, error) { return d(r) }

// write sends transactions of n entities (single upserts when n is 1) to
// partition pk until ctx ends, one at a time. A transaction is the same
// each time (an upsert: repeating it is harmless, and its content does not
// change what it costs).
func write(ctx context.Context, pl runtime.Pipeline, pk, label string, n int) {
	body := []byte(`{"Value":1.5,"Value@odata.type":"Edm.Double"}`)
	ops := make([]batch.Operation, n)
	for j := range ops {
		ops[j] = batch.Operation{Method: batch.MethodReplace, PartitionKey: pk, RowKey: fmt.Sprintf("%s-%03d", label, j), Body: body}
	}
	txn, ct := batch.Request(nil, measureEndpoint+"/", "readings", "m", ops)
	for i := 0; ctx.Err() == nil; i++ {
		var req *policy.Request
		if n == 1 {
			u := batch.AppendKeyPath([]byte(measureEndpoint+"/readings"), pk, label+"-"+strconv.Itoa(i))
			req, _ = runtime.NewRequest(ctx, http.MethodPut, string(u))
			_ = req.SetBody(streaming.NopCloser(bytes.NewReader(body)), "application/json")
		} else {
			req, _ = runtime.NewRequest(ctx, http.MethodPost, measureEndpoint+"/$batch")
			_ = req.SetBody(streaming.NopCloser(bytes.NewReader(txn)), ct)
		}
		req.Raw().Header.Set("x-ms-version", "2019-02-02")
		if resp, err := pl.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
}

func (ld load) measure(events []proxytest.Event, start time.Time, from, to time.Duration) outcome {
	var out outcome
	secs := (to - from).Seconds()
	perProc := make([]float64, ld.processes)
	admitted, entities := 0, 0
	for _, e := range events {
		if at := e.At.Sub(start); at < from || at >= to {
			continue
		}
		out.tries++
		if !e.Admitted {
			out.throttled++
			continue
		}
		admitted++
		entities += e.Entities
		p, _ := strconv.Atoi(e.Client)
		perProc[p] += float64(e.Entities) / secs
	}
	limit := ld.partRate
	if ld.dropAt > 0 && from >= ld.dropAt {
		limit = ld.dropTo
	}
	if out.tries > 0 {
		out.throttledPct = 100 * float64(out.throttled) / float64(out.tries)
	}
	out.achievedPct = 100 * float64(entities) / secs / (limit * float64(ld.partitions))
	if ld.acctRate > 0 {
		out.achievedPct = max(out.achievedPct, 100*float64(admitted)/secs/ld.acctRate)
	}
	share := limit * float64(ld.partitions) / float64(ld.processes)
	for _, v := range perProc {
		out.fairPct = append(out.fairPct, 100*v/share)
	}
	return out
}

// worst runs ld with each of seeds and returns the highest share
// throttled, the lowest share achieved, and each run's outcome.
func worst(t *testing.T, ld load, seeds int, from, to time.Duration) (throttledPct, achievedPct float64, all []outcome) {
	t.Helper()
	achievedPct = 1e9
	for seed := range seeds {
		ld.seed = uint64(seed)
		o := ld.run(t, from, to)
		throttledPct, achievedPct = max(throttledPct, o.throttledPct), min(achievedPct, o.achievedPct)
		all = append(all, o)
	}
	return throttledPct, achievedPct, all
}

// TestLearnedLimitTable: with the default Config, against a partition
// limit it was not told (from 50 to 2,000 entities/s, a twentieth of the
// service's target to all of it) or an account limit, BulkWrite-like
// writers of 10 partitions — after a 10-second warm-up and for the 50
// seconds after — have at most 5% of their tries throttled and get at
// least 85% of the limit, in the worst of several runs. The proxy knows
// nothing of the Simulator's code; the numbers are the package doc's
// table.
func TestLearnedLimitTable(t *testing.T) {
	type row struct {
		name string
		ld   load
	}
	var rows []row
	limits := []float64{50, 100, 200, 500, 1000, 2000}
	if !everyRow {
		limits = []float64{50, 1000}
	}
	for _, r := range limits {
		rows = append(rows, row{fmt.Sprintf("%4.0f entities/s per partition, transactions of 100", r),
			load{partitions: 10, batch: 100, processes: 1, partRate: r, acctRate: throttle.AccountTarget}})
	}
	if everyRow {
		rows = append(rows, row{" 100 requests/s per account, 10 partitions, transactions of 100", load{partitions: 10, batch: 100, processes: 1, partRate: throttle.PartitionTarget, acctRate: 100}})
	}
	rows = append(rows, row{" 500 requests/s per account, 50 partitions, single upserts", load{partitions: 50, batch: 1, processes: 1, partRate: throttle.PartitionTarget, acctRate: 500}})
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			r.ld.duration = 60 * time.Second
			thr, ach, _ := worst(t, r.ld, seeds, 10*time.Second, 60*time.Second)
			t.Logf("%s: %.1f%% throttled, %.1f%% of the limit (worst of %d runs)", r.name, thr, ach, seeds)
			if thr > 5 || ach < 85 {
				t.Errorf("%.1f%% of tries throttled, %.1f%% of the limit achieved: want at most 5%% and at least 85%%", thr, ach)
			}
		})
	}
}

// TestLearnedLimitFollowsADrop: a partition limit that drops from 1,000
// to 100 entities/s mid-run is followed within 5 seconds: 5 seconds after
// the drop every writer's Limiter paces its partition at or under the new
// limit, and over the 25 seconds after that at most 10% of the tries are
// throttled (the Limiter probing up to the new limit from under it) and
// at least 80% of the new limit is achieved.
func TestLearnedLimitFollowsADrop(t *testing.T) {
	ld := load{partitions: 10, batch: 100, processes: 1, partRate: 1000, acctRate: throttle.AccountTarget,
		dropAt: 30 * time.Second, dropTo: 100, duration: 35 * time.Second}
	for seed := range seeds {
		ld.seed = uint64(seed)
		if o := ld.run(t, 30*time.Second, 35*time.Second); o.rates[0] > ld.dropTo {
			t.Errorf("seed %d: 5 s after the drop the Limiter paces a partition at %.0f entities/s, over the new limit", seed, o.rates[0])
		}
	}
	ld.duration = 60 * time.Second
	thr, ach, _ := worst(t, ld, seeds, 35*time.Second, 60*time.Second)
	t.Logf("5 to 30 s after the drop: %.1f%% throttled, %.1f%% of the new limit (worst of %d runs)", thr, ach, seeds)
	if thr > 10 || ach < 80 {
		t.Errorf("%.1f%% of tries throttled, %.1f%% of the new limit achieved after the drop", thr, ach)
	}
}

// TestLearnedLimitFourProcesses: four processes, each with its own
// Limiter, write to one partition — single entities at 60 entities/s
// (fair share 15), transactions of 10 entities at 60/s, transactions of
// 100 at 1,000/s — and over two minutes after the warm-up at most 5% of
// the tries are throttled and the partition's limit is used. Each
// process's part of it comes from statistics — a throttle lands on a
// process in proportion to its tries, and the probe's step of a key of
// 10 tries a second or more is the same for all — so it is asserted with
// margin: with single entities each process within 50% of its fair share
// in the worst of several runs; with transactions, whose few throttled
// tries leave shares apart, only that none is starved (under 1% of its
// share) or takes the whole partition (4 shares), at most 6% throttled. The log
// gives the spread, the runs with every process within 25%, and the
// throttled tries per process, the only news of the others a process
// gets; with TABLEKIT_FULL=1 it makes 16 runs of each, the package doc's
// numbers.
func TestLearnedLimitFourProcesses(t *testing.T) {
	runs := seeds
	if full() {
		runs = 16
	}
	for _, c := range []struct {
		name   string
		ld     load
		lo, hi float64 // the asserted bounds of a process's share, % of its fair share
		maxThr float64 // the asserted bound of the tries throttled, %
	}{
		{"single entities, 60/s", load{partitions: 1, batch: 1, processes: 4, partRate: 60, acctRate: throttle.AccountTarget}, 50, 150, 5},
		// Asserted with margin over the worst of 48 runs (5–304% of the
		// fair share, 4.3% throttled; 11–215%, 1.9%).
		{"transactions of 10, 60/s", load{partitions: 1, batch: 10, processes: 4, partRate: 60, acctRate: throttle.AccountTarget}, 1, 400, 6},
		{"transactions of 100, 1000/s", load{partitions: 1, batch: 100, processes: 4, partRate: 1000, acctRate: throttle.AccountTarget}, 1, 400, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.ld.duration = 130 * time.Second
			thr, ach, all := worst(t, c.ld, runs, 10*time.Second, 130*time.Second)
			lo, hi := 1e9, 0.0
			within, throttled := 0, 0
			for _, o := range all {
				in := true
				for _, f := range o.fairPct {
					lo, hi = min(lo, f), max(hi, f)
					in = in && f >= 75 && f <= 125
				}
				if in {
					within++
				}
				throttled += o.throttled
			}
			perProc := float64(throttled) / float64(len(all)*c.ld.processes)
			t.Logf("%s: %.1f%% throttled, %.1f%% of the limit, each process %.0f–%.0f%% of its fair share (worst of %d runs); every process within 25%% in %d runs of %d; %.1f throttled tries per process", c.name, thr, ach, lo, hi, runs, within, runs, perProc)
			if thr > c.maxThr || ach < 85 {
				t.Errorf("%.1f%% of tries throttled, %.1f%% of the limit achieved", thr, ach)
			}
			if lo < c.lo || hi > c.hi {
				t.Errorf("a process got %.0f%% or %.0f%% of its fair share: want %.0f%% to %.0f%%", lo, hi, c.lo, c.hi)
			}
		})
	}
}
