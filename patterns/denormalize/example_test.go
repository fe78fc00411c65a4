package denormalize_test

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/denormalize"
)

// The guide's department, which keeps its manager's name and phone so that
// one point query shows it all; the manager's change reaches it in the
// same transaction.
func Example() {
	ctx := context.Background()
	client, drop, err := env.ScratchTable(ctx, "denormalize")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer drop()
	employees, _ := entity.NewTable[Employee](client)
	departments, _ := entity.NewTable[Department](client)
	managers, err := denormalize.New(departments, employees, denormalize.Config{},
		denormalize.Relation[Department, Employee]{
			Name:   "manager",
			Fields: []denormalize.Field{{From: "Name", To: "ManagerName"}, {From: "Phone", To: "ManagerPhone"}},
			Source: func(d *Department) (denormalize.Key, bool) {
				return denormalize.Key{PartitionKey: d.PartitionKey, RowKey: d.ManagerID}, d.ManagerID != ""
			},
			Targets: func(e *Employee) denormalize.Targets {
				return denormalize.Targets{Keys: []denormalize.Key{{PartitionKey: e.PartitionKey, RowKey: "dept Sales"}}}
			},
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	jeff := Employee{PartitionKey: "Sales", RowKey: "empid 000123", Name: "Jones, Jeff", Phone: "425-555-0101"}
	if err := managers.InsertSource(ctx, &jeff); err != nil {
		fmt.Println(err)
		return
	}
	if err := managers.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: "dept Sales", ManagerID: jeff.RowKey}); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := managers.ModifySource(ctx, "Sales", jeff.RowKey, func(e *Employee) error {
		e.Phone = "425-555-0199"
		return nil
	}, entity.ModifyOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	d, err := departments.Get(ctx, "Sales", "dept Sales") // one point query
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s is managed by %s, phone %s\n", d.PartitionKey, d.ManagerName, d.ManagerPhone)
	// Output:
	// Sales is managed by Jones, Jeff, phone 425-555-0199
}
