package entity_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
)

func count(t *testing.T, people *entity.Table[Person], q entity.Query) map[string]Person {
	t.Helper()
	out := map[string]Person{}
	for p, err := range people.Query(context.Background(), q) {
		if err != nil {
			t.Fatal(err)
		}
		out[p.Dept+"/"+p.ID] = p
	}
	return out
}

// TestBulkWriteMixedPartitions loads entities over several partitions with
// a bad entity, a conflicting one and a duplicate, and checks every outcome.
func TestBulkWriteMixedPartitions(t *testing.T) {
	ctx := context.Background()
	people := newPeople(t)
	if err := people.Insert(ctx, &Person{Dept: "P3", ID: keys.Pad(42, 4), Name: "already"}); err != nil {
		t.Fatal(err)
	}
	var in []Person
	sizes := []int{250, 1, 99, 100, 101, 7}
	for p, n := range sizes {
		for i := 0; i < n; i++ {
			in = append(in, Person{Dept: fmt.Sprintf("P%d", p), ID: keys.Pad(int64(i), 4), Name: "v1"})
		}
	}
	badAt := len(in)
	in = append(in, Person{Dept: "P0", ID: "bad/key"})
	in = append(in, Person{Dept: "P2", ID: keys.Pad(5, 4), Name: "v2"}) // same entity again, later
	outcomes, err := people.BulkWrite(ctx, in, entity.BulkOptions{Mode: entity.OpInsert, Concurrency: 3})
	var be *entity.BulkError
	if !errors.As(err, &be) || be.Failed != 3 || be.Total != len(in) {
		t.Fatalf("got %v", err)
	}
	if len(outcomes) != len(in) {
		t.Fatalf("%d outcomes for %d entities", len(outcomes), len(in))
	}
	failed := map[int]error{}
	for i, o := range outcomes {
		if o.PartitionKey != in[i].Dept || o.RowKey != in[i].ID {
			t.Fatalf("outcome %d is for %s/%s", i, o.PartitionKey, o.RowKey)
		}
		if o.Err != nil {
			failed[i] = o.Err
		} else if o.ETag == "" {
			t.Errorf("outcome %d written without an ETag", i)
		}
	}
	conflictAt := 250 + 1 + 99 + 42 // P3's entity 42
	if !errors.Is(failed[badAt], entity.ErrInvalid) || !errors.Is(failed[conflictAt], entity.ErrAlreadyExists) || !errors.Is(failed[len(in)-1], entity.ErrAlreadyExists) {
		t.Fatalf("failures: %v", failed)
	}
	stored := count(t, people, entity.Query{})
	if want := 250 + 1 + 99 + 100 + 101 + 7; len(stored) != want {
		t.Fatalf("%d entities stored, want %d", len(stored), want)
	}
	if stored["P3/0042"].Name != "already" || stored["P2/0005"].Name != "v1" {
		t.Fatalf("conflicting entities changed: %+v %+v", stored["P3/0042"], stored["P2/0005"])
	}

	// Upsert: the later duplicate wins, in input order.
	again := []Person{{Dept: "P9", ID: "x", Name: "first"}, {Dept: "P9", ID: "y", Name: "y"}, {Dept: "P9", ID: "x", Name: "second"}}
	if _, err := people.BulkWrite(ctx, again, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := people.Get(ctx, "P9", "x"); got.Name != "second" {
		t.Fatalf("duplicate order lost: %+v", got)
	}
	if _, err := people.BulkWrite(ctx, again, entity.BulkOptions{Mode: entity.OpDelete}); !errors.Is(err, entity.ErrInvalid) {
		t.Fatalf("delete mode: %v", err)
	}
}

func TestQueryPartitionsMergesInOrder(t *testing.T) {
	ctx := context.Background()
	client := env.Table(t)
	var parts []string
	for _, p := range []string{"b", "e", "a", "d", "c"} {
		load(t, client, p, 30)
		parts = append(parts, p)
	}
	people, _ := entity.NewTable[Person](client)
	var want []string
	for p, err := range people.Query(ctx, entity.Query{Filter: filter.Lt("Age", int32(20))}) {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, p.Dept+"/"+p.ID)
	}
	q := entity.Query{Filter: filter.Lt("Age", int32(20)), PageSize: 7}
	var ordered, unordered []string
	for p, err := range people.QueryPartitions(ctx, append(parts, "zz-empty", "a"), q, entity.FanOutOptions{Concurrency: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		ordered = append(ordered, p.Dept+"/"+p.ID)
	}
	if !slices.Equal(inServiceOrder(ordered, strings.Compare), inServiceOrder(want, strings.Compare)) || len(want) != 95 { // Age 0 is omitted, so 19 of each 30 match
		t.Fatalf("ordered fan-out differs from one query: %d vs %d", len(ordered), len(want))
	}
	for p, err := range people.QueryPartitions(ctx, parts, q, entity.FanOutOptions{Unordered: true, Concurrency: 5}) {
		if err != nil {
			t.Fatal(err)
		}
		unordered = append(unordered, p.Dept+"/"+p.ID)
	}
	slices.Sort(unordered)
	if !slices.Equal(unordered, inServiceOrder(want, strings.Compare)) {
		t.Fatalf("unordered fan-out lost or added rows: %d", len(unordered))
	}
	n := 0
	for _, err := range people.QueryPartitions(ctx, parts, entity.Query{Limit: 45}, entity.FanOutOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 45 {
		t.Fatalf("limit: %d", n)
	}
	var sawErr error
	for _, err := range people.QueryPartitions(ctx, parts, entity.Query{Filter: filter.Eq("bad name", 1)}, entity.FanOutOptions{}) {
		sawErr = err
	}
	if !errors.Is(sawErr, filter.ErrInvalidFilter) {
		t.Fatalf("invalid filter: %v", sawErr)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for _, err := range people.QueryPartitions(cctx, parts, q, entity.FanOutOptions{}) {
		sawErr = err
	}
	if !errors.Is(sawErr, context.Canceled) {
		t.Fatalf("cancelled: %v", sawErr)
	}
}

// TestFanOutReportsTheCallersDeadline: a fan-out cut short by the caller's
// context ends with the context's error, never silently.
func TestFanOutReportsTheCallersDeadline(t *testing.T) {
	client := env.Table(t)
	load(t, client, "a", 1500)
	load(t, client, "b", 1500)
	people, _ := entity.NewTable[Person](client)
	for _, unordered := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		rows := 0
		var last error
		for _, err := range people.QueryPartitions(ctx, []string{"a", "b"}, entity.Query{PageSize: 100}, entity.FanOutOptions{Unordered: unordered}) {
			if err != nil {
				last = err
				break
			}
			rows++
			if rows == 150 {
				cancel()
			}
		}
		cancel()
		if !errors.Is(last, context.Canceled) || rows >= 3000 {
			t.Errorf("unordered=%v: %d rows, last error %v", unordered, rows, last)
		}
	}
}
