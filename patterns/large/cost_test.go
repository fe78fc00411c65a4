package large_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit/cost"
)

// The storage transactions of each operation on an employee with a 5 MiB
// photo, as the package documentation states them.
func TestCostOfA5MiBEmployee(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	f := newFixture(t, testConfig()).on(t, env.With(meter.Policy()))
	photo := payload(5, 5<<20)
	count := func(what string, want int64, run func() error) {
		t.Helper()
		before := meter.Snapshot()
		if err := run(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if used := meter.Snapshot().Sub(before); used.Total() != want {
			t.Errorf("%s cost %d storage transactions (%v), want %d", what, used.Total(), used, want)
		}
	}
	e := Employee{Dept: "Sales", ID: "000123", Name: "Jones", Photo: photo}
	count("Insert", 2, func() error { return f.emps.Insert(ctx, &e) })
	count("Get", 2, func() error { _, err := f.emps.Get(ctx, "Sales", "000123"); return err })
	e.Name = "Jonathan Jones"
	count("Replace of the name", 2, func() error { return f.emps.Replace(ctx, &e) })
	e.Photo = payload(6, 5<<20)
	count("Replace of the photo", 4, func() error { return f.emps.Replace(ctx, &e) })
	before := meter.Snapshot()
	if err := f.drain(ctx); err != nil {
		t.Fatal(err)
	}
	used := meter.Snapshot().Sub(before)
	if r, n, m := used.Count(cost.Table, cost.OpQuery), used.Count(cost.Blob, cost.OpDeleteBlob), used.Count(cost.Queue, cost.OpDeleteMessage); r != 1 || n != 1 || m != 1 {
		t.Errorf("the worker read the references %d times, deleted %d blobs and %d messages, want 1, 1 and 1 (%v)", r, n, m, used)
	}
	count("Delete", 3, func() error { return f.emps.Delete(ctx, "Sales", "000123", e.ETag) })
	f.settle(t)
	f.checkClean(t)
}
