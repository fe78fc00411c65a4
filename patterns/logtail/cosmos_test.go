package logtail_test

import (
	"context"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/cosmos"
	"github.com/tablekit/tablekit/patterns/logtail"
)

// cosmosEnv is env with the Cosmos DB profile on its table clients.
func cosmosEnv() *integration.Env {
	if env.Cosmos() {
		return env
	}
	return env.With(cosmos.New())
}

// TestCosmosTrimUnsorted: on a backend whose pages are in no key order
// (the Cosmos DB profile, Config.Unsorted), Trim removes exactly the
// entries before its instant and leaves the rest, as TestTrim shows on
// Table storage; a second Trim finds nothing.
func TestCosmosTrimUnsorted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, err := entity.NewTable[Attempt](cosmosEnv().Table(t))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	l := newLog(t, tbl, logtail.Config{Now: stepClock(t0, time.Millisecond), Unsorted: true})
	batch := make([]*Attempt, 1234) // entry i at t0 + i ms
	for i := range batch {
		batch[i] = &Attempt{N: int32(i)}
	}
	if err := l.Append(ctx, "p", batch...); err != nil {
		t.Fatal(err)
	}
	if n, err := l.Trim(ctx, "p", t0.Add(1100*time.Millisecond)); err != nil || n != 1100 {
		t.Fatalf("Trim = %d, %v; want 1100", n, err)
	}
	left := map[int32]bool{}
	for e, err := range tbl.Query(ctx, entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		left[e.N] = true
	}
	for i := range int32(1234) {
		if left[i] != (i >= 1100) {
			t.Fatalf("after Trim, entry %d present = %v; want entries 1100 … 1233 only (%d left)", i, left[i], len(left))
		}
	}
	if n, err := l.Trim(ctx, "p", t0.Add(1100*time.Millisecond)); err != nil || n != 0 {
		t.Fatalf("second Trim = %d, %v; want 0", n, err)
	}
}
