package bucket_test

import (
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/bucket"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// Event is something that happened at a time: its RowKey is inverted ticks,
// newest first.
type Event struct {
	PartitionKey string
	RowKey       string
	Writer       int32
	N            int32
}

func newTable(t testing.TB, e *integration.Env) *entity.Table[Event] {
	t.Helper()
	tbl, err := entity.NewTable[Event](e.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func newSpread(t testing.TB, tbl *entity.Table[Event], cfg bucket.Config) *bucket.Spread[Event] {
	t.Helper()
	s, err := bucket.New(tbl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
