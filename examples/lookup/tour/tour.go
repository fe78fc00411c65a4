// Package tour is the lookup step of tablekit's tour: joining in the
// client (design guide §5). Employees keep only their department's id; a
// read-through cache of the departments partition joins the department's
// name and cost center in memory, revalidated by a query of what changed.
package tour

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/patterns/lookup"
)

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

// Tour creates its own table, runs the story against it, printing what
// happens to out, and deletes it.
func Tour(ctx context.Context, env *demo.Env, out io.Writer) (err error) {
	meter := cost.NewMeter()
	client, drop, err := env.With(meter.Policy()).ScratchTable(ctx, "lookuptour")
	if err != nil {
		return err
	}
	defer func() {
		if derr := drop(); err == nil {
			err = derr
		}
	}()
	fmt.Fprintln(out, "== lookup: join in the client from a cache of small lookup data (design guide §5)")
	depts, _ := entity.NewTable[Department](client)
	emps, _ := entity.NewTable[Employee](client)
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
	d, _ := cache.Get(ctx, "departments", "d02")
	fmt.Fprintf(out, "Renamed d02; within the TTL the cache still says %q.\n", d.Name)
	before = meter.Snapshot()
	if err := cache.Refresh(ctx); err != nil {
		return err
	}
	d, _ = cache.Get(ctx, "departments", "d02")
	s := cache.Cached()
	fmt.Fprintf(out, "After Refresh: %q; the revalidation asked only for entities changed since a minute before the newest change it held: %d of %d, in %d query.\n",
		d.Name, s.Read, s.Len(), meter.Snapshot().Sub(before).Total())
	return nil
}
