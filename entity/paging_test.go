package entity_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

// emptyKeyRows are the rows of the empty-key paging tests, in the service's
// order: three in the empty partition, then a row with an empty RowKey.
var emptyKeyRows = [][2]string{{"", "a"}, {"", "b"}, {"", "c"}, {"x", ""}, {"x", "y"}}

// loadEmptyKeys stores emptyKeyRows and returns a typed table over them.
func loadEmptyKeys(t *testing.T) (*aztables.Client, *entity.Table[Person]) {
	t.Helper()
	client := env.Table(t)
	people, err := entity.NewTable[Person](client)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range emptyKeyRows {
		if err := people.Insert(context.Background(), &Person{Dept: k[0], ID: k[1], Name: "n"}); err != nil {
			t.Fatal(err)
		}
	}
	return client, people
}

func keysOf(ps []Person) [][2]string {
	out := make([][2]string, len(ps))
	for i, p := range ps {
		out[i] = [2]string{p.Dept, p.ID}
	}
	return out
}

func drain[T any](t *testing.T, seq func(func(T, error) bool)) []T {
	t.Helper()
	var out []T
	for v, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
		if len(out) > 100 {
			t.Fatal("the query does not end")
		}
	}
	return out
}

// TestPagingThroughAnEmptyPartitionKey: the service sends the continuation
// header of an empty PartitionKey as an empty value; every page after it
// must resume there, not start over or stop.
func TestPagingThroughAnEmptyPartitionKey(t *testing.T) {
	ctx := context.Background()
	client, people := loadEmptyKeys(t)

	for _, size := range []int{1, 2, 3} {
		got := keysOf(drain(t, people.Query(ctx, entity.Query{PageSize: size})))
		if !slices.Equal(inServiceOrder(got, cmpKeys), emptyKeyRows) {
			t.Errorf("PageSize %d: got %q, want %q", size, got, emptyKeyRows)
		}
	}
	for _, size := range []int{1, 2} {
		got := keysOf(drain(t, people.Query(ctx, entity.Query{Filter: filter.PK(""), PageSize: size})))
		if !slices.Equal(inServiceOrder(got, cmpKeys), emptyKeyRows[:3]) {
			t.Errorf("PK(\"\") PageSize %d: got %q, want %q", size, got, emptyKeyRows[:3])
		}
	}

	// Undecoded rows take the same path.
	rows, err := entity.NewTable[json.RawMessage](client)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(drain(t, rows.Query(ctx, entity.Query{PageSize: 2}))); n != len(emptyKeyRows) {
		t.Errorf("Table[json.RawMessage]: %d rows, want %d", n, len(emptyKeyRows))
	}

	// The property bag reads minimal metadata; the typed table no metadata.
	bags, err := entity.NewTable[entity.DynamicEntity](client)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(drain(t, bags.Query(ctx, entity.Query{PageSize: 1}))); n != len(emptyKeyRows) {
		t.Errorf("DynamicEntity: %d rows, want %d", n, len(emptyKeyRows))
	}
}

// TestTokensAcrossAnEmptyPartitionKey resumes every page from its token in a
// fresh Table, as another process would: tokens that stop in the empty
// partition, or right after it, resume exactly there.
func TestTokensAcrossAnEmptyPartitionKey(t *testing.T) {
	ctx := context.Background()
	client, _ := loadEmptyKeys(t)
	for _, q := range []entity.Query{
		{PageSize: 1},
		{PageSize: 2},
		{Filter: filter.PK(""), PageSize: 1},
		{Filter: filter.Ne("Name", "zz"), PageSize: 1},
	} {
		var got [][2]string
		token := ""
		pages := 0
		for {
			fresh, err := entity.NewTable[Person](client)
			if err != nil {
				t.Fatal(err)
			}
			page, err := fresh.QueryPage(ctx, q, token)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, keysOf(page.Items)...)
			pages++
			if page.Next == "" {
				break
			}
			if pages > 20 {
				t.Fatalf("%+v: paging does not end", q)
			}
			token = page.Next
		}
		want := emptyKeyRows
		if !q.Filter.IsEmpty() && q.Plan().Kind != filter.TableScan {
			want = emptyKeyRows[:3]
		}
		if !slices.Equal(inServiceOrder(got, cmpKeys), want) {
			t.Errorf("%+v: got %q, want %q", q, got, want)
		}
	}
}

// TestFanOutThroughAnEmptyPartitionKey: each partition of a fan-out pages
// on its own; the empty one must not stop after its first page.
func TestFanOutThroughAnEmptyPartitionKey(t *testing.T) {
	ctx := context.Background()
	_, people := loadEmptyKeys(t)
	for _, unordered := range []bool{false, true} {
		got := keysOf(drain(t, people.QueryPartitions(ctx, []string{"x", ""}, entity.Query{PageSize: 1}, entity.FanOutOptions{Unordered: unordered})))
		if unordered {
			slices.SortFunc(got, func(a, b [2]string) int {
				if a[0] != b[0] {
					return compareStrings(a[0], b[0])
				}
				return compareStrings(a[1], b[1])
			})
		}
		if !slices.Equal(got, emptyKeyRows) {
			t.Errorf("unordered %v: got %q, want %q", unordered, got, emptyKeyRows)
		}
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
