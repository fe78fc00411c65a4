package entity_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
)

// ByRowKey merges partitions by RowKey, PartitionKey breaking ties, with
// fewer request slots than partitions (no partition waits on another to
// end), and a limit costs one request per partition.
func TestQueryPartitionsByRowKey(t *testing.T) {
	if env.Cosmos() {
		t.Skip("Cosmos DB returns a partition's rows in no order, so no merge by RowKey holds there (package doc, Azurite and Cosmos DB; TestCosmosFanOutByRowKeyKeepsEveryRow)")
	}
	ctx := context.Background()
	meter := cost.NewMeter()
	people, err := entity.NewTable[Person](env.With(meter.Policy()).Table(t))
	if err != nil {
		t.Fatal(err)
	}
	parts := []string{"b", "e", "a", "d", "c"}
	var all []Person
	type key struct{ rk, pk string }
	var want []key
	for n, p := range parts { // partition n holds every (n+1)-th id of 0 … 199
		for i := 0; i < 200; i += n + 1 {
			all = append(all, Person{Dept: p, ID: keys.Pad(int64(i), 4), Name: fmt.Sprint(i)})
			want = append(want, key{keys.Pad(int64(i), 4), p})
		}
	}
	if _, err := people.BulkWrite(ctx, all, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(want, func(a, b key) int { return cmp.Or(keys.Compare(a.rk, b.rk), keys.Compare(a.pk, b.pk)) })

	read := func(q entity.Query, opts entity.FanOutOptions) []key {
		var out []key
		for p, err := range people.QueryPartitions(ctx, parts, q, opts) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, key{p.ID, p.Dept})
		}
		return out
	}
	if got := read(entity.Query{PageSize: 7}, entity.FanOutOptions{ByRowKey: true, Concurrency: 2}); !slices.Equal(got, want) {
		t.Fatalf("merged by RowKey: %d rows, want %d in RowKey, PartitionKey order\n%v", len(got), len(want), got[:min(len(got), 20)])
	}
	before := meter.Snapshot()
	if got := read(entity.Query{Limit: 12}, entity.FanOutOptions{ByRowKey: true}); !slices.Equal(got, want[:12]) {
		t.Fatalf("first 12 by RowKey: %v, want %v", got, want[:12])
	}
	if used := meter.Snapshot().Sub(before); used.Total() != int64(len(parts)) {
		t.Errorf("a limit of 12 over %d partitions took %v, want one query each", len(parts), used)
	}
	var sawErr error
	for _, err := range people.QueryPartitions(ctx, parts, entity.Query{}, entity.FanOutOptions{ByRowKey: true, Unordered: true}) {
		sawErr = err
	}
	if !errors.Is(sawErr, entity.ErrInvalid) {
		t.Errorf("ByRowKey and Unordered together: %v, want ErrInvalid", sawErr)
	}
	// Stopping early, and a cancelled context, end cleanly.
	for range people.QueryPartitions(ctx, parts, entity.Query{PageSize: 5}, entity.FanOutOptions{ByRowKey: true, Concurrency: 1}) {
		break
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	sawErr = nil
	for _, err := range people.QueryPartitions(cctx, parts, entity.Query{}, entity.FanOutOptions{ByRowKey: true}) {
		sawErr = err
	}
	if !errors.Is(sawErr, context.Canceled) {
		t.Errorf("cancelled: %v", sawErr)
	}
}
