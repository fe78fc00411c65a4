// Command denormalize keeps a copy of a department's manager's name and
// phone in the department's entity, so that one point query shows it all:
// the design guide's denormalisation pattern (§6.5), package
// patterns/denormalize. In the manager's partition the copy changes in the
// manager's own transaction; in a directory table and in every employee of
// a department, copies are fanned out through a queue (§6.3).
//
// It runs on the storage account the environment names, creates the tables
// Departments and DepartmentDirectory and the queue department-copies (with
// its poison queue) if they do not exist, and leaves what it wrote there:
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/denormalize
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
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Departments string // table: departments and their employees
	Directory   string // table: one partition listing every department
	CopyQueue   string // queue, and its poison queue CopyQueue + "-poison"
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{Departments: "Departments", Directory: "DepartmentDirectory", CopyQueue: "department-copies"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "denormalize example:", err)
		os.Exit(1)
	}
}

// Employee is an employee in its department's partition. CostCenter is a
// copy of the department's, from the directory.
type Employee struct {
	PartitionKey string // department
	RowKey       string // "empid 000123"
	ETag         string
	Name         string
	Phone        string
	CostCenter   string `table:",omitempty"`
}

// Department is the department entity, in the same partition as its
// employees, with a copy of its manager's name and phone.
type Department struct {
	PartitionKey string
	RowKey       string // "department"
	ETag         string
	ManagerID    string
	ManagerName  string `table:",omitempty"`
	ManagerPhone string `table:",omitempty"`
}

// Entry is a department in the directory table: all departments in one
// partition, each with its manager's name and its cost center.
type Entry struct {
	PartitionKey string // "departments"
	RowKey       string // the department
	ETag         string
	Manager      string
	ManagerName  string `table:",omitempty"`
	CostCenter   string
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
	employees, err := entity.NewTableFromService[Employee](tables, names.Departments)
	if err != nil {
		return err
	}
	departments, err := entity.NewTableFromService[Department](tables, names.Departments)
	if err != nil {
		return err
	}
	directory, err := entity.NewTableFromService[Entry](tables, names.Directory)
	if err != nil {
		return err
	}
	p, err := eventual.New(eventual.QueuesOf(queues, names.CopyQueue), nil, eventual.Config{})
	if err != nil {
		return err
	}
	// The two tables and the queues, unless they exist: one call.
	if err := account.Provision(ctx, employees, directory, p); err != nil {
		return err
	}

	fmt.Fprintln(out, "== denormalize: the department keeps its manager's name and phone (design guide §6.5)")
	managers, err := denormalize.New(departments, employees, denormalize.Config{},
		denormalize.Relation[Department, Employee]{
			Name:   "manager",
			Fields: []denormalize.Field{{From: "Name", To: "ManagerName"}, {From: "Phone", To: "ManagerPhone"}},
			Source: func(d *Department) (denormalize.Key, bool) {
				return denormalize.Key{PartitionKey: d.PartitionKey, RowKey: d.ManagerID}, d.ManagerID != ""
			},
			Targets: func(e *Employee) denormalize.Targets {
				return denormalize.Targets{Keys: []denormalize.Key{{PartitionKey: e.PartitionKey, RowKey: "department"}}}
			},
		})
	if err != nil {
		return err
	}
	for _, e := range []Employee{
		{PartitionKey: "Sales", RowKey: "empid 000123", Name: "Jones, Jeff", Phone: "425-555-0101"},
		{PartitionKey: "Sales", RowKey: "empid 000124", Name: "Smith, Sue", Phone: "425-555-0102"},
		{PartitionKey: "Sales", RowKey: "empid 000125", Name: "Lee, Li", Phone: "425-555-0103"},
	} {
		if err := managers.InsertSource(ctx, &e); err != nil {
			return err
		}
	}
	if err := managers.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: "department", ManagerID: "empid 000123"}); err != nil {
		return err
	}

	before := meter.Snapshot()
	d, err := departments.Get(ctx, "Sales", "department")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Sales is managed by %s, phone %s: %d point query (normalised it takes 2).\n",
		d.ManagerName, d.ManagerPhone, meter.Snapshot().Sub(before).Total())

	before = meter.Snapshot()
	if _, err := managers.ModifySource(ctx, "Sales", "empid 000123", func(e *Employee) error {
		e.Phone = "425-555-0199"
		return nil
	}, entity.ModifyOptions{}); err != nil {
		return err
	}
	used := meter.Snapshot().Sub(before)
	if d, err = departments.Get(ctx, "Sales", "department"); err != nil {
		return err
	}
	fmt.Fprintf(out, "Jeff's new phone reached the department in the same transaction: %s (%d reads and %d transaction).\n",
		d.ManagerPhone, used.Count(cost.Table, cost.OpGet), used.Count(cost.Table, cost.OpBatch))

	d, err = managers.ModifyTarget(ctx, "Sales", "department", func(d *Department) error {
		d.ManagerID = "empid 000124"
		return nil
	}, entity.ModifyOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "A new manager: the department now shows %s, %s.\n", d.ManagerName, d.ManagerPhone)
	if err := managers.DeleteSource(ctx, "Sales", "empid 000124"); err != nil {
		return err
	}
	if d, err = departments.Get(ctx, "Sales", "department"); err != nil {
		return err
	}
	fmt.Fprintf(out, "Sue leaves: the department keeps her id %q and no copy (name %q).\n", d.ManagerID, d.ManagerName)
	findings := 0
	for _, err := range managers.Check(ctx, denormalize.CheckOptions{}) {
		if err != nil {
			return err
		}
		findings++
	}
	fmt.Fprintf(out, "Check: %d copies disagree with their source.\n", findings)

	return fanOut(ctx, out, meter, employees, directory, p)
}

