// Package tour is the denormalize step of tablekit's tour: the design
// guide's department that keeps a copy of its manager's name and phone
// (§6.5), so one point query shows it all — kept in the manager's own
// transaction in the department's partition, and fanned out through a
// queue to a directory in another table and to every employee of a
// department.
package tour

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/eventual"
)

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

// Tour creates two tables and a queue, runs the story against them,
// printing what happens to out, and deletes them.
func Tour(ctx context.Context, env *demo.Env, out io.Writer) (err error) {
	meter := cost.NewMeter()
	metered := env.With(meter.Policy())
	var drops []func() error
	defer func() {
		for _, d := range drops {
			err = errors.Join(err, d())
		}
	}()
	client, drop, err := metered.ScratchTable(ctx, "denormtour")
	if err != nil {
		return err
	}
	drops = append(drops, drop)
	dirClient, drop, err := metered.ScratchTable(ctx, "denormdirectory")
	if err != nil {
		return err
	}
	drops = append(drops, drop)
	work, drop, err := metered.ScratchQueue(ctx, "denormtour")
	if err != nil {
		return err
	}
	drops = append(drops, drop)
	parts, err := azqueue.ParseURL(work.URL())
	if err != nil {
		return err
	}
	queues := eventual.QueuesOf(metered.QueueService, parts.QueueName)
	if _, err := queues[0].Poison.Create(ctx, nil); err != nil {
		return err
	}
	drops = append(drops, func() error {
		_, err := queues[0].Poison.Delete(context.WithoutCancel(ctx), nil)
		return err
	})

	fmt.Fprintln(out, "== denormalize: the department keeps its manager's name and phone (design guide §6.5)")
	employees, _ := entity.NewTable[Employee](client)
	departments, _ := entity.NewTable[Department](client)
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
	d, _ = departments.Get(ctx, "Sales", "department")
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
	d, _ = departments.Get(ctx, "Sales", "department")
	fmt.Fprintf(out, "Sue leaves: the department keeps her id %q and no copy (name %q).\n", d.ManagerID, d.ManagerName)
	findings := 0
	for _, err := range managers.Check(ctx, denormalize.CheckOptions{}) {
		if err != nil {
			return err
		}
		findings++
	}
	fmt.Fprintf(out, "Check: %d copies disagree with their source.\n", findings)

	return fanOut(ctx, out, meter, client, dirClient, queues)
}

// fanOut keeps copies in another table: the directory entry copies its
// manager's name, and every employee copies its department's cost center.
func fanOut(ctx context.Context, out io.Writer, meter *cost.Meter, client, dirClient *aztables.Client, queues []eventual.Queue) error {
	fmt.Fprintln(out, "-- other partitions: a directory of departments, kept through a queue (§6.3)")
	employees, err := entity.NewTable[Employee](client)
	if err != nil {
		return err
	}
	directory, err := entity.NewTable[Entry](dirClient)
	if err != nil {
		return err
	}
	p, err := eventual.New(queues, nil, eventual.Config{PollInterval: 20 * time.Millisecond, MaxPollInterval: 200 * time.Millisecond, RetryDelay: -1})
	if err != nil {
		return err
	}
	cfg := denormalize.Config{Processor: p, Outbox: eventual.OutboxConfig{Grace: -1}}
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
	if err := drain(ctx, p, queues); err != nil {
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
	if err := drain(ctx, p, queues); err != nil {
		return err
	}
	entry, _ = directory.Get(ctx, "departments", "Sales")
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

// drain runs the worker until the queue is empty.
func drain(ctx context.Context, p *eventual.Processor, qs []eventual.Queue) error {
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(rctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.After(time.Minute)
	for {
		props, err := qs[0].Work.GetProperties(ctx, nil)
		if err != nil {
			return err
		}
		if props.ApproximateMessagesCount == nil || *props.ApproximateMessagesCount == 0 {
			return nil
		}
		select {
		case <-deadline:
			return errors.New("the worker did not drain the queue in a minute")
		case <-time.After(20 * time.Millisecond):
		}
	}
}
