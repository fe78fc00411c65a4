package secondaryindex_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// The guide's §6.1: employees found by email and by last name, the
// entries written in each employee's transaction.
func Example() {
	ctx := context.Background()
	client, drop, err := env.ScratchTable(ctx, "example")
	if err != nil {
		panic(err)
	}
	defer drop()
	employees, _ := entity.NewTable[Employee](client)
	set, err := secondaryindex.New(employees, secondaryindex.Config{PrimaryPrefix: "empid_"},
		secondaryindex.Index[Employee]{Name: "email", Unique: true,
			Key: func(e *Employee) (string, bool) { return strings.ToLower(e.Email), e.Email != "" }},
		secondaryindex.Index[Employee]{Name: "name", Properties: []string{"FirstName", "LastName"},
			Key: func(e *Employee) (string, bool) { return e.LastName, e.LastName != "" }},
	)
	if err != nil {
		panic(err)
	}
	for i, n := range [][3]string{{"John", "Jones", "JonesJ@contoso.com"}, {"Mary", "Jones", "maryj@contoso.com"}, {"Tom", "Smith", "toms@contoso.com"}} {
		e := Employee{PartitionKey: "Sales", RowKey: empid(123 + i), FirstName: n[0], LastName: n[1], Email: n[2], Age: 30}
		if err := set.Insert(ctx, &e); err != nil {
			panic(err)
		}
	}
	e, _ := set.Lookup(ctx, "email", "Sales", "jonesj@contoso.com", secondaryindex.LookupOptions{})
	fmt.Println("by email:", e.RowKey, e.FirstName)
	for e, err := range set.LookupAll(ctx, "name", "Sales", "Jones", secondaryindex.LookupOptions{}) {
		if err != nil {
			panic(err)
		}
		fmt.Println("Jones:", e.RowKey, e.FirstName)
	}
	// Mary takes John's email: refused, nothing written.
	_, err = set.Modify(ctx, "Sales", empid(124), func(e *Employee) error { e.Email = "jonesj@contoso.com"; return nil }, entity.ModifyOptions{})
	fmt.Println("taken:", errors.Is(err, secondaryindex.ErrDuplicate))
	// Output:
	// by email: empid_000123 John
	// Jones: empid_000123 John
	// Jones: empid_000124 Mary
	// taken: true
}

// A drift check finds an entry deleted by hand; Rebuild puts it back.
func ExampleSet_Rebuild() {
	ctx := context.Background()
	client, drop, err := env.ScratchTable(ctx, "example")
	if err != nil {
		panic(err)
	}
	defer drop()
	employees, _ := entity.NewTable[Employee](client)
	set, _ := secondaryindex.New(employees, secondaryindex.Config{PrimaryPrefix: "empid_"}, emailIndex(secondaryindex.SamePartition))
	e := Employee{PartitionKey: "Sales", RowKey: empid(123), Email: "jonesj@contoso.com"}
	if err := set.Insert(ctx, &e); err != nil {
		panic(err)
	}
	if _, err := employees.DeleteIfExists(ctx, "Sales", "email_jonesj@contoso.com"); err != nil {
		panic(err)
	}
	for f, err := range set.Check(ctx, secondaryindex.CheckOptions{}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(f.Kind, f.Entry.RowKey)
	}
	sum, err := set.Rebuild(ctx, secondaryindex.CheckOptions{})
	fmt.Println("repaired:", sum.Repaired, err)
	// Output:
	// missing email_jonesj@contoso.com
	// repaired: 1 <nil>
}

