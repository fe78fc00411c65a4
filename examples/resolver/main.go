// Command resolver keeps a company's departments and employees — several
// entity types — in one partition of one table: told apart, versioned and
// upgraded, read in one pass, changed together in transactions and through
// a property bag by a program that knows only some of the types (design
// guide §5, §7), package resolver.
//
// It runs on the storage account the environment names, creates the table
// HumanResources if it does not exist, and leaves what it wrote there:
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/resolver
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/resolver"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	HR string // table
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{HR: "HumanResources"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "resolver example:", err)
		os.Exit(1)
	}
}

// Department is a department of the company, Department.v1.
type Department struct {
	PartitionKey  string // the department's name: a department and its employees share a partition
	RowKey        string
	ETag          string
	Name          string
	Manager       string
	EmployeeCount int32
}

// Employee is the current version of an employee, Employee.v2.
type Employee struct {
	PartitionKey string
	RowKey       string // the employee id, zero-padded so that ids sort
	ETag         string
	FirstName    string
	LastName     string
	Email        string `table:",omitempty"`
}

// EmployeeV1 is how the previous release stored employees, Employee.v1:
// one Name field.
type EmployeeV1 struct {
	PartitionKey string
	RowKey       string
	Name         string
}

// upgradeEmployee turns an Employee.v1 into the current Employee.
func upgradeEmployee(old *EmployeeV1) (*Employee, error) {
	first, last, _ := strings.Cut(old.Name, " ")
	return &Employee{FirstName: first, LastName: last}, nil
}

// run tells the story on acct, in the resources names gives, to out.
func run(ctx context.Context, acct *account.Account, names Names, out io.Writer) error {
	tables, err := acct.TableService()
	if err != nil {
		return err
	}
	hr, err := entity.NewTableFromService[entity.DynamicEntity](tables, names.HR)
	if err != nil {
		return err
	}
	if err := hr.Provision(ctx); err != nil { // the table, unless it exists
		return err
	}
	fmt.Fprintln(out, "== resolver: departments and employees in one partition (design guide §5, §7)")
	if err := byProperty(ctx, hr.Client(), out); err != nil {
		return err
	}
	return byPrefix(ctx, hr.Client(), out)
}

func byProperty(ctx context.Context, client *aztables.Client, out io.Writer) error {
	// 1. The previous release stored employees as Employee.v1.
	oldSchema, err := resolver.NewSchema(resolver.Config{}, resolver.Register[EmployeeV1]("Employee.v1"))
	if err != nil {
		return err
	}
	oldApp, err := resolver.NewTable(client, oldSchema)
	if err != nil {
		return err
	}
	if err := oldApp.Insert(ctx, &EmployeeV1{PartitionKey: "Sales", RowKey: "000001", Name: "Ann Lee"}); err != nil {
		return err
	}
	fmt.Fprintln(out, "1. The previous release stored employee 000001 as Employee.v1 {Name: \"Ann Lee\"}.")

	// This release: departments and employees, told apart by the
	// EntityType property, with an upgrade from Employee.v1.
	schema, err := resolver.NewSchema(
		resolver.Config{WriteBackUpgrades: true},
		resolver.Register[Department]("Department.v1"),
		resolver.Register[Employee]("Employee.v2"),
		resolver.Upgrade("Employee.v1", upgradeEmployee),
	)
	if err != nil {
		return err
	}
	hr, err := resolver.NewTable(client, schema)
	if err != nil {
		return err
	}

	// 2. A department and its employees, written atomically.
	sales := &Department{PartitionKey: "Sales", RowKey: "SALES", Name: "Sales", Manager: "Jonathan Jones", EmployeeCount: 3}
	b := hr.NewBatch().
		Insert(sales).
		Insert(&Employee{PartitionKey: "Sales", RowKey: "000123", FirstName: "Jonathan", LastName: "Jones", Email: "jonesj@contoso.com"}).
		Insert(&Employee{PartitionKey: "Sales", RowKey: "000124", FirstName: "Mary", LastName: "Smith"})
	if _, err := hr.Submit(ctx, b); err != nil {
		return err
	}
	fmt.Fprintln(out, "2. One transaction inserted the Sales department and employees 000123 and 000124: two Go types, all or nothing.")
	stored, err := hr.Bags().Get(ctx, "Sales", "000123")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "   Employee has no EntityType field; the stored entity has EntityType = %q.\n", stored.Properties["EntityType"])

	// Another application keeps its own type in the same partition.
	invoice := (&entity.DynamicEntity{PartitionKey: "Sales", RowKey: "INV-7"}).Set("EntityType", "Invoice.v3").Set("Total", 1200.5)
	if err := hr.Bags().Insert(ctx, invoice); err != nil {
		return err
	}

	// 3. One query over the partition, each row in its own Go type.
	fmt.Fprintln(out, "3. One query over partition Sales, each row decoded into its type:")
	if err := list(ctx, hr, out, "Sales"); err != nil {
		return err
	}
	stored, err = hr.Bags().Get(ctx, "Sales", "000001")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "   The read wrote Ann's upgrade back, guarded by her ETag: she is now stored as %q.\n", stored.Properties["EntityType"])

	// 4. Hiring: the department's count and the new employee change
	// together; a hire that fails changes nothing.
	sales, err = resolver.Get[Department](ctx, hr, "Sales", "SALES")
	if err != nil {
		return err
	}
	sales.EmployeeCount++
	if _, err := hr.Submit(ctx, hr.NewBatch().Update(sales, entity.Merge).Insert(&Employee{PartitionKey: "Sales", RowKey: "000125", FirstName: "Cy", LastName: "Dee"})); err != nil {
		return err
	}
	fmt.Fprintf(out, "4. Hired 000125: EmployeeCount %d and the new employee in one transaction, guarded by the department's ETag.\n", sales.EmployeeCount)
	sales.EmployeeCount++
	_, err = hr.Submit(ctx, hr.NewBatch().Update(sales, entity.Merge).Insert(&Employee{PartitionKey: "Sales", RowKey: "000123", FirstName: "Jon", LastName: "Again"}))
	var te *entity.TransactionError
	if !errors.As(err, &te) || !errors.Is(err, entity.ErrAlreadyExists) {
		return fmt.Errorf("hiring an existing employee: got %v, want a failed transaction", err)
	}
	sales, err = resolver.Get[Department](ctx, hr, "Sales", "SALES")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "   Hiring 000123 again failed at operation %d (%s): the whole transaction was refused, EmployeeCount is still %d.\n", te.Index, te.Code, sales.EmployeeCount)

	// 5. A program that knows employees but not departments updates the
	// department through its property bag, while HR writes it too.
	payrollSchema, err := resolver.NewSchema(resolver.Config{}, resolver.Register[Employee]("Employee.v2"))
	if err != nil {
		return err
	}
	payroll, err := resolver.NewTable(client, payrollSchema)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "5. Payroll does not know Department: it reads the department as a property bag, adds one to EmployeeCount and merges it back, guarded by its ETag.")
	attempt := 0
	v, err := payroll.Modify(ctx, "Sales", "SALES", func(v any) error {
		attempt++
		bag := v.(*entity.DynamicEntity)
		n, _ := entity.Prop[int32](bag, "EmployeeCount")
		fmt.Fprintf(out, "   attempt %d: read EmployeeCount = %d\n", attempt, n)
		if attempt == 1 {
			// HR writes the department between payroll's read and merge.
			if _, err := hr.Modify(ctx, "Sales", "SALES", func(v any) error {
				v.(*Department).EmployeeCount++
				return nil
			}, entity.ModifyOptions{Mode: entity.Replace}); err != nil {
				return err
			}
			fmt.Fprintln(out, "   meanwhile HR writes the department: EmployeeCount one more, and a new ETag")
		}
		bag.Set("EmployeeCount", n+1)
		return nil
	}, entity.ModifyOptions{})
	if err != nil {
		return err
	}
	n, _ := entity.Prop[int32](v.(*entity.DynamicEntity), "EmployeeCount")
	fmt.Fprintf(out, "   the first merge was refused (its ETag was stale); the retry merged EmployeeCount = %d after %d attempts: no update lost.\n", n, attempt)
	return nil
}

