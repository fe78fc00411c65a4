package indexentity_test

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/indexentity"
)

// ExampleSet is the guide's index entity in the employees' partition:
// all employees named Jones in Sales, and a rename.
func ExampleSet() {
	ctx := context.Background()
	client, drop, err := env.ScratchTable(ctx, "example")
	if err != nil {
		panic(err)
	}
	defer drop()
	emps, err := entity.NewTable[Employee](client)
	if err != nil {
		panic(err)
	}
	byName, err := indexentity.New(emps, indexentity.Config{},
		indexentity.Index[Employee]{Name: "lastname", Value: func(e *Employee) (string, bool) {
			return e.LastName, e.LastName != ""
		}})
	if err != nil {
		panic(err)
	}
	for _, e := range []Employee{
		{PartitionKey: "Sales", RowKey: "000152", FirstName: "Don", LastName: "Jones"},
		{PartitionKey: "Sales", RowKey: "000123", FirstName: "Jun", LastName: "Jones"},
		{PartitionKey: "Sales", RowKey: "000140", FirstName: "Ken", LastName: "Smith"},
	} {
		if err := byName.Insert(ctx, &e); err != nil {
			panic(err)
		}
	}
	show := func(name string) {
		fmt.Print(name, ":")
		for e, err := range byName.LookupAll(ctx, "lastname", "Sales", name, indexentity.LookupOptions{}) {
			if err != nil {
				panic(err)
			}
			fmt.Print(" ", e.RowKey, " ", e.FirstName)
		}
		fmt.Println()
	}
	show("Jones")
	// The employee, Jones's index entity and Smith's change in one
	// transaction.
	if _, err := byName.Modify(ctx, "Sales", "000152", func(e *Employee) error { e.LastName = "Smith"; return nil }, entity.ModifyOptions{}); err != nil {
		panic(err)
	}
	show("Jones")
	show("Smith")
	// Output:
	// Jones: 000123 Jun 000152 Don
	// Jones: 000123 Jun
	// Smith: 000140 Ken 000152 Don
}

// ExampleSet_Check finds a list damaged by hand and rebuilds it.
func ExampleSet_Check() {
	ctx := context.Background()
	client, drop, err := env.ScratchTable(ctx, "example")
	if err != nil {
		panic(err)
	}
	defer drop()
	emps, err := entity.NewTable[Employee](client)
	if err != nil {
		panic(err)
	}
	byName, err := indexentity.New(emps, indexentity.Config{},
		indexentity.Index[Employee]{Name: "lastname", Value: func(e *Employee) (string, bool) {
			return e.LastName, e.LastName != ""
		}})
	if err != nil {
		panic(err)
	}
	for _, rk := range []string{"000123", "000152"} {
		if err := byName.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: rk, LastName: "Jones"}); err != nil {
			panic(err)
		}
	}
	// Someone rewrites the index entity: one employee left out, one
	// who does not exist added.
	bags, err := entity.NewTable[entity.DynamicEntity](client)
	if err != nil {
		panic(err)
	}
	damaged := &entity.DynamicEntity{PartitionKey: "Sales", RowKey: "lastname_Jones", Properties: map[string]any{indexentity.PropMembers: "000123\n000999\n"}}
	if err := bags.Upsert(ctx, damaged, entity.Replace); err != nil {
		panic(err)
	}
	for f, err := range byName.Check(ctx, indexentity.CheckOptions{}) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%v %s/%s: %s\n", f.Kind, f.Primary.PartitionKey, f.Primary.RowKey, f.Detail)
	}
	sum, err := byName.Rebuild(ctx, indexentity.CheckOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("repaired %d of %d\n", sum.Repaired, sum.Drift())
	ms, err := byName.Members(ctx, "lastname", "Sales", "Jones")
	if err != nil {
		panic(err)
	}
	fmt.Println(ms)
	// Output:
	// missing Sales/000152: the primary holds "Jones" and the list does not name it
	// orphan Sales/000999: the primary is gone
	// repaired 2 of 2
	// [000123 000152]
}
