// Command indexentity finds "all employees named Jones in Sales" through
// index entities — a list of the keys of every employee sharing a value —
// kept in the employees' partition in their own transaction, in another
// partition, or in a blob, the last two by a queue's worker; a rename that
// changes three entities in one transaction; a list damaged by hand, found
// and rebuilt: the design guide's index entities pattern (§6.4), package
// patterns/indexentity.
//
// It runs on the storage account the environment names, creates the table
// Personnel, the blob container personnel-index and the queue
// personnel-index (with its poison queue) if they do not exist, and leaves
// what it wrote there:
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/indexentity
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/indexentity"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Personnel  string // table
	Lists      string // blob container of the lists kept in blobs
	IndexQueue string // queue, and its poison queue IndexQueue + "-poison"
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{Personnel: "Personnel", Lists: "personnel-index", IndexQueue: "personnel-index"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "indexentity example:", err)
		os.Exit(1)
	}
}

// Employee is the guide's employee: department and id as its keys.
type Employee struct {
	PartitionKey string // department
	RowKey       string // employee id
	ETag         string
	FirstName    string
	LastName     string
	City         string
}

// The three indexes, one per storage option of the guide.
var indexes = []indexentity.Index[Employee]{
	{Name: "lastname", Placement: indexentity.SamePartition, Value: func(e *Employee) (string, bool) { return e.LastName, e.LastName != "" }},
	{Name: "city", Placement: indexentity.OtherPartition, Value: func(e *Employee) (string, bool) { return e.City, e.City != "" }},
	{Name: "firstname", Placement: indexentity.Blob, Value: func(e *Employee) (string, bool) { return e.FirstName, e.FirstName != "" }},
}

// run tells the story on acct, in the resources names gives, to out.
func run(ctx context.Context, acct *account.Account, names Names, out io.Writer) error {
	tables, err := acct.TableService()
	if err != nil {
		return err
	}
	queues, err := acct.QueueService()
	if err != nil {
		return err
	}
	emps, err := entity.NewTableFromService[Employee](tables, names.Personnel)
	if err != nil {
		return err
	}
	blobs, err := acct.Container(names.Lists)
	if err != nil {
		return err
	}
	p, err := eventual.New(eventual.QueuesOf(queues, names.IndexQueue), nil, eventual.Config{})
	if err != nil {
		return err
	}
	// The table, the queues and the lists' container, unless they exist.
	if err := account.Provision(ctx, emps, p, account.ContainerProvisioner(blobs)); err != nil {
		return err
	}
	s, err := indexentity.New(emps, indexentity.Config{Processor: p, Blobs: blobs}, indexes...)
	if err != nil {
		return err
	}
	t := &story{out: out, emps: emps, s: s, p: p}
	fmt.Fprintln(out, "== indexentity: all employees named Jones (design guide §6.4)")
	for _, step := range []func(context.Context) error{t.guide, t.rename, t.elsewhere, t.drift} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

type story struct {
	out  io.Writer
	emps *entity.Table[Employee]
	s    *indexentity.Set[Employee]
	p    *eventual.Processor
}

func (t *story) guide(ctx context.Context) error {
	fmt.Fprintln(t.out, "Option 2: an index entity per last name in the employees' partition, written in their transaction.")
	for _, e := range []Employee{
		{PartitionKey: "Sales", RowKey: "000152", FirstName: "Don", LastName: "Jones", City: "Seattle"},
		{PartitionKey: "Sales", RowKey: "000123", FirstName: "Jun", LastName: "Jones", City: "Redmond"},
		{PartitionKey: "Sales", RowKey: "000140", FirstName: "Ken", LastName: "Smith", City: "Seattle"},
		{PartitionKey: "Sales", RowKey: "000161", FirstName: "Don", LastName: "Hall", City: "Seattle"},
	} {
		if err := t.s.Insert(ctx, &e); err != nil {
			return err
		}
	}
	bags, err := entity.NewTable[entity.DynamicEntity](t.emps.Client())
	if err != nil {
		return err
	}
	ixe, err := bags.Get(ctx, "Sales", "lastname_Jones")
	if err != nil {
		return err
	}
	fmt.Fprintf(t.out, "  index entity Sales/%s: %s = %q\n", ixe.RowKey, indexentity.PropMembers, ixe.Properties[indexentity.PropMembers])
	return t.lookup(ctx, "lastname", "Jones")
}

func (t *story) lookup(ctx context.Context, index, value string) error {
	var found []string
	for e, err := range t.s.LookupAll(ctx, index, "Sales", value, indexentity.LookupOptions{}) {
		if err != nil {
			return err
		}
		found = append(found, fmt.Sprintf("%s %s %s (%s)", e.RowKey, e.FirstName, e.LastName, e.City))
	}
	fmt.Fprintf(t.out, "  %s = %s in Sales: %s\n", index, value, strings.Join(found, "; "))
	return nil
}

func (t *story) rename(ctx context.Context) error {
	fmt.Fprintln(t.out, "The rename: the employee, Jones's index entity and Smith's in one transaction, on their ETags.")
	if _, err := t.s.Modify(ctx, "Sales", "000152", func(e *Employee) error { e.LastName = "Smith"; return nil }, entity.ModifyOptions{}); err != nil {
		return err
	}
	if err := t.lookup(ctx, "lastname", "Jones"); err != nil {
		return err
	}
	return t.lookup(ctx, "lastname", "Smith")
}

func (t *story) elsewhere(ctx context.Context) error {
	fmt.Fprintln(t.out, "Options 3 and 1: cities in partition city_Sales, first names in blobs, kept through a queue.")
	ms, err := t.s.Members(ctx, "city", "Sales", "Seattle")
	if err != nil {
		return err
	}
	fmt.Fprintf(t.out, "  before the worker ran, Seattle's list names %d employees\n", len(ms))
	if err := t.drain(ctx); err != nil {
		return err
	}
	if err := t.lookup(ctx, "city", "Seattle"); err != nil {
		return err
	}
	return t.lookup(ctx, "firstname", "Don")
}

// drain runs the queue's worker until nothing is left to do.
func (t *story) drain(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	r, err := t.p.Drain(ctx)
	if err == nil && r.Poisoned > 0 {
		err = fmt.Errorf("%d index messages poisoned", r.Poisoned)
	}
	return err
}

func (t *story) drift(ctx context.Context) error {
	fmt.Fprintln(t.out, "Drift: Smith's index entity deleted by hand; Check finds it, Rebuild repairs it.")
	bags, err := entity.NewTable[entity.DynamicEntity](t.emps.Client())
	if err != nil {
		return err
	}
	if _, err := bags.DeleteIfExists(ctx, "Sales", "lastname_Smith"); err != nil {
		return err
	}
	for f, err := range t.s.Check(ctx, indexentity.CheckOptions{}) {
		if err != nil {
			return err
		}
		fmt.Fprintf(t.out, "  %v: %s\n", f.Kind, f.Detail)
	}
	sum, err := t.s.Rebuild(ctx, indexentity.CheckOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(t.out, "  rebuilt: %d missing, %d repaired\n", sum.Missing, sum.Repaired)
	return t.lookup(ctx, "lastname", "Smith")
}