// list prints the partition, with a type switch over the rows.
func list(ctx context.Context, tbl *resolver.Table, out io.Writer, partition string) error {
	for v, err := range tbl.Query(ctx, entity.Query{Filter: filter.PK(partition)}) {
		if err != nil {
			return err
		}
		switch e := v.(type) {
		case *Department:
			fmt.Fprintf(out, "   *Department %-7s %s, managed by %s, %d employees\n", e.RowKey, e.Name, e.Manager, e.EmployeeCount)
		case *Employee:
			fmt.Fprintf(out, "   *Employee   %-7s %s %s\n", e.RowKey, e.FirstName, e.LastName)
		case *entity.DynamicEntity:
			fmt.Fprintf(out, "   property bag %-6s of unknown type %v, Total %v\n", e.RowKey, e.Properties["EntityType"], e.Properties["Total"])
		}
	}
	return nil
}

// byPrefix tells the types apart by a RowKey prefix instead:
// DEPARTMENT_MARKETING and EMPLOYEE_000200.
func byPrefix(ctx context.Context, client *aztables.Client, out io.Writer) error {
	schema, err := resolver.NewSchema(
		resolver.Config{Discriminator: resolver.ByRowKeyPrefix("_")},
		resolver.Register[Department]("DEPARTMENT.v1"),
		resolver.Register[Employee]("EMPLOYEE.v2"),
	)
	if err != nil {
		return err
	}
	tbl, err := resolver.NewTable(client, schema)
	if err != nil {
		return err
	}
	b := tbl.NewBatch().
		Insert(&Department{PartitionKey: "Marketing", RowKey: "MARKETING", Name: "Marketing", Manager: "Mary Smith", EmployeeCount: 2}).
		Insert(&Employee{PartitionKey: "Marketing", RowKey: "000200", FirstName: "Bo", LastName: "Chen"}).
		Insert(&Employee{PartitionKey: "Marketing", RowKey: "000201", FirstName: "Di", LastName: "Eve"})
	if _, err := tbl.Submit(ctx, b); err != nil {
		return err
	}
	fmt.Fprintln(out, "6. With RowKey prefixes, the Go values hold ids; the stored keys carry the kind:")
	var keys []string
	for bag, err := range tbl.Bags().Query(ctx, entity.Query{Filter: filter.PK("Marketing")}) {
		if err != nil {
			return err
		}
		keys = append(keys, bag.RowKey)
	}
	fmt.Fprintf(out, "   stored RowKeys: %s\n", strings.Join(keys, ", "))
	employees, err := resolver.OfType[Employee](schema)
	if err != nil {
		return err
	}
	q := entity.Query{Filter: filter.And(filter.PK("Marketing"), employees)}
	fmt.Fprintf(out, "   employees only, a %v: %s\n", q.Plan().Kind, must(q.Filter.Build()))
	for e, err := range resolver.Query[Employee](ctx, tbl, q) {
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "   *Employee %s %s %s\n", e.RowKey, e.FirstName, e.LastName)
	}
	return nil
}

func must(s string, err error) string {
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return s
}
