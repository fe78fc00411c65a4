package indexentity_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/indexentity"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// Employee is the guide's employee: department and id as keys.
type Employee struct {
	PartitionKey string // department
	RowKey       string // employee id
	ETag         string `table:",etag"`
	FirstName    string
	LastName     string
	City         string `table:",omitempty"`
}

// hot is the retry policy of tests whose writers all write one list.
var hot = entity.RetryPolicy{Attempts: 200, BaseDelay: 2 * time.Millisecond, MaxDelay: 50 * time.Millisecond}

func lastName(e *Employee) (string, bool) { return e.LastName, e.LastName != "" }
func city(e *Employee) (string, bool)     { return e.City, e.City != "" }

// table returns a typed view of a new table on e.
func table[T any](t testing.TB, e *integration.Env) *entity.Table[T] {
	t.Helper()
	tbl, err := entity.NewTable[T](e.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// sameTable is a typed view of tbl's table through e's clients.
func sameTable[T, U any](t testing.TB, e *integration.Env, tbl *entity.Table[U]) *entity.Table[T] {
	t.Helper()
	v, err := entity.NewTableFromService[T](e.TableService, tbl.Name())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// queues creates n work queues with their poison queues on e, deleted
// when the test ends.
func queues(t testing.TB, e *integration.Env, n int) []eventual.Queue {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = e.QueueName(t)
	}
	qs := eventual.QueuesOf(e.QueueService, names...)
	for _, q := range qs {
		for _, c := range []*azqueue.QueueClient{q.Work, q.Poison} {
			if _, err := c.Create(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				_, _ = c.Delete(ctx, nil)
			})
		}
	}
	return qs
}

// sameQueues returns clients of qs's queues built from e (another view).
func sameQueues(t testing.TB, e *integration.Env, qs []eventual.Queue) []eventual.Queue {
	t.Helper()
	names := make([]string, len(qs))
	for i, q := range qs {
		parts, err := azqueue.ParseURL(q.Work.URL())
		if err != nil {
			t.Fatal(err)
		}
		names[i] = parts.QueueName
	}
	return eventual.QueuesOf(e.QueueService, names...)
}

// fast is a processor configuration for tests: immediate retries, quick
// polling, a visibility timeout a loaded machine cannot outrun.
func fast() eventual.Config {
	return eventual.Config{
		Workers:           4,
		VisibilityTimeout: 30 * time.Second,
		RetryDelay:        -1,
		PollInterval:      10 * time.Millisecond,
		MaxPollInterval:   50 * time.Millisecond,
		ShutdownGrace:     5 * time.Second,
	}
}

// drain runs p until every work queue of qs is empty (no message left,
// visible or not), or ctx ends.
func drain(ctx context.Context, p *eventual.Processor, qs []eventual.Queue) error {
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(rctx) }()
	defer func() { cancel(); <-done }()
	for {
		left := 0
		for _, q := range qs {
			n, err := messageCount(ctx, q.Work)
			if err != nil {
				return err
			}
			left += n
		}
		if left == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d messages left: %w", left, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func messageCount(ctx context.Context, q *azqueue.QueueClient) (int, error) {
	props, err := q.GetProperties(ctx, nil)
	if err != nil {
		return 0, err
	}
	if props.ApproximateMessagesCount == nil {
		return 0, nil
	}
	return int(*props.ApproximateMessagesCount), nil
}

// findings runs a whole check and returns its findings.
func findings[T any](t testing.TB, s *indexentity.Set[T], opts indexentity.CheckOptions) []drift.Finding {
	t.Helper()
	var out []drift.Finding
	for f, err := range s.Check(context.Background(), opts) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// noDrift fails the test when a whole check finds anything.
func noDrift[T any](t testing.TB, s *indexentity.Set[T]) {
	t.Helper()
	fs := findings(t, s, indexentity.CheckOptions{})
	for i, f := range fs {
		if i == 10 {
			t.Errorf("… %d findings in all", len(fs))
			break
		}
		t.Errorf("drift: %v", f)
	}
}

// lookup returns the RowKeys a lookup yields.
func lookup(t testing.TB, s *indexentity.Set[Employee], index, pk, value string) []string {
	t.Helper()
	var rks []string
	for e, err := range s.LookupAll(context.Background(), index, pk, value, indexentity.LookupOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		rks = append(rks, e.RowKey)
	}
	return rks
}

// expect returns, by value, the RowKeys of the employees of partition pk
// holding each value, as the table says.
func expect(t testing.TB, tbl *entity.Table[Employee], pk string, value func(*Employee) (string, bool)) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for e, err := range tbl.Query(context.Background(), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.PartitionKey != pk {
			continue
		}
		if v, ok := value(&e); ok {
			out[v] = append(out[v], e.RowKey)
		}
	}
	for _, rks := range out {
		slices.Sort(rks)
	}
	return out
}

// parallel runs f(0) … f(n-1) on workers goroutines and fails the test on
// the first error.
func parallel(t testing.TB, workers, n int, f func(i int) error) {
	t.Helper()
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range n {
		select {
		case next <- i:
		case err := <-errs:
			close(next)
			wg.Wait()
			t.Fatal(err)
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
