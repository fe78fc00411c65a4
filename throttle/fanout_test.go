package throttle_test

import (
	"fmt"
	"testing"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/bucket"
	"github.com/tablekit/tablekit/throttle"
)

type logEntry struct {
	PartitionKey, RowKey string
	N                    int
}

// TestFanOutsGoThroughTheLimiter runs tablekit's fan-outs on the clients
// of an Account whose Options carry a Limiter and a Meter, and checks that
// the Limiter paced every try the Meter counted: BulkWrite's partition
// transactions, QueryPartitions' queries, and package bucket's spread
// Write and merged Tail. The library builds no client of its own: every
// fan-out sends through the pipeline of the client it was given.
func TestFanOutsGoThroughTheLimiter(t *testing.T) {
	lim, err := throttle.NewLimiter(throttle.Config{})
	if err != nil {
		t.Fatal(err)
	}
	meter := cost.NewMeter()
	acct, err := env.Account().WithOptions(func(o *account.Options) { o.Limiter, o.Meter = lim, meter })
	if err != nil {
		t.Fatal(err)
	}
	svc, err := acct.TableService()
	if err != nil {
		t.Fatal(err)
	}
	newTable := func() *entity.Table[logEntry] {
		name := env.TableName(t)
		if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
			t.Fatal(err)
		}
		tbl, err := entity.NewTableFromService[logEntry](svc, name)
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	paced := func(what string, run func()) {
		t.Helper()
		l0, m0 := lim.Stats().Requests, meter.Snapshot().Total()
		run()
		l, m := lim.Stats().Requests-l0, meter.Snapshot().Total()-m0
		if l == 0 || l != m {
			t.Errorf("%s: the Limiter paced %d of %d tries", what, l, m)
		}
	}

	tbl := newTable()
	var load []logEntry
	parts := []string{"p0", "p1", "p2"}
	for _, p := range parts {
		for i := range 150 {
			load = append(load, logEntry{PartitionKey: p, RowKey: fmt.Sprintf("%04d", i), N: i})
		}
	}
	paced("BulkWrite", func() {
		if _, err := tbl.BulkWrite(t.Context(), load, entity.BulkOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	paced("QueryPartitions", func() {
		n := 0
		for _, err := range tbl.QueryPartitions(t.Context(), parts, entity.Query{PageSize: 50}, entity.FanOutOptions{Concurrency: 3}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != len(load) {
			t.Fatalf("QueryPartitions read %d of %d", n, len(load))
		}
	})

	spread, err := bucket.New(newTable(), bucket.Config{Buckets: 4})
	if err != nil {
		t.Fatal(err)
	}
	paced("bucket Write and Tail", func() {
		var entries []*logEntry
		for i := range 40 {
			entries = append(entries, &logEntry{RowKey: fmt.Sprintf("%04d", i), N: i})
		}
		if err := spread.Write(t.Context(), "log", entries...); err != nil {
			t.Fatal(err)
		}
		if got, err := spread.Tail(t.Context(), "log", 10); err != nil || len(got) != 10 {
			t.Fatalf("Tail: %d entries, %v", len(got), err)
		}
	})
}
