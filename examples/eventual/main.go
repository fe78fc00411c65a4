// Command eventual archives employees through a queue: the design guide's
// eventually consistent transactions (§6.3), package patterns/eventual. A
// message asks a worker to move an employee from the Current table to the
// Archive table; the step is idempotent, so a message delivered twice does
// no harm, and the state converges once the queue drains. A message of a
// kind no worker handles yet goes to the poison queue and is replayed once
// a handler is deployed.
//
// It runs on the storage account the environment names, creates the tables
// CurrentStaff and ArchivedStaff and the queue hr-work (with its poison
// queue) if they do not exist, and leaves what it wrote there:
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/eventual
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Current, Archive string // tables
	Work             string // queue, and its poison queue Work + "-poison"
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{Current: "CurrentStaff", Archive: "ArchivedStaff", Work: "hr-work"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "eventual example:", err)
		os.Exit(1)
	}
}

// Employee is an employee, in Current or in Archive.
type Employee struct {
	PartitionKey string // department
	RowKey       string // employee id
	ETag         string
	Name         string
}

// ArchiveEmployee asks a worker to move an employee to Archive.
type ArchiveEmployee struct {
	Department string `json:"department"`
	ID         string `json:"id"`
}

// NotifyPayroll is a kind that no worker handles at first.
type NotifyPayroll struct {
	ID string `json:"id"`
}

var (
	archiveKind = eventual.NewKind[ArchiveEmployee]("ArchiveEmployee.v1")
	notifyKind  = eventual.NewKind[NotifyPayroll]("NotifyPayroll.v1")
)

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
	current, err := entity.NewTableFromService[Employee](tables, names.Current)
	if err != nil {
		return err
	}
	archive, err := entity.NewTableFromService[Employee](tables, names.Archive)
	if err != nil {
		return err
	}
	// What the handlers and hooks saw, for the story to tell; they run on
	// the processor's worker goroutines.
	var (
		mu       sync.Mutex
		poisoned []eventual.Outcome
		moved    = map[string]int{}
		notified []string
	)
	p, err := eventual.New(eventual.QueuesOf(queues, names.Work), nil, eventual.Config{
		Hooks: eventual.Hooks{Outcome: func(o eventual.Outcome) {
			if o.Result == eventual.Poison {
				mu.Lock()
				poisoned = append(poisoned, o)
				mu.Unlock()
			}
		}},
	})
	if err != nil {
		return err
	}
	// The two tables and the queues, unless they exist: one call.
	if err := account.Provision(ctx, current, archive, p); err != nil {
		return err
	}
	// The handler: each step idempotent. Move copies the employee into
	// Archive, then deletes it from Current; a missing source counts as
	// done, so a second delivery of the message changes nothing.
	err = eventual.Handle(p, archiveKind, func(ctx context.Context, m ArchiveEmployee) error {
		if err := eventual.Move(ctx, current, archive, m.Department, m.ID, nil); err != nil {
			return err
		}
		mu.Lock()
		moved[m.ID]++
		mu.Unlock()
		return nil
	}, eventual.HandleOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "== eventual: archive employees through a queue (design guide §6.3)")

	for _, e := range []Employee{{"Sales", "000123", "", "Jones"}, {"Sales", "000124", "", "Smith"}, {"Sales", "000125", "", "Lee"}} {
		if err := current.Upsert(ctx, &e, entity.Replace); err != nil {
			return err
		}
	}
	if err := show(ctx, out, "Current", current); err != nil {
		return err
	}

	// 1. One message per employee; 000124's is sent twice, as a retried
	// enqueue or a delivery whose delete's reply was lost would.
	for _, id := range []string{"000123", "000124", "000124", "000125"} {
		m, err := archiveKind.Message(ArchiveEmployee{Department: "Sales", ID: id})
		if err != nil {
			return err
		}
		m.ID = "archive-Sales-" + id // the same ID for every copy
		if err := p.Enqueue(ctx, m); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "Enqueued 4 %s messages, 000124's twice. Until a worker runs, a reader sees them all in Current.\n", archiveKind.Name())
	r, err := drain(ctx, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "The worker drained the queue: %d messages done; Move ran for 000124 %d times, the second finding the work done.\n", r.Done, moved["000124"])
	if err := show(ctx, out, "Current", current); err != nil {
		return err
	}
	if err := show(ctx, out, "Archive", archive); err != nil {
		return err
	}

	// 2. A message of a kind no worker handles yet: poisoned, kept, and
	// replayed once a handler is deployed.
	m, err := notifyKind.Message(NotifyPayroll{ID: "000124"})
	if err != nil {
		return err
	}
	if err := p.Enqueue(ctx, m); err != nil {
		return err
	}
	fmt.Fprintf(out, "Enqueued a %s message, a kind no worker handles yet.\n", notifyKind.Name())
	if r, err = drain(ctx, p); err != nil {
		return err
	}
	if len(poisoned) != 1 || r.Poisoned != 1 {
		return fmt.Errorf("drained %+v, want the message poisoned", r)
	}
	fmt.Fprintf(out, "It went to the poison queue (%s%s) after delivery %d: %s.\n", names.Work, eventual.PoisonSuffix, poisoned[0].DequeueCount, poisoned[0].Reason)

	if err := eventual.Handle(p, notifyKind, func(ctx context.Context, n NotifyPayroll) error {
		mu.Lock()
		notified = append(notified, n.ID)
		mu.Unlock()
		return nil
	}, eventual.HandleOptions{}); err != nil {
		return err
	}
	n, err := p.Replay(ctx, eventual.ReplayOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Deployed a handler for it; Replay moved %d message back.\n", n)
	if r, err = drain(ctx, p); err != nil {
		return err
	}
	fmt.Fprintf(out, "The new handler notified payroll of %s; %d messages left in the poison queue.\n", strings.Join(notified, ", "), r.InPoison)
	return nil
}

// drain runs the worker until nothing is left to do.
func drain(ctx context.Context, p *eventual.Processor) (eventual.DrainReport, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return p.Drain(ctx)
}

// show prints the employees of a table.
func show(ctx context.Context, out io.Writer, name string, tbl *entity.Table[Employee]) error {
	var ids []string
	for e, err := range tbl.Query(ctx, entity.Query{}) {
		if err != nil {
			return err
		}
		ids = append(ids, e.RowKey+" "+e.Name)
	}
	if len(ids) == 0 {
		ids = []string{"(empty)"}
	}
	fmt.Fprintf(out, "   %s: %s\n", name, strings.Join(ids, ", "))
	return nil
}
