package dataseries_test

import (
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/dataseries"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

func newTable(t testing.TB, e *integration.Env) *entity.Table[entity.DynamicEntity] {
	t.Helper()
	tbl, err := entity.NewTable[entity.DynamicEntity](e.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func newSeries(t testing.TB, tbl *entity.Table[entity.DynamicEntity], cfg dataseries.Config) *dataseries.Series {
	t.Helper()
	s, err := dataseries.New(tbl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// faultyTable returns a new table whose client passes through f, with
// enough retries that a request whose replies keep being lost still gets
// through. f is left enabled.
func faultyTable(t *testing.T, f *faults.Injector) *entity.Table[entity.DynamicEntity] {
	t.Helper()
	opts := env.ClientOptions()
	opts.Retry.MaxRetries = 10
	opts.Retry.RetryDelay, opts.Retry.MaxRetryDelay = 5*time.Millisecond, 50*time.Millisecond
	f.SetEnabled(false) // the table is created without faults
	client := env.With(f).TableWith(t, opts)
	f.SetEnabled(true)
	tbl, err := entity.NewTable[entity.DynamicEntity](client)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}
