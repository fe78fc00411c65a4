package indexentity_test

import (
	"context"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

var long = flag.Bool("long", false, "run TestLargeValue at full size: 100,000 employees named Jones")

// TestLargeValue gives one last name to 4,000 employees of one department,
// their RowKeys 40 characters long (100,000 of 7 with -long or
// TABLEKIT_FULL=1; the list's bytes, which decide how it spills, are those
// of 20,000 keys of 7): written with BulkWrite, their list built by
// Rebuild in bulk. The list is far over what one String
// property holds and spills to continuation entities, none over
// Config.MaxEntityBytes; Members reads it whole and in key order; a
// lookup reads the first hundred; an insert and a delete touch one
// continuation each; the drift checker finds nothing.
func TestLargeValue(t *testing.T) {
	t.Parallel()
	n, prefix := 4_000, "employee-with-a-long-key-"+strings.Repeat("0", 8)
	if *long || os.Getenv("TABLEKIT_FULL") == "1" {
		n, prefix = 100_000, ""
	}
	ctx := context.Background()
	answered := &patterntest.Answered{} // the service's answers, not azcore's tries
	emps := patterntest.Table[Employee](t, env.With(answered))
	s, err := indexentity.New(emps, indexentity.Config{}, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	es := make([]Employee, n)
	want := make([]string, n)
	for i := range es {
		es[i] = Employee{PartitionKey: "Sales", RowKey: prefix + keys.Pad(int64(i*2), 7), LastName: "Jones"}
		want[i] = es[i].RowKey
	}
	if _, err := emps.BulkWrite(ctx, es, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	loaded := time.Since(start)
	sum, err := s.Rebuild(ctx, indexentity.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Missing != n || sum.Repaired != n {
		t.Fatalf("Rebuild: %+v", sum)
	}
	built := time.Since(start)

	got, err := s.Members(ctx, "lastname", "Sales", "Jones")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Members: %d keys, want %d in key order", len(got), len(want))
	}
	bags := patterntest.View[entity.DynamicEntity](t, env, emps)
	rows := indexRows(t, bags, "Sales", "lastname_Jones")
	if len(rows) < 3 {
		t.Errorf("the list is in %d entities, want it spilled", len(rows))
	}
	for _, r := range rows {
		if sz := size(r); sz > indexentity.DefaultMaxEntityBytes {
			t.Errorf("%s is %d bytes", r.RowKey, sz)
		}
	}
	var first []string
	for e, err := range s.LookupAll(ctx, "lastname", "Sales", "Jones", indexentity.LookupOptions{Limit: 100}) {
		if err != nil {
			t.Fatal(err)
		}
		first = append(first, e.RowKey)
	}
	if !slices.Equal(first, want[:100]) {
		t.Errorf("the first hundred: %v…", first[:min(3, len(first))])
	}

	// A member added and one removed in the middle: the head (a
	// directory), one continuation and the head again read, one
	// transaction.
	mid := prefix + keys.Pad(int64(n+1), 7) // odd: between two members
	answered.Reset()
	if err := s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: mid, LastName: "Jones"}); err != nil {
		t.Fatal(err)
	}
	if n, b := answered.Total(), answered.Count(cost.Table, cost.OpBatch); n != 4 || b != 1 {
		t.Errorf("an insert into the long list made %d requests, %d transactions; want three reads and a transaction", n, b)
	}
	if err := s.Delete(ctx, "Sales", want[n/3], ""); err != nil {
		t.Fatal(err)
	}
	want = slices.DeleteFunc(append(want, mid), func(rk string) bool { return rk == want[n/3] })
	slices.Sort(want)
	if got, err := s.Members(ctx, "lastname", "Sales", "Jones"); err != nil || !slices.Equal(got, want) {
		t.Errorf("after an insert and a delete: %d keys (%v), want %d", len(got), err, len(want))
	}
	noDrift(t, s)
	t.Logf("%d employees loaded in %v, list built in %v; %d index entities of at most %d bytes; all in %v",
		n, loaded.Round(time.Millisecond), (built - loaded).Round(time.Millisecond), len(rows), maxSize(rows), time.Since(start).Round(time.Millisecond))
}

func maxSize(rows []entity.DynamicEntity) int {
	m := 0
	for _, r := range rows {
		m = max(m, size(r))
	}
	return m
}
