package resolver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/resolver"
)

// TestQuoteInKindAndSeparator: a kind and a separator with a single quote
// (the RowKey prefix O'Emp followed by two quotes) work in a transaction, a point read, a
// prefix query and a Modify, because every write goes through entity's
// own requests; the stored RowKeys are read back with a raw query.
func TestQuoteInKindAndSeparator(t *testing.T) {
	ctx := context.Background()
	s, err := resolver.NewSchema(resolver.Config{Discriminator: resolver.ByRowKeyPrefix("''")},
		resolver.Register[Employee]("O'Emp"), resolver.Register[Department]("D'ept"))
	if err != nil {
		t.Fatal(err)
	}
	client := env.Table(t)
	tbl := newTable(t, client, s)
	jo := &Employee{PartitionKey: "Sales", RowKey: "0'1", FirstName: "Jo"}
	dept := &Department{PartitionKey: "Sales", RowKey: "S'ALES", Name: "Sales"}
	if _, err := tbl.Submit(ctx, tbl.NewBatch().Insert(jo).Insert(dept)); err != nil {
		t.Fatal(err)
	}
	stored, err := resolver.RowKeyOf[Employee](s, "0'1")
	if err != nil || stored != "O'Emp''0'1" {
		t.Fatalf("RowKeyOf = %q, %v", stored, err)
	}
	if _, err := tbl.Modify(ctx, "Sales", stored, func(v any) error {
		v.(*Employee).FirstName = "Joan"
		return nil
	}, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := resolver.Get[Employee](ctx, tbl, "Sales", "0'1")
	if err != nil || got.FirstName != "Joan" {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	var names []string
	for v, err := range tbl.Query(ctx, entity.Query{Filter: filter.PK("Sales")}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, fmt.Sprintf("%T", v))
	}
	slices.Sort(names)
	if fmt.Sprint(names) != "[*resolver_test.Department *resolver_test.Employee]" {
		t.Errorf("query: %v", names)
	}
	// The stored keys, read with the raw client.
	var rks []string
	pager := client.NewListEntitiesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Entities {
			var e map[string]any
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
			rks = append(rks, e["RowKey"].(string))
		}
	}
	slices.Sort(rks)
	if fmt.Sprint(rks) != "[D'ept''S'ALES O'Emp''0'1]" {
		t.Errorf("stored RowKeys %q", rks)
	}
}
