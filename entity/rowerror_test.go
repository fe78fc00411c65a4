package entity_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

// One row that cannot be decoded must not block every listing of its
// partition: with Query.ContinueOnRowError its error is yielded, naming
// its keys, and the rows after it follow.

// putRaw writes an entity's properties with a raw aztables client.
func putRaw(t *testing.T, client *aztables.Client, props map[string]any) {
	t.Helper()
	body, err := json.Marshal(props)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.UpsertEntity(context.Background(), body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
		t.Fatal(err)
	}
}

// badRowTable is a table of Person rows r0…r9 in partitions pks, written
// raw; in each partition the rows bad hold an Age stored as a String,
// which Person (Age int32) refuses to decode.
func badRowTable(t *testing.T, pks []string, bad ...int) *entity.Table[Person] {
	t.Helper()
	people := kitTable[Person](t)
	for _, pk := range pks {
		for i := range 10 {
			props := map[string]any{"PartitionKey": pk, "RowKey": fmt.Sprint("r", i), "Name": fmt.Sprint("n", i), "Age": i + 1}
			for _, b := range bad {
				if b == i {
					props["Age"] = "not a number"
				}
			}
			putRaw(t, people.Client(), props)
		}
	}
	return people
}

// result is one item of a query: a row's RowKey and Age, or its error.
type result struct {
	rk  string
	age int32
	err error
}

func drainRows(seq func(func(Person, error) bool)) []result {
	var out []result
	for p, err := range seq {
		out = append(out, result{p.ID, p.Age, err})
	}
	return out
}

// checkResults checks a query's results: the rows of want in order, each
// bad one (Age 0 in want) an error naming its keys that matches
// ErrDecode, with Person's zero value.
func checkResults(t *testing.T, what string, got []result, want []string, bad map[string]bool, pkOf func(rk string) string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d results %v, want %d", what, len(got), got, len(want))
	}
	for i, r := range got {
		w := want[i]
		if !bad[w[len(w)-2:]] {
			if r.err != nil || r.rk != w[len(w)-2:] || r.age == 0 {
				t.Fatalf("%s: result %d = %+v, want row %s", what, i, r, w)
			}
			continue
		}
		var re *entity.RowError
		if !errors.As(r.err, &re) || !errors.Is(r.err, entity.ErrDecode) || re.RowKey != w[len(w)-2:] || re.PartitionKey != pkOf(w) || r.rk != "" || r.age != 0 {
			t.Fatalf("%s: result %d = %+v, want the RowError of %s", what, i, r, w)
		}
		var de *entity.DecodeError
		if !errors.As(r.err, &de) || de.Property != "Age" {
			t.Fatalf("%s: result %d: %v, want a DecodeError of Age", what, i, r.err)
		}
	}
}

