package throttle_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/throttle"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

type reading struct {
	PartitionKey, RowKey string
	Value                float64
}

func readings(partitions, per int) []reading {
	out := make([]reading, 0, partitions*per)
	for p := range partitions {
		for i := range per {
			out = append(out, reading{PartitionKey: fmt.Sprintf("sensor-%02d", p), RowKey: fmt.Sprintf("%06d", i), Value: float64(i)})
		}
	}
	return out
}

type loadResult struct {
	failed              int
	requests, throttled int64
	elapsed             time.Duration // BulkWrite's call alone
}

// bulkLoad writes rs through a view of env carrying policies (in order),
// with azcore's default retry policy, and reports the entities not written
// and what the simulator saw.
func bulkLoad(t testing.TB, sim *throttle.Simulator, rs []reading, policies ...policy.Policy) loadResult {
	t.Helper()
	name := env.TableName(t)
	if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
		t.Fatal(err)
	}
	view := env.With(policies...).WithOptions(func(o *azcore.ClientOptions) { o.Retry = policy.RetryOptions{} })
	tbl, err := entity.NewTableFromService[reading](view.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	outs, err := tbl.BulkWrite(t.Context(), rs, entity.BulkOptions{Concurrency: 16})
	elapsed := time.Since(start)
	var be *entity.BulkError
	if err != nil && !errors.As(err, &be) {
		t.Fatal(err)
	}
	res := loadResult{elapsed: elapsed}
	for _, o := range outs {
		if o.Err != nil {
			res.failed++
		}
	}
	if sim != nil {
		st := sim.Stats()
		res.requests, res.throttled = st.Requests, st.Throttled
	}
	return res
}

// BulkWrite over 10 partitions against a simulated service that serves
// 200 entities/s per partition (the service's 2,000 scaled down tenfold,
// with a Limiter paced to the same scale): every entity is written and
// fewer than 1% of requests are throttled. (How much the simulator sheds
// of the same load with azcore's default retry alone depends on how fast
// the machine sends it: BenchmarkBulkWriteThrottled measures it; the
// Simulator's shedding is TestSimulatorShedsAboveItsRate, on a fake
// clock.)
func TestLimiterKeepsBulkWriteUnderTheSimulatedTargets(t *testing.T) {
	rs := readings(10, 400)
	t.Run("limiter", func(t *testing.T) {
		sim, err := throttle.NewSimulator(throttle.SimConfig{PartitionRate: 200})
		if err != nil {
			t.Fatal(err)
		}
		lim, err := throttle.NewLimiter(throttle.Config{PartitionRate: 200})
		if err != nil {
			t.Fatal(err)
		}
		r := bulkLoad(t, sim, rs, lim, sim)
		t.Logf("with the Limiter: %d of %d requests throttled, %d entities not written, waited %v", r.throttled, r.requests, r.failed, lim.Stats().Waited)
		if r.failed != 0 {
			t.Errorf("%d entities not written", r.failed)
		}
		if float64(r.throttled) >= 0.01*float64(r.requests) {
			t.Errorf("%d of %d requests throttled, want under 1%%", r.throttled, r.requests)
		}
	})
}

func bulkLoadB(b *testing.B, sim *throttle.Simulator, rs []reading, policies ...policy.Policy) loadResult {
	return bulkLoad(b, sim, rs, policies...)
}
