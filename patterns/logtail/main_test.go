package logtail_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/logtail"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// Attempt is a login attempt, the guide's example of data that arrives over
// time.
type Attempt struct {
	PartitionKey string
	RowKey       string
	User         string
	Writer       int32
	N            int32
}

func newTable(t *testing.T) *entity.Table[Attempt] {
	t.Helper()
	tbl, err := entity.NewTable[Attempt](env.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func newLog(t *testing.T, tbl *entity.Table[Attempt], cfg logtail.Config) *logtail.Log[Attempt] {
	t.Helper()
	l, err := logtail.New(tbl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// stepClock returns a clock that starts at start and moves step further
// at every reading.
func stepClock(start time.Time, step time.Duration) func() time.Time {
	var n atomic.Int64
	return func() time.Time { return start.Add(time.Duration(n.Add(1)-1) * step) }
}

// rowKeys returns the RowKeys of entries.
func rowKeys(entries []Attempt) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.RowKey
	}
	return out
}

// faultyTable returns a new table whose client passes through f, with
// enough retries that a request whose replies keep being lost still gets
// through. f is left enabled.
func faultyTable(t *testing.T, f *faults.Injector) *entity.Table[Attempt] {
	t.Helper()
	opts := env.ClientOptions()
	opts.Retry.MaxRetries = 10
	opts.Retry.RetryDelay, opts.Retry.MaxRetryDelay = 5*time.Millisecond, 50*time.Millisecond
	f.SetEnabled(false) // the table is created without faults
	client := env.With(f).TableWith(t, opts)
	f.SetEnabled(true)
	tbl, err := entity.NewTable[Attempt](client)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}
