// Package tour is the compound-key step of tablekit's tour: the design
// guide's yearly reviews of each employee (§6.6), kept in the employee's
// partition under RowKeys made of the employee id and the year, so that
// one review is one point query and all of an employee's reviews one range
// query.
package tour

import (
	"context"
	"fmt"
	"io"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/patterns/compound"
)

// Employee is the employee entity, RowKey "empid 000123".
type Employee struct {
	PartitionKey string
	RowKey       string
	Name         string
}

// Review is one year's review of an employee, RowKey "empid 000123 2012".
type Review struct {
	PartitionKey  string
	RowKey        string
	ManagerRating int32
	PeerRating    int32
	Comments      string
}

// Tour creates its own table, runs the story against it, printing what
// happens to out, and deletes it.
func Tour(ctx context.Context, env *demo.Env, out io.Writer) (err error) {
	meter := cost.NewMeter()
	client, drop, err := env.With(meter.Policy()).ScratchTable(ctx, "compoundtour")
	if err != nil {
		return err
	}
	defer func() {
		if derr := drop(); err == nil {
			err = derr
		}
	}()
	fmt.Fprintln(out, "== compound: an employee's reviews by year under one RowKey prefix (design guide §6.6)")
	employees, _ := entity.NewTable[Employee](client)
	table, _ := entity.NewTable[Review](client)
	reviews, err := compound.New(table, compound.Config[int64, int64]{Prefix: "empid", Parent: compound.Int(6), Child: compound.Int(4)})
	if err != nil {
		return err
	}
	for _, emp := range []int64{122, 123, 124} {
		pk, _ := reviews.ParentKey(emp)
		b := employees.NewBatch().Insert(&Employee{PartitionKey: "Sales", RowKey: pk, Name: fmt.Sprint("Employee ", emp)})
		for year := int64(2011); year <= 2014; year++ {
			r := Review{ManagerRating: int32(year-2010) + int32(emp-122), PeerRating: 3, Comments: fmt.Sprint("review of ", year)}
			if err := reviews.Stamp(&r, "Sales", emp, year); err != nil {
				return err
			}
			b.Insert(&r)
		}
		if _, err := employees.Submit(ctx, b); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "Wrote 3 employees of Sales, each with 4 yearly reviews, in one transaction per employee.")
	key, _ := reviews.Key(123, 2012)
	from, to, _ := reviews.Range(123)
	fmt.Fprintf(out, "Review 2012 of employee 123 is RowKey %q; all of 123's reviews are RowKey ge %q and lt %q.\n", key, from, to)

	before := meter.Snapshot()
	for r, err := range reviews.Children(ctx, "Sales", 123, entity.Query{Select: []string{"ManagerRating", "PeerRating", "Comments"}}) {
		if err != nil {
			return err
		}
		_, year, err := reviews.Parse(r.RowKey)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "   %d: manager %d, peers %d, %q\n", year, r.ManagerRating, r.PeerRating, r.Comments)
	}
	fmt.Fprintf(out, "Those reviews cost %d storage transaction (one range query).\n", meter.Snapshot().Sub(before).Total())

	before = meter.Snapshot()
	r, err := reviews.Get(ctx, "Sales", 124, 2013)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Review 2013 of employee 124: manager %d, by %d point query.\n", r.ManagerRating, meter.Snapshot().Sub(before).Total())
	n := 0
	for _, err := range reviews.ChildrenBetween(ctx, "Sales", 122, 2012, 2014, entity.Query{}) {
		if err != nil {
			return err
		}
		n++
	}
	fmt.Fprintf(out, "Employee 122's reviews from 2012 up to 2014: %d.\n", n)
	if _, err := reviews.Key(1234567, 2012); err != nil {
		fmt.Fprintf(out, "A seven-digit id is refused before any request: %v\n", err)
	}
	return nil
}
