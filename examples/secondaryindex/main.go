// Command secondaryindex finds the design guide's employees by email and by
// last name through secondary indexes: entries in the employee's partition,
// written in the employee's transaction (§6.1), and in other partitions,
// kept by a queue's worker (§6.2); a unique email across the whole table
// kept by the writer itself, with no worker; a unique email defended; an
// index broken by hand, checked and rebuilt — package
// patterns/secondaryindex.
//
// It runs on the storage account the environment names, creates the tables
// Staff, StaffIndexedByQueue and StaffIndexedInline and the queue
// staff-index (with its poison queue) if they do not exist, and leaves what
// it wrote there:
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/secondaryindex
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Staff      string // table: entries in the employee's partition
	ByQueue    string // table: entries in other partitions, kept by the queue
	IndexQueue string // queue, and its poison queue IndexQueue + "-poison"
	Inline     string // table: a table-wide index kept by the writer, no worker
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{Staff: "Staff", ByQueue: "StaffIndexedByQueue", IndexQueue: "staff-index", Inline: "StaffIndexedInline"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "secondaryindex example:", err)
		os.Exit(1)
	}
}

// Employee is the guide's employee: the department is the PartitionKey,
// "empid_" and the id the RowKey.
type Employee struct {
	PartitionKey string
	RowKey       string
	ETag         string
	FirstName    string
	LastName     string
	Email        string
	Age          int32
}

// indexes declares the guide's two indexes once: a unique email and a
// non-unique last name whose entries copy only the names.
func indexes(p secondaryindex.Placement) []secondaryindex.Index[Employee] {
	return []secondaryindex.Index[Employee]{
		{Name: "email", Unique: true, Placement: p,
			Key: func(e *Employee) (string, bool) { return strings.ToLower(e.Email), e.Email != "" }},
		{Name: "name", Placement: p, Properties: []string{"FirstName", "LastName"},
			Key: func(e *Employee) (string, bool) { return e.LastName, e.LastName != "" }},
	}
}

var staff = []Employee{
	{PartitionKey: "Sales", RowKey: "empid_000123", FirstName: "John", LastName: "Jones", Email: "JonesJ@contoso.com", Age: 34},
	{PartitionKey: "Sales", RowKey: "empid_000124", FirstName: "Mary", LastName: "Jones", Email: "maryj@contoso.com", Age: 41},
	{PartitionKey: "Sales", RowKey: "empid_000125", FirstName: "Tom", LastName: "Smith", Email: "toms@contoso.com", Age: 29},
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
	queues, err := acct.QueueService()
	if err != nil {
		return err
	}
	staffTable, err := entity.NewTableFromService[Employee](tables, names.Staff)
	if err != nil {
		return err
	}
	byQueue, err := entity.NewTableFromService[Employee](tables, names.ByQueue)
	if err != nil {
		return err
	}
	inlineTable, err := entity.NewTableFromService[Employee](tables, names.Inline)
	if err != nil {
		return err
	}
	p, err := eventual.New(eventual.QueuesOf(queues, names.IndexQueue), nil, eventual.Config{})
	if err != nil {
		return err
	}
	// The three tables and the queues, unless they exist: one call.
	if err := account.Provision(ctx, staffTable, byQueue, inlineTable, p); err != nil {
		return err
	}
	fmt.Fprintln(out, "== secondaryindex: employees by email and by last name (design guide §6.1, §6.2)")
	if err := samePartition(ctx, out, meter, staffTable); err != nil {
		return err
	}
	if err := otherPartition(ctx, out, p, byQueue); err != nil {
		return err
	}
	return tableWideInline(ctx, out, meter, inlineTable)
}

