package lookup_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/patterns/lookup"
)

// Employees keep only their department's id; the department's name is
// joined in memory from a cache of the departments partition.
func Example() {
	ctx := context.Background()
	client, drop, err := env.ScratchTable(ctx, "lookup")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer drop()
	table, _ := entity.NewTable[Department](client)
	for _, d := range []*Department{
		{PartitionKey: "departments", RowKey: "sales", Name: "Sales"},
		{PartitionKey: "departments", RowKey: "mkt", Name: "Marketing"},
	} {
		if err := table.Insert(ctx, d); err != nil {
			fmt.Println(err)
			return
		}
	}
	depts, err := lookup.New(table, lookup.Config{Query: entity.Query{Filter: filter.PK("departments")}, TTL: time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	employees := []struct{ Name, Dept string }{{"Jeff", "sales"}, {"Sue", "mkt"}, {"Ann", "sales"}}
	snap, err := depts.Snapshot(ctx) // one query; the join below reads memory
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range employees {
		d, _ := snap.Get("departments", e.Dept)
		fmt.Println(e.Name, "works in", d.Name)
	}

	// A rename: Refresh asks only for what changed since the load.
	if err := table.Upsert(ctx, &Department{PartitionKey: "departments", RowKey: "mkt", Name: "Marketing & PR"}, entity.Replace); err != nil {
		fmt.Println(err)
		return
	}
	if err := depts.Refresh(ctx); err != nil {
		fmt.Println(err)
		return
	}
	d, _ := depts.Get(ctx, "departments", "mkt")
	fmt.Println("Sue works in", d.Name)
	// Output:
	// Jeff works in Sales
	// Sue works in Marketing
	// Ann works in Sales
	// Sue works in Marketing & PR
}
