package bucket_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/bucket"
)

// TestPlainWrites: what writes beside the Spread leave, as the Ownership
// section says — an entity in its own bucket is an entry like any other;
// one in another bucket is read by Query and Tail (a second entry with
// the same RowKey, when one exists) but not by Get; one under the bare
// name, or under the buckets of another count, is read by nothing.
// Every write is made with a plain entity.Table; the reads are the
// Spread's.
func TestPlainWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newTable(t, env)
	spread := newSpread(t, tbl, bucket.Config{Buckets: 4})
	if err := spread.Write(ctx, "log", &Event{RowKey: "r1", N: 1}); err != nil {
		t.Fatal(err)
	}
	own := spread.Partition("log", "r2")
	var other string // a bucket that is neither r1's nor r3's
	for _, p := range spread.Partitions("log") {
		if p != spread.Partition("log", "r1") && p != spread.Partition("log", "r3") {
			other = p
			break
		}
	}
	plain := []Event{
		{PartitionKey: own, RowKey: "r2", N: 2},                                  // its own bucket
		{PartitionKey: other, RowKey: "r3", N: 3},                                // another bucket
		{PartitionKey: other, RowKey: "r1", N: 10},                               // another bucket, an existing entry's RowKey
		{PartitionKey: "log", RowKey: "r4", N: 4},                                // the bare name
		{PartitionKey: keys.Compound("log", keys.Bucket("r5", 8)), RowKey: "r5"}, // a bucket of a count of 8
	}
	for i := range plain {
		if err := tbl.Upsert(ctx, &plain[i], entity.Replace); err != nil {
			t.Fatal(err)
		}
	}

	var got []int32
	for e, err := range spread.Query(ctx, "log", entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e.N)
	}
	// r1 twice (the Spread's and the other bucket's), r2, r3; not r4, r5.
	want := map[int32]bool{1: true, 10: true, 2: true, 3: true}
	if len(got) != len(want) {
		t.Fatalf("Query read %v, want the entries %v", got, want)
	}
	for _, n := range got {
		if !want[n] {
			t.Fatalf("Query read %v, want the entries %v", got, want)
		}
	}
	tail, err := spread.Tail(ctx, "log", 10)
	if err != nil || len(tail) != 4 {
		t.Fatalf("Tail = %d entries, %v; want 4", len(tail), err)
	}
	if e, err := spread.Get(ctx, "log", "r2"); err != nil || e.N != 2 {
		t.Errorf("Get r2 (its own bucket) = %+v, %v", e, err)
	}
	if e, err := spread.Get(ctx, "log", "r1"); err != nil || e.N != 1 {
		t.Errorf("Get r1 = %+v, %v; want the Spread's entry", e, err)
	}
	for _, rk := range []string{"r3", "r4", "r5"} {
		if _, err := spread.Get(ctx, "log", rk); !errors.Is(err, entity.ErrNotFound) {
			t.Errorf("Get %s = %v, want ErrNotFound", rk, err)
		}
	}
}