// The guide's §6.2: the email index in partition email_Sales, kept by a
// queue's worker; a verified lookup reads the employee to be sure.
func ExampleLookupOptions_verify() {
	ctx := context.Background()
	client, drop, _ := env.ScratchTable(ctx, "example")
	defer drop()
	queue, dropQueue, _ := env.ScratchQueue(ctx, "example")
	defer dropQueue()
	parts, _ := azqueue.ParseURL(queue.URL())
	queues := eventual.QueuesOf(env.QueueService, parts.QueueName)
	p, err := eventual.New(queues, nil, eventual.Config{PollInterval: 10 * time.Millisecond})
	if err != nil {
		panic(err)
	}
	if err := p.CreateQueues(ctx); err != nil { // the poison queue
		panic(err)
	}
	defer queues[0].Poison.Delete(ctx, nil)
	employees, _ := entity.NewTable[Employee](client)
	set, err := secondaryindex.New(employees, secondaryindex.Config{Processor: p, PrimaryPrefix: "empid_"}, emailIndex(secondaryindex.OtherPartition))
	if err != nil {
		panic(err)
	}
	e := Employee{PartitionKey: "Sales", RowKey: empid(123), Email: "jonesj@contoso.com"}
	if err := set.Insert(ctx, &e); err != nil {
		panic(err)
	}
	_, _ = set.Modify(ctx, "Sales", empid(123), func(e *Employee) error { e.Email = "john@contoso.com"; return nil }, entity.ModifyOptions{})
	// Before the worker runs, the old entry is still there; Verify skips it.
	_, err = set.Lookup(ctx, "email", "Sales", "jonesj@contoso.com", secondaryindex.LookupOptions{Verify: true})
	fmt.Println("old email:", errors.Is(err, entity.ErrNotFound))
	got, _ := set.Lookup(ctx, "email", "Sales", "john@contoso.com", secondaryindex.LookupOptions{Verify: true})
	fmt.Println("new email:", got.RowKey)

	run, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- p.Run(run) }()
	for {
		var left []drift.Finding
		for f, err := range set.Check(ctx, secondaryindex.CheckOptions{}) {
			if err != nil {
				panic(err)
			}
			left = append(left, f)
		}
		if len(left) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	<-done
	fmt.Println("drift: none")
	// Output:
	// old email: true
	// new email: empid_000123
	// drift: none
}

// Table-wide indexes: an employee found by email, and the Joneses, without
// knowing their departments; archived with MoveTo, its entries go too.
func ExampleSet_LookupValue() {
	ctx := context.Background()
	client, drop, _ := env.ScratchTable(ctx, "example")
	defer drop()
	archiveClient, dropArchive, _ := env.ScratchTable(ctx, "archive")
	defer dropArchive()
	queue, dropQueue, _ := env.ScratchQueue(ctx, "example")
	defer dropQueue()
	parts, _ := azqueue.ParseURL(queue.URL())
	queues := eventual.QueuesOf(env.QueueService, parts.QueueName)
	p, err := eventual.New(queues, nil, eventual.Config{PollInterval: 10 * time.Millisecond})
	if err != nil {
		panic(err)
	}
	if err := p.CreateQueues(ctx); err != nil { // the poison queue
		panic(err)
	}
	defer queues[0].Poison.Delete(ctx, nil)
	employees, _ := entity.NewTable[Employee](client)
	archive, _ := entity.NewTable[Employee](archiveClient)
	set, err := secondaryindex.New(employees, secondaryindex.Config{Processor: p, PrimaryPrefix: "empid_"},
		emailIndex(secondaryindex.TableWide), nameIndex(secondaryindex.TableWide))
	if err != nil {
		panic(err)
	}
	for i, dept := range []string{"Sales", "Support", "Legal"} {
		e := Employee{PartitionKey: dept, RowKey: empid(123 + i), FirstName: dept, LastName: "Jones", Email: strings.ToLower(dept) + "@contoso.com"}
		if err := set.Insert(ctx, &e); err != nil {
			panic(err)
		}
	}
	run, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- p.Run(run) }()
	defer func() { stop(); <-done }()
	settle := func() {
		for {
			n := 0
			for _, err := range set.Check(ctx, secondaryindex.CheckOptions{}) {
				if err != nil {
					panic(err)
				}
				n++
			}
			if n == 0 {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	settle()
	e, _ := set.LookupValue(ctx, "email", "support@contoso.com", secondaryindex.LookupOptions{})
	fmt.Println("by email:", e.PartitionKey, e.RowKey)
	for e, err := range set.LookupValueAll(ctx, "name", "Jones", secondaryindex.LookupOptions{}) {
		if err != nil {
			panic(err)
		}
		fmt.Println("Jones:", e.PartitionKey, e.RowKey)
	}
	if err := set.MoveTo(ctx, "Legal", empid(125), archive); err != nil {
		panic(err)
	}
	settle()
	_, err = set.LookupValue(ctx, "email", "legal@contoso.com", secondaryindex.LookupOptions{})
	fmt.Println("archived, gone from the index:", errors.Is(err, entity.ErrNotFound))
	// Output:
	// by email: Support empid_000124
	// Jones: Legal empid_000125
	// Jones: Sales empid_000123
	// Jones: Support empid_000124
	// archived, gone from the index: true
}
