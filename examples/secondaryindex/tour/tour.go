// Package tour is the secondaryindex step of tablekit's tour: the design
// guide's employees found by email and by last name, with the index in the
// employee's partition (§6.1) and in another partition kept by a queue
// (§6.2), a unique email defended, and an index broken by hand, checked
// and rebuilt.
package tour

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

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

// Tour creates two tables and a queue, runs the story against them,
// printing what happens to out, and deletes them.
func Tour(ctx context.Context, env *demo.Env, out io.Writer) (err error) {
	var drops []func() error
	defer func() {
		for _, d := range drops {
			err = errors.Join(err, d())
		}
		if err == nil {
			fmt.Fprintln(out, "Deleted the tables and queues.")
		}
	}()
	meter := cost.NewMeter()
	metered := env.With(meter.Policy())
	var tables [2]*entity.Table[Employee]
	for i := range tables {
		client, drop, err := metered.ScratchTable(ctx, "sitour")
		if err != nil {
			return err
		}
		drops = append(drops, drop)
		if tables[i], err = entity.NewTable[Employee](client); err != nil {
			return err
		}
	}
	queue, drop, err := env.ScratchQueue(ctx, "sitour")
	if err != nil {
		return err
	}
	drops = append(drops, drop)
	parts, err := azqueue.ParseURL(queue.URL())
	if err != nil {
		return err
	}
	queues := eventual.QueuesOf(env.QueueService, parts.QueueName)
	drops = append(drops, func() error {
		_, err := queues[0].Poison.Delete(context.WithoutCancel(ctx), nil)
		if err != nil && !strings.Contains(err.Error(), "QueueNotFound") {
			return err
		}
		return nil
	})

	fmt.Fprintln(out, "== secondaryindex: employees by email and by last name (design guide §6.1, §6.2)")
	if err := samePartition(ctx, out, meter, tables[0]); err != nil {
		return err
	}
	return otherPartition(ctx, out, env, queues, tables[1])
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

func otherPartition(ctx context.Context, out io.Writer, env *demo.Env, queues []eventual.Queue, employees *entity.Table[Employee]) error {
	p, err := eventual.New(queues, nil, eventual.Config{PollInterval: 10 * time.Millisecond, MaxPollInterval: 50 * time.Millisecond})
	if err != nil {
		return err
	}
	if err := p.CreateQueues(ctx); err != nil {
		return err
	}
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
	if err := converge(ctx, p, set); err != nil {
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
	if err := converge(ctx, p, set); err != nil {
		return err
	}
	_, err = set.Lookup(ctx, "email", "Sales", "jonesj@contoso.com", secondaryindex.LookupOptions{})
	fmt.Fprintf(out, "After the worker ran, no drift; the old email's entry is gone: %v.\n", errors.Is(err, entity.ErrNotFound))
	return nil
}

// converge runs the worker until a check finds no drift.
func converge(ctx context.Context, p *eventual.Processor, set *secondaryindex.Set[Employee]) error {
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(rctx) }()
	defer func() { stop(); <-done }()
	deadline := time.Now().Add(time.Minute)
	for count(ctx, set) != 0 {
		if time.Now().After(deadline) {
			return errors.New("the index did not converge in a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
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