// TestQueryContinuesPastBadRows: Query, QueryPage and QueryPartitions (in
// all three orders) stop at the first row that cannot be decoded by
// default, and with ContinueOnRowError yield its *RowError and go on;
// raw reads hand every row out.
func TestQueryContinuesPastBadRows(t *testing.T) {
	if env.Cosmos() {
		t.Skip("positions in Table storage's order; TestCosmosBadRowsWithoutOrder checks the same claims in the order Cosmos DB returns")
	}
	t.Parallel()
	ctx := context.Background()
	people := badRowTable(t, []string{"a", "b"}, 3, 7)
	bad := map[string]bool{"r3": true, "r7": true}
	var rowsA, rowsAll []string
	for i := range 10 {
		rowsA = append(rowsA, fmt.Sprint("a/r", i))
	}
	for _, pk := range []string{"a", "b"} {
		for i := range 10 {
			rowsAll = append(rowsAll, fmt.Sprint(pk, "/r", i))
		}
	}
	pkOf := func(s string) string { return s[:1] }

	// By default the first bad row ends the sequence, after the rows
	// before it, and names its keys.
	got := drainRows(people.Query(ctx, entity.Query{Filter: filter.PK("a"), PageSize: 2}))
	checkResults(t, "default", got, rowsA[:4], bad, pkOf)
	want := fmt.Sprintf(`entity: Query on table %s (PartitionKey "a", RowKey "r3"): cannot decode entity: property Age`, people.Name())
	if msg := got[3].err.Error(); !strings.HasPrefix(msg, want) {
		t.Errorf("message %q, want it to start %q", msg, want)
	}

	for _, size := range []int{0, 2, 3} {
		q := entity.Query{Filter: filter.PK("a"), PageSize: size, ContinueOnRowError: true}
		checkResults(t, fmt.Sprint("continue, page size ", size), drainRows(people.Query(ctx, q)), rowsA, bad, pkOf)
	}
	// A bad row counts toward Limit.
	checkResults(t, "limit", drainRows(people.Query(ctx, entity.Query{Filter: filter.PK("a"), Limit: 5, ContinueOnRowError: true})), rowsA[:5], bad, pkOf)
	// The caller stops when it wants.
	n := 0
	for _, err := range people.Query(ctx, entity.Query{Filter: filter.PK("a"), ContinueOnRowError: true}) {
		n++
		if err != nil {
			break
		}
	}
	if n != 4 {
		t.Fatalf("break at the first error: %d results", n)
	}

	// QueryPage: the bad rows of a page in RowErrors, by default an error.
	if _, err := people.QueryPage(ctx, entity.Query{Filter: filter.PK("a")}, ""); !errors.Is(err, entity.ErrDecode) {
		t.Fatalf("QueryPage without ContinueOnRowError: %v", err)
	}
	var items []string
	var rowErrs []string
	token := ""
	for {
		page, err := people.QueryPage(ctx, entity.Query{Filter: filter.PK("a"), PageSize: 4, ContinueOnRowError: true}, token)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page.Items {
			items = append(items, p.ID)
		}
		for _, re := range page.RowErrors {
			if !errors.Is(re, entity.ErrDecode) || re.PartitionKey != "a" {
				t.Fatalf("page row error %v", re)
			}
			rowErrs = append(rowErrs, re.RowKey)
		}
		if token = page.Next; token == "" {
			break
		}
	}
	if fmt.Sprint(items) != "[r0 r1 r2 r4 r5 r6 r8 r9]" || fmt.Sprint(rowErrs) != "[r3 r7]" {
		t.Fatalf("pages: items %v, row errors %v", items, rowErrs)
	}

	// QueryPartitions, in the three orders.
	for _, opts := range []entity.FanOutOptions{{}, {Unordered: true}, {ByRowKey: true}} {
		what := fmt.Sprintf("fan-out %+v", opts)
		got := drainRows(people.QueryPartitions(ctx, []string{"a", "b"}, entity.Query{}, opts))
		if n := len(got); n == 0 || got[n-1].err == nil || !errors.Is(got[n-1].err, entity.ErrDecode) {
			t.Fatalf("%s without ContinueOnRowError: %v", what, got)
		}
		got = drainRows(people.QueryPartitions(ctx, []string{"a", "b"}, entity.Query{ContinueOnRowError: true}, opts))
		want := rowsAll
		switch {
		case opts.ByRowKey:
			want = nil
			for i := range 10 {
				want = append(want, fmt.Sprint("a/r", i), fmt.Sprint("b/r", i))
			}
		case opts.Unordered:
			// Any order: every good row once, and the four bad ones.
			seen := map[string]bool{}
			errs := 0
			for _, r := range got {
				var re *entity.RowError
				switch {
				case errors.As(r.err, &re) && errors.Is(r.err, entity.ErrDecode) && r.age == 0 && bad[re.RowKey]:
					errs++
				case r.err == nil && !bad[r.rk]:
					seen[fmt.Sprint(r.rk, r.age)] = true
				default:
					t.Fatalf("%s: %+v", what, r)
				}
			}
			if len(got) != 20 || errs != 4 || len(seen) != 8 {
				t.Fatalf("%s: %d results, %d row errors, %d distinct good rows", what, len(got), errs, len(seen))
			}
			continue
		}
		checkResults(t, what, got, want, bad, pkOf)
	}

	// A Table[json.RawMessage] hands every row out as the service sent it.
	rawRows, err := entity.NewTable[json.RawMessage](people.Client())
	if err != nil {
		t.Fatal(err)
	}
	nRaw := 0
	for row, err := range rawRows.Query(ctx, entity.Query{Filter: filter.PK("a"), ContinueOnRowError: true}) {
		if err != nil || len(row) == 0 {
			t.Fatalf("raw row: %s %v", row, err)
		}
		nRaw++
	}
	if nRaw != 10 {
		t.Fatalf("raw rows: %d", nRaw)
	}

	// The failure of a request still ends the sequence.
	missing, err := entity.NewTableFromService[Person](env.TableService, "Missing"+env.TableName(t)[:20])
	if err != nil {
		t.Fatal(err)
	}
	got = drainRows(missing.Query(ctx, entity.Query{ContinueOnRowError: true}))
	if len(got) != 1 || !errors.Is(got[0].err, entity.ErrTableNotFound) {
		t.Fatalf("query of a missing table: %v", got)
	}

	// Get of a bad row: its RowError, never a partly filled value.
	p, err := people.Get(ctx, "a", "r3")
	var re *entity.RowError
	if !errors.As(err, &re) || !errors.Is(err, entity.ErrDecode) || re.RowKey != "r3" || p != (Person{}) {
		t.Fatalf("Get of a bad row: %+v %v", p, err)
	}
}
