package resolver_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/resolver"
)

// TestPagingThroughAnEmptyPartitionKey: the resolver pages through
// entity's raw pages, so rows in the empty partition, and a row with an
// empty RowKey, are all read, page by page and from stored tokens.
func TestPagingThroughAnEmptyPartitionKey(t *testing.T) {
	ctx := context.Background()
	schema, err := resolver.NewSchema(resolver.Config{}, resolver.Register[Department]("Department.v1"), resolver.Register[Project]("Project.v1"))
	if err != nil {
		t.Fatal(err)
	}
	client := env.Table(t)
	tbl := newTable(t, client, schema)
	want := []string{"/a", "/b", "/c", "x/", "x/y"}
	for i, k := range [][2]string{{"", "a"}, {"", "b"}, {"", "c"}, {"x", ""}, {"x", "y"}} {
		var v any = &Department{PartitionKey: k[0], RowKey: k[1], Name: "d"}
		if i%2 == 1 {
			v = &Project{PartitionKey: k[0], RowKey: k[1], Title: "p", Due: due()}
		}
		if err := tbl.Insert(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	keyOf := func(v any) string {
		s, err := entity.SystemOf(v)
		if err != nil {
			t.Fatal(err)
		}
		return s.PartitionKey + "/" + s.RowKey
	}

	var got []string
	for v, err := range tbl.Query(ctx, entity.Query{PageSize: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, keyOf(v))
		if len(got) > 10 {
			t.Fatal("the query does not end")
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("Query: got %q, want %q", got, want)
	}

	got = nil
	token := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		page, err := newTable(t, client, schema).QueryPage(ctx, entity.Query{PageSize: 2}, token)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range page.Items {
			got = append(got, keyOf(v))
		}
		if token = page.Next; token == "" {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("QueryPage: got %q, want %q", got, want)
	}
}
