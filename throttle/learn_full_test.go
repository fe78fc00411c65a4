package throttle_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/throttle"
	"github.com/tablekit/tablekit/throttle/internal/proxytest"
)

// TestLearnedLimitRealTime is the measurement in real time, on Azurite:
// BulkWrite of 10 partitions × 2,000 entities, with the default Config,
// through a proxytest.Proxy that serves each partition rate entities/s
// (the case: 100, a twentieth of the service's target), and with
// azcore's default retry alone for comparison; everything written, and
// with the Limiter, after a 10-second warm-up, at most 10% of the tries
// throttled (one run on a loaded machine, shorter than the virtual-time
// table's, which holds the 5%: TestLearnedLimitTable). With TABLEKIT_FULL=1 it runs at 50 and 100 entities/s and
// logs the shares achieved; without, a small load (2 partitions × 300 at
// 100/s) checks the wiring:
//
//	TABLEKIT_FULL=1 go test -count=1 -run TestLearnedLimitRealTime -v ./throttle/
func TestLearnedLimitRealTime(t *testing.T) {
	partitions, per, rates := 2, 300, []float64{100}
	if full() {
		partitions, per, rates = fullPartitions, 2000, []float64{50, 100}
	}
	for _, rate := range rates {
		for _, limited := range []bool{true, false} {
			if !limited && rate != 100 {
				continue
			}
			name := "limiter"
			if !limited {
				name = "azcore alone"
			}
			proxy, err := proxytest.New(proxytest.Config{PartitionRate: rate, AccountRate: throttle.AccountTarget})
			if err != nil {
				t.Fatal(err)
			}
			lim, err := throttle.NewLimiter(throttle.Config{})
			if err != nil {
				t.Fatal(err)
			}
			view := env.WithOptions(func(o *azcore.ClientOptions) {
				var next policy.Transporter = o.Transport
				if next == nil {
					next = http.DefaultClient
				}
				o.Transport = proxy.Transport(name, next)
				o.Retry = policy.RetryOptions{}
				if limited {
					o.PerRetryPolicies = append(o.PerRetryPolicies, lim)
				}
			})
			tbl := env.TableName(t)
			if _, err := env.TableService.CreateTable(t.Context(), tbl, nil); err != nil {
				t.Fatal(err)
			}
			table, err := entity.NewTableFromService[reading](view.TableService, tbl)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			outs, err := table.BulkWrite(t.Context(), readings(partitions, per), entity.BulkOptions{Concurrency: 16})
			elapsed := time.Since(start)
			var be *entity.BulkError
			if err != nil && !errors.As(err, &be) {
				t.Fatal(err)
			}
			failed := 0
			for _, o := range outs {
				if o.Err != nil {
					failed++
				}
			}
			thr, ach := realTimeShares(proxy.Events(), start, 10*time.Second, rate)
			t.Logf("%s at %.0f entities/s per partition: %d entities in %v, %d not written; after 10 s: %.1f%% of tries throttled, %.0f%% of the limit",
				name, rate, partitions*per, elapsed.Round(time.Millisecond), failed, thr, ach)
			if failed != 0 {
				t.Errorf("%s: %d entities not written", name, failed)
			}
			if limited && thr > 10 {
				t.Errorf("with the Limiter %.1f%% of tries throttled after the warm-up, want at most 10%%", thr)
			}
		}
	}
}

// realTimeShares is the share of tries throttled from warmup on, and the
// share of the limit each partition achieved from warmup to its last
// admitted transaction, averaged over the partitions.
func realTimeShares(events []proxytest.Event, start time.Time, warmup time.Duration, rate float64) (throttledPct, achievedPct float64) {
	tries, throttled := 0, 0
	admitted := map[string]int{}
	last := map[string]time.Time{}
	for _, e := range events {
		if e.At.Sub(start) < warmup || e.Table == "" {
			continue
		}
		tries++
		if !e.Admitted {
			throttled++
			continue
		}
		admitted[e.Key] += e.Entities
		last[e.Key] = e.At
	}
	if tries == 0 {
		return 0, 0
	}
	sum := 0.0
	for k, n := range admitted {
		if secs := last[k].Sub(start.Add(warmup)).Seconds(); secs > 0 {
			sum += 100 * float64(n) / secs / rate
		}
	}
	if len(admitted) > 0 {
		sum /= float64(len(admitted))
	}
	return 100 * float64(throttled) / float64(tries), sum
}
