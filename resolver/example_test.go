package resolver_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/resolver"
)

// exampleTable creates a table on the test environment's account (Azurite
// or the account in the environment) and returns a client and a function
// that deletes it. In a program, the client comes from
// aztables.NewServiceClient…(…).NewClient(name).
func exampleTable() (*aztables.Client, func()) {
	client, drop, err := env.ScratchTable(context.Background(), "example")
	if err != nil {
		panic(err) // an example has no *testing.T; the test fails with the panic
	}
	return client, func() { _ = drop() }
}

// Writes stamp the type name; Employee has no field for it.
func ExampleSchema_Stamp() {
	schema, err := resolver.NewSchema(
		resolver.Config{},
		resolver.Register[Department]("Department.v1"),
		resolver.Register[Employee]("Employee.v2"),
	)
	if err != nil {
		panic(err)
	}
	stored, err := schema.Stamp(&Employee{PartitionKey: "Sales", RowKey: "000123", FirstName: "Jonathan"})
	if err != nil {
		panic(err)
	}
	fmt.Println(stored.RowKey, stored.Properties["EntityType"], stored.Properties["FirstName"])
	// Output: 000123 Employee.v2 Jonathan
}

// With a RowKey prefix, Go values hold ids and stored keys carry the kind.
func ExampleByRowKeyPrefix() {
	schema, err := resolver.NewSchema(
		resolver.Config{Discriminator: resolver.ByRowKeyPrefix("_")},
		resolver.Register[Department]("DEPARTMENT.v1"),
		resolver.Register[Employee]("EMPLOYEE.v2"),
	)
	if err != nil {
		panic(err)
	}
	stored, _ := schema.Stamp(&Employee{PartitionKey: "Sales", RowKey: "000123"})
	fmt.Println("stored:", stored.RowKey, stored.Properties["EntityType"])

	v, _ := schema.Decode([]byte(`{"PartitionKey":"Sales","RowKey":"DEPARTMENT_SALES","Name":"Sales"}`))
	d := v.(*Department)
	fmt.Println("read:", d.RowKey, d.Name)

	rk, _ := resolver.RowKeyOf[Department](schema, "SALES")
	f, _ := resolver.OfType[Employee](schema)
	where, _ := f.Build()
	fmt.Println("key:", rk)
	fmt.Println("employees:", where)
	// Output:
	// stored: EMPLOYEE_000123 EMPLOYEE.v2
	// read: SALES Sales
	// key: DEPARTMENT_SALES
	// employees: RowKey ge 'EMPLOYEE_' and RowKey lt 'EMPLOYEE`'
}

// An old version is read as the current Go type.
func ExampleUpgrade() {
	schema, err := resolver.NewSchema(
		resolver.Config{},
		resolver.Register[Employee]("Employee.v2"),
		resolver.Upgrade("Employee.v1", func(old *EmployeeV1) (*Employee, error) {
			first, last, _ := strings.Cut(old.Name, " ")
			return &Employee{FirstName: first, LastName: last, Email: old.Email}, nil
		}),
	)
	if err != nil {
		panic(err)
	}
	v, err := schema.Decode([]byte(`{"PartitionKey":"Sales","RowKey":"000001","EntityType":"Employee.v1","Name":"Ann Lee"}`))
	if err != nil {
		panic(err)
	}
	e := v.(*Employee)
	fmt.Printf("%s/%s: %s %s\n", e.PartitionKey, e.RowKey, e.FirstName, e.LastName)
	// Output: Sales/000001: Ann Lee
}

// One query over a partition of departments, employees and a type this
// program does not know, each row in its Go type.
func ExampleTable_Query() {
	client, cleanup := exampleTable()
	defer cleanup()
	ctx := context.Background()
	schema, _ := resolver.NewSchema(
		resolver.Config{},
		resolver.Register[Department]("Department.v1"),
		resolver.Register[Employee]("Employee.v2"),
	)
	tbl, _ := resolver.NewTable(client, schema)
	_ = tbl.Insert(ctx, &Department{PartitionKey: "Sales", RowKey: "SALES", Name: "Sales", EmployeeCount: 1})
	_ = tbl.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000123", FirstName: "Jonathan", LastName: "Jones"})
	_ = tbl.Insert(ctx, (&entity.DynamicEntity{PartitionKey: "Sales", RowKey: "I-1"}).Set("EntityType", "Invoice.v1"))

	for v, err := range tbl.Query(ctx, entity.Query{Filter: filter.PK("Sales")}) {
		if err != nil {
			panic(err)
		}
		switch e := v.(type) {
		case *Department:
			fmt.Println("department", e.Name, e.EmployeeCount)
		case *Employee:
			fmt.Println("employee", e.FirstName, e.LastName)
		case *entity.DynamicEntity:
			fmt.Println("unknown", e.Properties["EntityType"])
		}
	}
	// Output:
	// employee Jonathan Jones
	// unknown Invoice.v1
	// department Sales 1
}

// A department and its new employee, different Go types, in one
// transaction: all or nothing.
func ExampleTable_Submit() {
	client, cleanup := exampleTable()
	defer cleanup()
	ctx := context.Background()
	schema, _ := resolver.NewSchema(
		resolver.Config{},
		resolver.Register[Department]("Department.v1"),
		resolver.Register[Employee]("Employee.v2"),
	)
	tbl, _ := resolver.NewTable(client, schema)
	_ = tbl.Insert(ctx, &Department{PartitionKey: "Sales", RowKey: "SALES", Name: "Sales"})

	dept, _ := resolver.Get[Department](ctx, tbl, "Sales", "SALES")
	dept.EmployeeCount++
	b := tbl.NewBatch().
		Update(dept, entity.Merge). // conditional on the ETag read
		Insert(&Employee{PartitionKey: "Sales", RowKey: "000123", FirstName: "Jonathan"})
	if _, err := tbl.Submit(ctx, b); err != nil {
		panic(err)
	}
	dept, _ = resolver.Get[Department](ctx, tbl, "Sales", "SALES")
	fmt.Println("EmployeeCount:", dept.EmployeeCount)
	// Output: EmployeeCount: 1
}

// The guide's update through the property bag: a program that does not
// know departments adds one to EmployeeCount and merges it back, guarded by
// the ETag, starting again if another writer got there first.
func ExampleTable_Modify() {
	client, cleanup := exampleTable()
	defer cleanup()
	ctx := context.Background()
	hr, _ := resolver.NewSchema(resolver.Config{}, resolver.Register[Department]("Department.v1"))
	hrTable, _ := resolver.NewTable(client, hr)
	_ = hrTable.Insert(ctx, &Department{PartitionKey: "Sales", RowKey: "SALES", Name: "Sales", EmployeeCount: 7})

	payroll, _ := resolver.NewSchema(resolver.Config{}, resolver.Register[Employee]("Employee.v2"))
	tbl, _ := resolver.NewTable(client, payroll)
	v, err := tbl.Modify(ctx, "Sales", "SALES", func(v any) error {
		bag := v.(*entity.DynamicEntity) // Department is unknown here
		n, _ := entity.Prop[int32](bag, "EmployeeCount")
		bag.Set("EmployeeCount", n+1)
		return nil
	}, entity.ModifyOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(v.(*entity.DynamicEntity).Properties["EmployeeCount"])
	// Output: 8
}
