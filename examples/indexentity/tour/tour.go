// Package tour is the indexentity step of tablekit's tour: the design
// guide's index entities (§6.4) on its Employees — "all employees named
// Jones in Sales" through an index entity in their partition, the rename
// that changes three entities in one transaction, the same kind of lists
// kept in another partition and in blobs by a queue, and a list damaged
// by hand, found and rebuilt.
package tour

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/indexentity"
)

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

// Tour creates a table, a queue and a blob container, runs the story
// against them, printing what happens to out, and deletes them.
func Tour(ctx context.Context, env *demo.Env, out io.Writer) (err error) {
	var drops []func() error
	defer func() {
		for _, d := range drops {
			err = errors.Join(err, d())
		}
		if err == nil {
			fmt.Fprintln(out, "Deleted the table, the queues and the container.")
		}
	}()
	client, drop, err := env.ScratchTable(ctx, "indexentitytour")
	if err != nil {
		return err
	}
	drops = append(drops, drop)
	blobs, drop, err := env.ScratchContainer(ctx, "indexentitytour")
	if err != nil {
		return err
	}
	drops = append(drops, drop)
	work, drop, err := env.ScratchQueue(ctx, "indexentitytour")
	if err != nil {
		return err
	}
	drops = append(drops, drop)
	parts, err := azqueue.ParseURL(work.URL())
	if err != nil {
		return err
	}
	p, err := eventual.New(eventual.QueuesOf(env.QueueService, parts.QueueName), nil, eventual.Config{
		PollInterval: 20 * time.Millisecond, MaxPollInterval: 100 * time.Millisecond, RetryDelay: -1,
	})
	if err != nil {
		return err
	}
	if err := p.CreateQueues(ctx); err != nil {
		return err
	}
	drops = append(drops, func() error {
		_, err := env.QueueService.DeleteQueue(context.WithoutCancel(ctx), parts.QueueName+eventual.PoisonSuffix, nil)
		if err != nil && !strings.Contains(err.Error(), "QueueNotFound") {
			return err
		}
		return nil
	})
	emps, err := entity.NewTable[Employee](client)
	if err != nil {
		return err
	}
	s, err := indexentity.New(emps, indexentity.Config{Processor: p, Blobs: blobs}, indexes...)
	if err != nil {
		return err
	}
	t := &story{out: out, emps: emps, s: s, p: p, work: work}
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
	work *azqueue.QueueClient
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

// drain runs the processor until the queue is empty.
func (t *story) drain(ctx context.Context) error {
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- t.p.Run(rctx) }()
	defer func() { cancel(); <-done }()
	for {
		props, err := t.work.GetProperties(ctx, nil)
		if err != nil {
			return err
		}
		if props.ApproximateMessagesCount != nil && *props.ApproximateMessagesCount == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
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
