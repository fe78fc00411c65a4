package eventual_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// scratch is what the examples need from the test account: two tables and
// a queue with its poison queue, and a function that drops them.
func scratch(ctx context.Context) (current, archive *entity.Table[Employee], qs []eventual.Queue, drop func(), err error) {
	var drops []func() error
	drop = func() {
		for _, d := range drops {
			_ = d()
		}
	}
	tables := make([]*entity.Table[Employee], 2)
	for i := range tables {
		client, d, err := env.ScratchTable(ctx, "example")
		if err != nil {
			drop()
			return nil, nil, nil, nil, err
		}
		drops = append(drops, d)
		if tables[i], err = entity.NewTable[Employee](client); err != nil {
			drop()
			return nil, nil, nil, nil, err
		}
	}
	work, d, err := env.ScratchQueue(ctx, "example")
	if err != nil {
		drop()
		return nil, nil, nil, nil, err
	}
	parts, err := azqueue.ParseURL(work.URL())
	if err != nil {
		drop()
		return nil, nil, nil, nil, err
	}
	qs = eventual.QueuesOf(env.QueueService, parts.QueueName)
	drops = append(drops, d, func() error { _, err := qs[0].Poison.Delete(context.Background(), nil); return err })
	return tables[0], tables[1], qs, drop, nil
}

// The design guide's example: archive an employee by moving it from the
// Current table to the Archive table in a worker driven by a queue.
func Example() {
	ctx := context.Background()
	current, archive, queues, drop, err := scratch(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer drop()
	_ = current.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000123", Name: "Jones"})

	// Register the kind's handler: steps that may run twice.
	p, err := eventual.New(queues, nil, eventual.Config{PollInterval: 10 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	archiveKind := eventual.NewKind[ArchiveEmployee]("ArchiveEmployee.v1")
	done := make(chan struct{})
	err = eventual.Handle(p, archiveKind, func(ctx context.Context, m ArchiveEmployee) error {
		defer close(done)
		return eventual.Move(ctx, current, archive, m.Department, m.ID, nil)
	}, eventual.HandleOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}

	// Send the work, then run the worker until it is done.
	msg, _ := archiveKind.Message(ArchiveEmployee{Department: "Sales", ID: "000123"})
	if err := p.Enqueue(ctx, msg); err != nil {
		fmt.Println(err)
		return
	}
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan error)
	go func() { stopped <- p.Run(runCtx) }()
	<-done
	stop()
	<-stopped

	_, err = current.Get(ctx, "Sales", "000123")
	fmt.Println("in Current:", err == nil)
	e, err := archive.Get(ctx, "Sales", "000123")
	fmt.Println("in Archive:", e.Name, err)
	// Output:
	// in Current: false
	// in Archive: Jones <nil>
}

// An outbox writes a change and the intent to follow it up in one entity
// group transaction, so the follow-up is never lost: here a raise, and the
// message that records it elsewhere.
func ExampleOutbox_Submit() {
	ctx := context.Background()
	emps, _, queues, drop, err := scratch(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer drop()
	_ = emps.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000123", Name: "Jones", Salary: 1000})

	p, err := eventual.New(queues, nil, eventual.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	outbox, err := eventual.NewOutbox(p, emps, eventual.OutboxConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	raised, _ := eventual.NewKind[RaiseRecorded]("RaiseRecorded.v1").Message(RaiseRecorded{Department: "Sales"})
	err = outbox.Submit(ctx, "Sales", func(b *entity.Batch) error {
		b.UpdateAny(&Employee{PartitionKey: "Sales", RowKey: "000123", Name: "Jones", Salary: 1100}, entity.Merge)
		return nil
	}, raised)
	fmt.Println("submitted:", err)

	e, _ := emps.Get(ctx, "Sales", "000123")
	fmt.Println("salary:", e.Salary)
	resp, _ := queues[0].Work.PeekMessages(ctx, nil)
	fmt.Println("messages waiting:", len(resp.Messages))
	// The intent was sent and deleted: only the employee is left.
	var rows []string
	for e, err := range emps.Query(ctx, entity.Query{}) {
		if err == nil {
			rows = append(rows, e.RowKey)
		}
	}
	fmt.Println("rows:", strings.Join(rows, " "))
	// Output:
	// submitted: <nil>
	// salary: 1100
	// messages waiting: 1
	// rows: 000123
}

// A batch job (or a test) runs the handlers until every message is
// handled or poisoned, then reads what happened.
func ExampleProcessor_Drain() {
	ctx := context.Background()
	_, _, queues, drop, err := scratch(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer drop()
	// NoRetryDelay: a failed message is retried at once (tests, batch
	// jobs); production code keeps the default backoff.
	p, err := eventual.New(queues, nil, eventual.Config{PollInterval: 10 * time.Millisecond, RetryDelay: eventual.NoRetryDelay})
	if err != nil {
		fmt.Println(err)
		return
	}
	greet := eventual.NewKind[string]("Greet.v1")
	_ = eventual.Handle(p, greet, func(ctx context.Context, name string) error { return nil }, eventual.HandleOptions{})
	for _, name := range []string{"Ann", "Bob", "Cy"} {
		m, _ := greet.Message(name)
		_ = p.Enqueue(ctx, m)
	}
	orphan, _ := eventual.NewKind[string]("Nobody.v1").Message("no handler")
	_ = p.Enqueue(ctx, orphan)

	dctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	report, err := p.Drain(dctx)
	fmt.Println("drained:", err)
	fmt.Printf("done %d, poisoned %d, left %d, in the poison queue %d\n", report.Done, report.Poisoned, report.Left, report.InPoison)
	// Output:
	// drained: <nil>
	// done 3, poisoned 1, left 0, in the poison queue 1
}
