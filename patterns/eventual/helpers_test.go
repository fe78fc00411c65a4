package eventual_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/eventual"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// Employee is the guide's employee, in Current and in Archive.
type Employee struct {
	PartitionKey string // department
	RowKey       string // employee id
	ETag         string
	Name         string
	Salary       int64
}

// Department counts its archived employees (an increment, applied Once).
type Department struct {
	PartitionKey string
	RowKey       string
	ETag         string
	Archived     int64
}

// ArchiveEmployee is the message of the guide's example.
type ArchiveEmployee struct {
	Department string `json:"department"`
	ID         string `json:"id"`
}

var archiveKind = eventual.NewKind[ArchiveEmployee]("ArchiveEmployee.v1")

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
				if _, err := c.Delete(ctx, nil); err != nil && !isNotFound(err) {
					t.Errorf("deleting queue: %v", err)
				}
			})
		}
	}
	return qs
}

// crashy is fast with a one-second visibility timeout: a message a crashed
// worker held reappears after a second.
func crashy() eventual.Config {
	c := fast()
	c.VisibilityTimeout = time.Second
	return c
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

func isNotFound(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == 404
}

// table returns a typed view of a new table on e.
func table[T any](t testing.TB, e *integration.Env) *entity.Table[T] {
	t.Helper()
	name := e.TableName(t)
	if _, err := e.TableService.CreateTable(context.Background(), name, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := entity.NewTableFromService[T](e.TableService, name)
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

// fast is a configuration for tests: immediate retries, quick polling.
// Its visibility timeout is long enough that a slow machine never lets a
// message reappear while its handler runs; tests of crashes shorten it.
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

// outcomes records the hooks' reports.
type outcomes struct {
	mu     sync.Mutex
	all    []eventual.Outcome
	errs   []error
	notify chan struct{}
}

func newOutcomes() *outcomes { return &outcomes{notify: make(chan struct{}, 1)} }

func (o *outcomes) hooks() eventual.Hooks {
	return eventual.Hooks{
		Outcome: func(out eventual.Outcome) {
			o.mu.Lock()
			o.all = append(o.all, out)
			o.mu.Unlock()
			select {
			case o.notify <- struct{}{}:
			default:
			}
		},
		Error: func(err error) {
			o.mu.Lock()
			o.errs = append(o.errs, err)
			o.mu.Unlock()
		},
	}
}

func (o *outcomes) count(r eventual.Result) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, out := range o.all {
		if out.Result == r {
			n++
		}
	}
	return n
}

func (o *outcomes) errors() []error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]error(nil), o.errs...)
}

func (o *outcomes) list() []eventual.Outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]eventual.Outcome(nil), o.all...)
}

// run runs p in the background until the returned stop is called; stop
// waits for Run to return.
func run(t testing.TB, p *eventual.Processor) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
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

// messageCount is the number of messages in q, visible or not.
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

// rowKeys lists the RowKeys of a table's entities, sorted.
func rowKeys[T any](t testing.TB, tbl *entity.Table[T]) []string {
	t.Helper()
	var rks []string
	for e, err := range tbl.Query(context.Background(), entity.Query{Select: []string{"RowKey"}}) {
		if err != nil {
			t.Fatal(err)
		}
		sys, err := entity.SystemOf(&e)
		if err != nil {
			t.Fatal(err)
		}
		rks = append(rks, sys.RowKey)
	}
	sort.Strings(rks)
	return rks
}