func samePartition(ctx context.Context, out io.Writer, meter *cost.Meter, employees *entity.Table[Employee]) error {
	set, err := secondaryindex.New(employees, secondaryindex.Config{PrimaryPrefix: "empid_"}, indexes(secondaryindex.SamePartition)...)
	if err != nil {
		return err
	}
	before := meter.Snapshot()
	for _, e := range staff {
		if err := set.Insert(ctx, &e); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "§6.1: inserted 3 employees with their entries in %d transactions; partition Sales holds:\n", meter.Snapshot().Sub(before).Total())
	if err := list(ctx, out, employees); err != nil {
		return err
	}
	e, err := set.Lookup(ctx, "email", "Sales", "jonesj@contoso.com", secondaryindex.LookupOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Email jonesj@contoso.com (a point query): %s %s %s, age %d\n", e.RowKey, e.FirstName, e.LastName, e.Age)
	var found []string
	for e, err := range set.LookupPrefix(ctx, "name", "Sales", "Jo", secondaryindex.LookupOptions{}) {
		if err != nil {
			return err
		}
		found = append(found, e.FirstName+" "+e.LastName)
	}
	fmt.Fprintf(out, "Last names starting with Jo (a range query): %s\n", strings.Join(found, ", "))

	before = meter.Snapshot()
	if _, err := set.Modify(ctx, "Sales", "empid_000123", func(e *Employee) error {
		e.Email = "john.jones@contoso.com"
		return nil
	}, entity.ModifyOptions{}); err != nil {
		return err
	}
	fmt.Fprintf(out, "John's new email: the old entry deleted, the new one inserted, with John, in %d requests (a read, a transaction).\n", meter.Snapshot().Sub(before).Total())
	_, err = set.Modify(ctx, "Sales", "empid_000124", func(e *Employee) error {
		e.Email = "John.Jones@contoso.com"
		return nil
	}, entity.ModifyOptions{})
	var ue *secondaryindex.UniqueError
	if !errors.As(err, &ue) {
		return fmt.Errorf("mary took john's email: %v", err)
	}
	fmt.Fprintf(out, "Mary asks for John's email: refused, it is held by %s; nothing written.\n", ue.Holder.RowKey)

	// Break the index by hand, check it, rebuild it.
	bags, err := entity.NewTable[entity.DynamicEntity](employees.Client())
	if err != nil {
		return err
	}
	if _, err := bags.DeleteIfExists(ctx, "Sales", "email_toms@contoso.com"); err != nil {
		return err
	}
	ghost := (&entity.DynamicEntity{PartitionKey: "Sales", RowKey: "email_ghost@contoso.com"}).
		Set(secondaryindex.PropPrimaryPK, "Sales").Set(secondaryindex.PropPrimaryRK, "empid_000999")
	if err := bags.Insert(ctx, ghost); err != nil {
		return err
	}
	fmt.Fprintln(out, "Broke the index by hand: deleted Tom's email entry, added an entry for nobody.")
	for f, err := range set.Check(ctx, secondaryindex.CheckOptions{}) {
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  check: %s %s entry %s (%s)\n", f.Index, f.Kind, f.Entry.RowKey, f.Detail)
	}
	sum, err := set.Rebuild(ctx, secondaryindex.CheckOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Rebuild scanned %d entities and repaired %d; a second check finds %d.\n", sum.Scanned, sum.Repaired, count(ctx, set))
	return nil
}

func otherPartition(ctx context.Context, out io.Writer, p *eventual.Processor, employees *entity.Table[Employee]) error {
	set, err := secondaryindex.New(employees, secondaryindex.Config{Processor: p, PrimaryPrefix: "empid_"}, indexes(secondaryindex.OtherPartition)...)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "§6.2: the same indexes in partitions email_Sales and name_Sales, kept by a queue's worker.")
	for _, e := range staff {
		if err := set.Insert(ctx, &e); err != nil {
			return err
		}
	}
	if err := drain(ctx, p); err != nil {
		return err
	}
	if _, err := set.Modify(ctx, "Sales", "empid_000123", func(e *Employee) error {
		e.Email = "john.jones@contoso.com"
		return nil
	}, entity.ModifyOptions{}); err != nil {
		return err
	}
	stale, err := set.Lookup(ctx, "email", "Sales", "jonesj@contoso.com", secondaryindex.LookupOptions{})
	if err != nil {
		return err
	}
	_, verr := set.Lookup(ctx, "email", "Sales", "jonesj@contoso.com", secondaryindex.LookupOptions{Verify: true})
	fmt.Fprintf(out, "John's new email, before the worker ran: the old email still finds %s; with Verify, not found: %v.\n", stale.RowKey, errors.Is(verr, entity.ErrNotFound))
	if err := drain(ctx, p); err != nil {
		return err
	}
	_, err = set.Lookup(ctx, "email", "Sales", "jonesj@contoso.com", secondaryindex.LookupOptions{})
	fmt.Fprintf(out, "After the worker ran, a check finds %d findings; the old email's entry is gone: %v.\n", count(ctx, set), errors.Is(err, entity.ErrNotFound))
	return nil
}

// tableWideInline keeps a unique email across the whole table with no queue
// and no worker: the Set's processor is inline, so each write writes its
// entries itself after its transaction. A write cut short between the two
// leaves an intent that Relay finishes: a service runs it at startup and
// now and then.
func tableWideInline(ctx context.Context, out io.Writer, meter *cost.Meter, employees *entity.Table[Employee]) error {
	inline, err := eventual.NewInline(eventual.Config{})
	if err != nil {
		return err
	}
	email := secondaryindex.Index[Employee]{Name: "email", Unique: true, Placement: secondaryindex.TableWide,
		Key: func(e *Employee) (string, bool) { return strings.ToLower(e.Email), e.Email != "" }}
	set, err := secondaryindex.New(employees, secondaryindex.Config{Processor: inline, PrimaryPrefix: "empid_"}, email)
	if err != nil {
		return err
	}
	if _, err := set.Relay(ctx); err != nil { // what a crashed writer left
		return err
	}
	fmt.Fprintln(out, "Table-wide, without a worker: a unique email in partitions email_<bucket>, written by the writer itself.")
	before := meter.Snapshot()
	for _, e := range staff {
		if err := set.Insert(ctx, &e); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "Inserted 3 employees and their entries in %d storage transactions, no queue.\n", meter.Snapshot().Sub(before).Total())
	if _, err := set.Modify(ctx, "Sales", "empid_000123", func(e *Employee) error {
		e.Email = "john.jones@contoso.com"
		return nil
	}, entity.ModifyOptions{}); err != nil {
		return err
	}
	e, err := set.LookupValue(ctx, "email", "john.jones@contoso.com", secondaryindex.LookupOptions{})
	if err != nil {
		return err
	}
	_, err = set.LookupValue(ctx, "email", "jonesj@contoso.com", secondaryindex.LookupOptions{})
	fmt.Fprintf(out, "John's new email finds %s as soon as Modify returns; the old one is gone: %v; a check finds %d findings.\n", e.RowKey, errors.Is(err, entity.ErrNotFound), count(ctx, set))
	return nil
}

// drain runs the queue's worker until nothing is left to do.
func drain(ctx context.Context, p *eventual.Processor) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	r, err := p.Drain(ctx)
	if err == nil && r.Poisoned > 0 {
		err = fmt.Errorf("%d index messages poisoned", r.Poisoned)
	}
	return err
}

// count is the number of findings of a check, -1 on an error.
func count(ctx context.Context, set *secondaryindex.Set[Employee]) int {
	n := 0
	for _, err := range set.Check(ctx, secondaryindex.CheckOptions{}) {
		if err != nil {
			return -1
		}
		n++
	}
	return n
}

// list prints the RowKeys of partition Sales.
func list(ctx context.Context, out io.Writer, employees *entity.Table[Employee]) error {
	for e, err := range employees.Query(ctx, entity.Query{}) {
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  %s\n", e.RowKey)
	}
	return nil
}
