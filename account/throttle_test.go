package account_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/throttle"
)

type reading struct {
	PartitionKey, RowKey string
	Value                float64
}

// bulkThroughAccount writes 10 partitions of 400 entities with BulkWrite
// through a table client of acct, and returns the entities not written.
func bulkThroughAccount(t *testing.T, acct *account.Account) int {
	t.Helper()
	var rs []reading
	for p := range 10 {
		for i := range 400 {
			rs = append(rs, reading{PartitionKey: fmt.Sprintf("sensor-%02d", p), RowKey: fmt.Sprintf("%06d", i), Value: float64(i)})
		}
	}
	name := env.TableName(t)
	if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
		t.Fatal(err)
	}
	svc, err := acct.TableService()
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := entity.NewTableFromService[reading](svc, name)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := tbl.BulkWrite(t.Context(), rs, entity.BulkOptions{Concurrency: 16})
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
	return failed
}

// TestLimiterPacesAccountClients: BulkWrite through a table client of an
// Account whose Options carry a Limiter, against a simulated service of
// 200 entities/s per partition (the service's 2,000 scaled down tenfold,
// the Limiter paced to the same scale), writes everything with under 1%
// of its requests throttled; the same transactions sent at once through
// an Account with the Simulator alone have some throttled (the control
// that the rate is one a load can exceed). The queue and blob clients of the
// Account carry the same Limiter: their requests are paced too.
func TestLimiterPacesAccountClients(t *testing.T) {
	withDefaultRetry := func(lim *throttle.Limiter, sim *throttle.Simulator) *account.Account {
		acct, err := env.Account().WithOptions(func(o *account.Options) {
			o.ClientOptions.Retry = policy.RetryOptions{}
			o.Limiter, o.Simulator = lim, sim
		})
		if err != nil {
			t.Fatal(err)
		}
		return acct
	}
	newSim := func() *throttle.Simulator {
		sim, err := throttle.NewSimulator(throttle.SimConfig{PartitionRate: 200})
		if err != nil {
			t.Fatal(err)
		}
		return sim
	}

	sim := newSim()
	lim, err := throttle.NewLimiter(throttle.Config{PartitionRate: 200})
	if err != nil {
		t.Fatal(err)
	}
	acct := withDefaultRetry(lim, sim)
	failed := bulkThroughAccount(t, acct)
	st := sim.Stats()
	t.Logf("with the Limiter: %d of %d requests throttled, %d entities not written, waited %v", st.Throttled, st.Requests, failed, lim.Stats().Waited)
	if failed != 0 {
		t.Errorf("%d entities not written", failed)
	}
	if float64(st.Throttled) >= 0.01*float64(st.Requests) {
		t.Errorf("%d of %d requests throttled, want under 1%%", st.Throttled, st.Requests)
	}
	if got := lim.Stats().Requests; got != st.Requests {
		t.Errorf("the Limiter paced %d tries, the Simulator saw %d: some went around it", got, st.Requests)
	}

	// The queue and blob clients carry the same Limiter.
	before := lim.Stats().Requests
	qs, err := acct.QueueService()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := qs.NewQueueClient(env.QueueName(t)).Create(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	bs, err := acct.BlobService()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bs.CreateContainer(t.Context(), env.ContainerName(t), nil); err != nil {
		t.Fatal(err)
	}
	if got := lim.Stats().Requests - before; got != 2 {
		t.Errorf("the Limiter paced %d of the queue's and the blob's 2 requests", got)
	}

	// The control: the same transactions without the Limiter, each
	// partition's four sent at once, so that they exceed the simulated
	// rate however slowly this machine runs (BulkWrite sends a partition's
	// transactions one after another, at the speed of the client).
	sim = newSim()
	burstThroughAccount(t, withDefaultRetry(nil, sim))
	raw := sim.Stats()
	t.Logf("without the Limiter: %d of %d requests throttled", raw.Throttled, raw.Requests)
	if float64(raw.Throttled) < 0.01*float64(raw.Requests) {
		t.Errorf("without the Limiter only %d of %d requests throttled: the load does not exceed the simulated rate", raw.Throttled, raw.Requests)
	}
}

// burstThroughAccount writes bulkThroughAccount's entities as 40
// transactions of 100, all sent at once, through a table client of acct.
func burstThroughAccount(t *testing.T, acct *account.Account) {
	t.Helper()
	name := env.TableName(t)
	if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
		t.Fatal(err)
	}
	svc, err := acct.TableService()
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := entity.NewTableFromService[reading](svc, name)
	if err != nil {
		t.Fatal(err)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for p := range 10 {
		for c := range 4 {
			b := tbl.NewBatch()
			for i := c * 100; i < (c+1)*100; i++ {
				b.Insert(&reading{PartitionKey: fmt.Sprintf("sensor-%02d", p), RowKey: fmt.Sprintf("%06d", i), Value: float64(i)})
			}
			wg.Go(func() {
				<-start
				_, _ = tbl.Submit(t.Context(), b) // throttled ones may fail after their retries: only the count matters
			})
		}
	}
	close(start)
	wg.Wait()
}
