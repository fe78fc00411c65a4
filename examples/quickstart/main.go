// Command quickstart is README's quick start: a typed table of employees
// created, written, read, updated with an ETag, queried and cleaned up.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
)

type Employee struct {
	Department string    `table:"PartitionKey,pk"`
	ID         string    `table:"RowKey,rk"`
	ETag       string    `table:",etag"`
	Updated    time.Time `table:",timestamp"`
	Name       string
	Email      string `table:",omitempty"`
	Salary     float64
	Hired      time.Time // a zero time is refused: set it, or use *time.Time or omitempty
	Address    *Address  `table:",flatten"` // Address_Street, Address_City
}

type Address struct {
	Street, City string
}

func main() {
	connStr := os.Getenv("TABLEKIT_CONNECTION_STRING")
	if connStr == "" {
		connStr = "UseDevelopmentStorage=true" // Azurite on its default ports
	}
	if err := run(context.Background(), connStr, "Employees", os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, connStr, table string, out io.Writer) error {
	emps, err := entity.NewTableFromConnectionString[Employee](connStr, table, nil)
	if err != nil {
		return err
	}
	if err := emps.Provision(ctx); err != nil { // the table, unless it exists
		return err
	}

	e := &Employee{
		Department: "Sales", ID: keys.Pad(123, 6), Name: "Lisa O'Brien", Salary: 50000,
		Hired:   time.Date(2019, time.March, 1, 0, 0, 0, 0, time.UTC),
		Address: &Address{Street: "1 Main St", City: "Redmond"},
	}
	if err := emps.Insert(ctx, e); err != nil { // e.ETag and e.Updated are filled
		return err
	}
	got, err := emps.Get(ctx, "Sales", "000123") // errors.Is(err, entity.ErrNotFound) when absent
	if err != nil {
		return err
	}
	got.Salary += 1000
	if err := emps.Update(ctx, &got, entity.Merge); err != nil { // If-Match got.ETag
		return err
	}
	fmt.Fprintf(out, "%s of %s earns %.0f, lives in %s\n", got.Name, got.Department, got.Salary, got.Address.City)

	// e still holds the ETag from before the update: someone wrote first.
	e.Salary = 0
	err = emps.Update(ctx, e, entity.Merge)
	fmt.Fprintln(out, "update with a stale ETag refused:", errors.Is(err, entity.ErrPreconditionFailed))

	for emp, err := range emps.Query(ctx, entity.Query{
		Filter: filter.And(filter.PK("Sales"), filter.RowKeyPrefix("0001")),
	}) { // every page, continuation tokens followed
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "query: %s %s %s hired %s\n", emp.Department, emp.ID, emp.Name, emp.Hired.Format(time.DateOnly))
	}

	return emps.DeleteEntity(ctx, &got) // If-Match got.ETag, so the next run starts afresh
}
