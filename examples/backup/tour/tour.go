// Package tour is the backup, restore and migration step of tablekit's
// tour: a table of orders exported to a gzip backup with progress, restored
// into another table, moved through Storage Explorer's CSV, and its v1 rows
// migrated to v2 in place.
package tour

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/resolver"
)

// OrderV1 is how the first release stored an order: the customer's name in
// one field.
type OrderV1 struct {
	PartitionKey string // the customer id
	RowKey       string // the order number
	Customer     string
	Total        float64
	Placed       time.Time
}

// Order is the current version, Order.v2: the name split.
type Order struct {
	PartitionKey, RowKey string
	ETag                 string
	First, Last          string
	Total                float64
	Placed               time.Time
}

func upgradeOrder(old *OrderV1) (*Order, error) {
	first, last, _ := strings.Cut(old.Customer, " ")
	return &Order{First: first, Last: last, Total: old.Total, Placed: old.Placed}, nil
}

const customers, ordersEach = 20, 150

// Tour runs the step against env, printing to out; its tables are deleted
// at the end.
func Tour(ctx context.Context, env *demo.Env, out io.Writer) (err error) {
	srcClient, dropSrc, err := env.ScratchTable(ctx, "ordersv1")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, dropSrc()) }()
	dstClient, dropDst, err := env.ScratchTable(ctx, "ordersrestored")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, dropDst()) }()
	v1, err := resolver.NewSchema(resolver.Config{}, resolver.Register[OrderV1]("Order.v1"))
	if err != nil {
		return err
	}
	old, err := resolver.NewTable(srcClient, v1)
	if err != nil {
		return err
	}
	placed := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for c := range customers {
		b := old.NewBatch()
		for i := range ordersEach {
			b.Insert(&OrderV1{PartitionKey: fmt.Sprintf("cust-%03d", c), RowKey: fmt.Sprintf("%06d", c*ordersEach+i),
				Customer: fmt.Sprintf("Ann%d O'Brien", c), Total: float64(i) + 0.5, Placed: placed.Add(time.Duration(i) * time.Hour)})
			if b.Len() == 100 || i == ordersEach-1 {
				if _, err := old.Submit(ctx, b); err != nil {
					return err
				}
				b = old.NewBatch()
			}
		}
	}
	fmt.Fprintf(out, "Stored %d orders of %d customers as Order.v1.\n", customers*ordersEach, customers)

	src, err := entity.NewTable[entity.DynamicEntity](srcClient)
	if err != nil {
		return err
	}
	var file bytes.Buffer
	var lastToken string
	sum, err := backup.Export(ctx, src, &file, backup.ExportOptions{
		SegmentEntities: 1000,
		Ranges:          []backup.Range{{To: "cust-010"}, {From: "cust-010"}},
		Checkpoint:      func(c backup.Checkpoint) error { lastToken = c.Token; return nil },
		Progress: func(p backup.Progress) {
			fmt.Fprintf(out, "   export: %5d entities, %6d bytes\n", p.Entities, p.Bytes)
		},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Exported %d entities in two ranges read in parallel: %d bytes of gzip JSON Lines (resume token of %d characters kept at each checkpoint).\n",
		sum.Entities, sum.Bytes, len(lastToken))

	dst, err := entity.NewTable[entity.DynamicEntity](dstClient)
	if err != nil {
		return err
	}
	isum, err := backup.Import(ctx, dst, bytes.NewReader(file.Bytes()), backup.ImportOptions{Mode: backup.Insert, SegmentEntities: 1000,
		Progress: func(p backup.Progress) { fmt.Fprintf(out, "   import: %5d entities\n", p.Entities) }})
	if err != nil {
		return err
	}
	var again bytes.Buffer
	if _, err := backup.Export(ctx, dst, &again, backup.ExportOptions{SegmentEntities: 1000}); err != nil {
		return err
	}
	fmt.Fprintf(out, "Restored %d entities into another table; its export is byte-identical: %v.\n", isum.Written, bytes.Equal(file.Bytes(), again.Bytes()))

	var csv bytes.Buffer
	if err := backup.ExportCSV(ctx, src, &csv, filter.PK("cust-000")); err != nil {
		return err
	}
	head, _, _ := strings.Cut(csv.String(), "\n")
	fmt.Fprintf(out, "Storage Explorer CSV of one customer: %d bytes, header %s\n", csv.Len(), head)

	v2, err := resolver.NewSchema(resolver.Config{}, resolver.Register[Order]("Order.v2"), resolver.Upgrade("Order.v1", upgradeOrder))
	if err != nil {
		return err
	}
	orders, err := resolver.NewTable(srcClient, v2)
	if err != nil {
		return err
	}
	rep, err := orders.Migrate(ctx, resolver.MigrateOptions{PageSize: 1000, Progress: func(r resolver.MigrateReport) {
		fmt.Fprintf(out, "   migrate: %5d read, %5d upgraded\n", r.Read, r.Upgraded)
	}})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Migrated Order.v1 to Order.v2 in place: %d upgraded, %d already current.\n", rep.Upgraded, rep.Current)
	rep, err = orders.Migrate(ctx, resolver.MigrateOptions{PageSize: 1000})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Run again: %d upgraded, %d already current.\n", rep.Upgraded, rep.Current)
	v, err := orders.Get(ctx, "cust-003", "000450")
	if err != nil {
		return err
	}
	o := v.(*Order)
	fmt.Fprintf(out, "Order 000450 now reads First %q, Last %q, Total %.1f.\n", o.First, o.Last, o.Total)
	return nil
}
