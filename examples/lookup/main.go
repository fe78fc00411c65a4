// Command lookup joins employees with their departments in the client: the
// employees keep only their department's id, and a read-through cache of
// the departments partition — small data that rarely changes — supplies its
// name and cost center from memory, revalidated by a query of what changed:
// the design guide's join in the client (§5), package patterns/lookup.
//
// It runs on the storage account the environment names, creates the table
// Company if it does not exist, and leaves what it wrote there:
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/lookup
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/patterns/lookup"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Company string // table: departments and employees
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{Company: "Company"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "lookup example:", err)
		os.Exit(1)
	}
}

// Department is lookup data, in partition "departments".
type Department struct {
	PartitionKey string
	RowKey       string // the department id
	Name         string
	CostCenter   string
}

// Employee refers to its department by id.
type Employee struct {
	PartitionKey string // the department id
	RowKey       string
	Name         string
}

// run tells the story on acct, in the resources names gives, to out.
func run(ctx context.Context, acct *account.Account, names Names, out io.Writer) error {
	// The meter counts what each step costs; a service gives one to
	// account in main, or none.
	meter := cost.NewMeter()
	acct, err := acct.WithOptions(func(o *account.Options) { o.Meter = meter })
	if err != nil {
		return err
	}
	tables, err := acct.TableService()
	if err != nil {
		return err
	}
	depts, err := entity.NewTableFromService[Department](tables, names.Company)
	if err != nil {
		return err
	}
	if err := depts.Provision(ctx); err != nil { // the table, unless it exists
		return err
	}
	emps, err := entity.NewTableFromService[Employee](tables, names.Company)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "== lookup: join in the client from a cache of small lookup data (design guide §5)")
	var all []Department
	for i, name := range []string{"Sales", "Marketing", "Research", "Support", "Legal"} {
		all = append(all, Department{PartitionKey: "departments", RowKey: fmt.Sprintf("d%02d", i), Name: name, CostCenter: fmt.Sprint("CC-", 100+i)})
	}
	if _, err := depts.BulkWrite(ctx, all, entity.BulkOptions{}); err != nil {
		return err
	}
	var staff []Employee
	for i := range 200 {
		staff = append(staff, Employee{PartitionKey: fmt.Sprintf("d%02d", i%5), RowKey: fmt.Sprintf("empid %06d", i), Name: fmt.Sprint("Employee ", i)})
	}
	if _, err := emps.BulkWrite(ctx, staff, entity.BulkOptions{}); err != nil {
		return err
	}
	cache, err := lookup.New(depts, lookup.Config{Query: entity.Query{Filter: filter.PK("departments")}, TTL: time.Minute})
	if err != nil {
		return err
	}

	before := meter.Snapshot()
	perCenter := map[string]int{}
	for _, e := range staff {
		d, err := cache.Get(ctx, "departments", e.PartitionKey)
		if err != nil {
			return err
		}
		perCenter[d.CostCenter]++
	}
	fmt.Fprintf(out, "Joined 200 employees with their departments: %d employees in CC-100, %d storage transaction (one load; joining with point queries takes 200).\n",
		perCenter["CC-100"], meter.Snapshot().Sub(before).Total())

	if err := depts.Upsert(ctx, &Department{PartitionKey: "departments", RowKey: "d02", Name: "Research & Development", CostCenter: "CC-102"}, entity.Replace); err != nil {
		return err
	}
	d, err := cache.Get(ctx, "departments", "d02")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Renamed d02; within the TTL the cache still says %q.\n", d.Name)
	before = meter.Snapshot()
	if err := cache.Refresh(ctx); err != nil {
		return err
	}
	if d, err = cache.Get(ctx, "departments", "d02"); err != nil {
		return err
	}
	s := cache.Cached()
	fmt.Fprintf(out, "After Refresh: %q; the revalidation asked only for entities changed since a minute before the newest change it held: %d of %d, in %d query.\n",
		d.Name, s.Read, s.Len(), meter.Snapshot().Sub(before).Total())
	return nil
}