// fanOut keeps copies in another table: the directory entry copies its
// manager's name, and every employee copies its department's cost center.
func fanOut(ctx context.Context, out io.Writer, meter *cost.Meter, employees *entity.Table[Employee], directory *entity.Table[Entry], p *eventual.Processor) error {
	fmt.Fprintln(out, "-- other partitions: a directory of departments, kept through a queue (§6.3)")
	cfg := denormalize.Config{Processor: p}
	managers, err := denormalize.New(directory, employees, cfg, denormalize.Relation[Entry, Employee]{
		Name:      "manager",
		Placement: denormalize.OtherPartition,
		Fields:    []denormalize.Field{{From: "Name", To: "ManagerName"}},
		Source: func(d *Entry) (denormalize.Key, bool) {
			return denormalize.Key{PartitionKey: d.RowKey, RowKey: d.Manager}, d.Manager != ""
		},
		Targets: func(e *Employee) denormalize.Targets {
			return denormalize.Targets{Keys: []denormalize.Key{{PartitionKey: "departments", RowKey: e.PartitionKey}}}
		},
	})
	if err != nil {
		return err
	}
	centers, err := denormalize.New(employees, directory, cfg, denormalize.Relation[Employee, Entry]{
		Name:      "costcenter",
		Placement: denormalize.OtherPartition,
		Fields:    []denormalize.Field{{From: "CostCenter", To: "CostCenter"}},
		Source: func(e *Employee) (denormalize.Key, bool) {
			return denormalize.Key{PartitionKey: "departments", RowKey: e.PartitionKey}, true
		},
		Targets: func(d *Entry) denormalize.Targets {
			return denormalize.Targets{Ranges: []denormalize.Range{denormalize.Prefix(d.RowKey, "empid ")}}
		},
	})
	if err != nil {
		return err
	}
	entry := Entry{PartitionKey: "departments", RowKey: "Sales", Manager: "empid 000123", CostCenter: "CC-100"}
	if err := managers.InsertTarget(ctx, &entry); err != nil {
		return err
	}
	// The entry is the cost center's source too: Push fans it out.
	if err := centers.Push(ctx, "departments", "Sales"); err != nil {
		return err
	}
	if err := drain(ctx, p); err != nil {
		return err
	}
	fmt.Fprintf(out, "Directory: Sales, manager %s, cost center %s; employees: %s\n", entry.ManagerName, entry.CostCenter, centersOf(ctx, employees))

	before := meter.Snapshot()
	if _, err := centers.ModifySource(ctx, "departments", "Sales", func(e *Entry) error { e.CostCenter = "CC-200"; return nil }, entity.ModifyOptions{}); err != nil {
		return err
	}
	if _, err := managers.ModifySource(ctx, "Sales", "empid 000123", func(e *Employee) error { e.Name = "Jones, Jeffrey"; return nil }, entity.ModifyOptions{}); err != nil {
		return err
	}
	fmt.Fprintf(out, "Changed the cost center and Jeff's name; before the worker runs, employees: %s\n", centersOf(ctx, employees))
	if err := drain(ctx, p); err != nil {
		return err
	}
	if entry, err = directory.Get(ctx, "departments", "Sales"); err != nil {
		return err
	}
	fmt.Fprintf(out, "After the worker: directory manager %s; employees: %s (%d storage transactions in all)\n",
		entry.ManagerName, centersOf(ctx, employees), meter.Snapshot().Sub(before).Total())
	return nil
}

func centersOf(ctx context.Context, employees *entity.Table[Employee]) string {
	var cs []string
	for e, err := range employees.Query(ctx, entity.Query{Filter: filter.PK("Sales").And(filter.RowKeyPrefix("empid "))}) {
		if err != nil {
			return err.Error()
		}
		cs = append(cs, e.CostCenter)
	}
	return strings.Join(cs, " ")
}

// drain runs the queue's worker until nothing is left to do.
func drain(ctx context.Context, p *eventual.Processor) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	r, err := p.Drain(ctx)
	if err == nil && r.Poisoned > 0 {
		err = fmt.Errorf("%d fan-out messages poisoned", r.Poisoned)
	}
	return err
}
