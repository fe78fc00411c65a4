package eventual_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

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

// recentCreated is a "created" time for hand-written envelopes that
// Replay sends back without ReplayOptions.Stale: the test run's start.
var recentCreated = time.Now().UTC().Format("2006-01-02T15:04:05.0000000Z")
