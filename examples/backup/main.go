// Command backup exports a table of orders to a gzip backup that keeps
// every EDM type, restores it into another table byte for byte, writes one
// customer as Azure Storage Explorer's CSV, and migrates the table's
// Order.v1 rows to Order.v2 in place: packages backup and resolver.
//
// It runs on the storage account the environment names, creates the tables
// OrderHistory and OrderHistoryRestored if they do not exist, and leaves
// what it wrote there; the backup itself stays in memory (backup.ExportBlob
// writes one to a block blob, resumably):
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/backup
package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/resolver"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Orders   string // table
	Restored string // table
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{Orders: "OrderHistory", Restored: "OrderHistoryRestored"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "backup example:", err)
		os.Exit(1)
	}
}

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

const customers, ordersEach = 10, 100

// run tells the story on acct, in the resources names gives, to out.
func run(ctx context.Context, acct *account.Account, names Names, out io.Writer) error {
	tables, err := acct.TableService()
	if err != nil {
		return err
	}
	srcTable, err := entity.NewTableFromService[entity.DynamicEntity](tables, names.Orders)
	if err != nil {
		return err
	}
	dstTable, err := entity.NewTableFromService[entity.DynamicEntity](tables, names.Restored)
	if err != nil {
		return err
	}
	if err := account.Provision(ctx, srcTable, dstTable); err != nil {
		return err
	}
	fmt.Fprintln(out, "== backup: export, restore, Storage Explorer CSV, migration in place")
	v1, err := resolver.NewSchema(resolver.Config{}, resolver.Register[OrderV1]("Order.v1"))
	if err != nil {
		return err
	}
	old, err := resolver.NewTable(srcTable.Client(), v1)
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

	src := srcTable
	var file bytes.Buffer
	var lastToken string
	sum, err := backup.Export(ctx, src, &file, backup.ExportOptions{
		SegmentEntities: 250,
		Ranges:          []backup.Range{{To: "cust-005"}, {From: "cust-005"}},
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

	dst := dstTable
	isum, err := backup.Import(ctx, dst, bytes.NewReader(file.Bytes()), backup.ImportOptions{Mode: backup.Insert, SegmentEntities: 250,
		Progress: func(p backup.Progress) { fmt.Fprintf(out, "   import: %5d entities\n", p.Entities) }})
	if err != nil {
		return err
	}
	var again bytes.Buffer
	if _, err := backup.Export(ctx, dst, &again, backup.ExportOptions{SegmentEntities: 250}); err != nil {
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
	orders, err := resolver.NewTable(srcTable.Client(), v2)
	if err != nil {
		return err
	}
	rep, err := orders.Migrate(ctx, resolver.MigrateOptions{PageSize: 250, Progress: func(r resolver.MigrateReport) {
		fmt.Fprintf(out, "   migrate: %5d read, %5d upgraded\n", r.Read, r.Upgraded)
	}})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Migrated Order.v1 to Order.v2 in place: %d upgraded, %d already current.\n", rep.Upgraded, rep.Current)
	rep, err = orders.Migrate(ctx, resolver.MigrateOptions{PageSize: 250})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Run again: %d upgraded, %d already current.\n", rep.Upgraded, rep.Current)
	v, err := orders.Get(ctx, "cust-004", "000450")
	if err != nil {
		return err
	}
	o := v.(*Order)
	fmt.Fprintf(out, "Order 000450 now reads First %q, Last %q, Total %.1f.\n", o.First, o.Last, o.Total)
	return nil
}
