// Package tour is the eventual step of tablekit's tour: the design guide's
// archive-an-employee example (§6.3) driven by a queue, with a worker that
// crashes half-way and a second worker that finishes its work, then a
// message of a kind nobody handles yet, poisoned and replayed.
package tour

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/patterns/eventual"
)

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

// visibility is how long a message stays hidden after a worker received
// it: after a crash, how long until it is delivered again.
const visibility = 2 * time.Second

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
	var names []string
	for _, role := range []string{"current", "archive"} {
		var rnd [4]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return err
		}
		name := "eventualtour" + role + hex.EncodeToString(rnd[:])
		if _, err := env.TableService.CreateTable(ctx, name, nil); err != nil {
			return err
		}
		drops = append(drops, func() error {
			_, err := env.TableService.DeleteTable(context.WithoutCancel(ctx), name, nil)
			return err
		})
		names = append(names, name)
	}
	work, drop, err := env.ScratchQueue(ctx, "eventualtour")
	if err != nil {
		return err
	}
	drops = append(drops, drop)
	parts, err := azqueue.ParseURL(work.URL())
	if err != nil {
		return err
	}
	queueName := parts.QueueName
	drops = append(drops, func() error {
		_, err := env.QueueService.DeleteQueue(context.WithoutCancel(ctx), queueName+eventual.PoisonSuffix, nil)
		if err != nil && !strings.Contains(err.Error(), "QueueNotFound") {
			return err
		}
		return nil
	})

	fmt.Fprintln(out, "== eventual: archive employees through a queue (design guide §6.3)")
	s := &story{env: env, out: out, tables: names, queue: queueName}
	if err := s.archive(ctx); err != nil {
		return err
	}
	return s.poisonAndReplay(ctx)
}

type story struct {
	env    *demo.Env
	out    io.Writer
	tables []string // Current, Archive
	queue  string
}

// worker is a processor whose clients come from env, with its own tables.
type worker struct {
	p                *eventual.Processor
	current, archive *entity.Table[Employee]
}

func (s *story) worker(env *demo.Env, cfg eventual.Config) (*worker, error) {
	w := &worker{}
	var err error
	if w.current, err = entity.NewTableFromService[Employee](env.TableService, s.tables[0]); err != nil {
		return nil, err
	}
	if w.archive, err = entity.NewTableFromService[Employee](env.TableService, s.tables[1]); err != nil {
		return nil, err
	}
	cfg.VisibilityTimeout = visibility
	cfg.PollInterval = 20 * time.Millisecond
	cfg.MaxPollInterval = 200 * time.Millisecond
	w.p, err = eventual.New(eventual.QueuesOf(env.QueueService, s.queue), nil, cfg)
	return w, err
}

// runUntil runs p until done is closed.
func runUntil(ctx context.Context, p *eventual.Processor, done <-chan struct{}) error {
	rctx, cancel := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- p.Run(rctx) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cancel()
		<-stopped
		return errors.New("the worker did not finish in a minute")
	}
	cancel()
	return <-stopped
}

func (s *story) list(ctx context.Context, tbl *entity.Table[Employee]) (string, error) {
	var ids []string
	for e, err := range tbl.Query(ctx, entity.Query{}) {
		if err != nil {
			return "", err
		}
		ids = append(ids, e.RowKey+" "+e.Name)
	}
	if len(ids) == 0 {
		return "(empty)", nil
	}
	return strings.Join(ids, ", "), nil
}

func (s *story) archive(ctx context.Context) error {
	// A worker that dies half-way: from the moment killer.Kill is called
	// none of its requests reaches storage, as if its process were gone.
	killer := demo.NewKiller(-1)
	crashed := make(chan struct{})
	first, err := s.worker(s.env.With(killer), eventual.Config{Workers: 1, BatchSize: 1, ShutdownGrace: time.Second})
	if err != nil {
		return err
	}
	for _, e := range []Employee{{"Sales", "000123", "", "Jones"}, {"Sales", "000124", "", "Smith"}, {"Sales", "000125", "", "Lee"}} {
		if err := first.current.Insert(ctx, &e); err != nil {
			return err
		}
	}
	cur, err := s.list(ctx, first.current)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "Current: %s\n", cur)

	err = eventual.Handle(first.p, archiveKind, func(ctx context.Context, m ArchiveEmployee) error {
		if m.ID != "000124" {
			if err := eventual.Move(ctx, first.current, first.archive, m.Department, m.ID, nil); err != nil {
				return err
			}
			fmt.Fprintf(s.out, "Worker 1 archived %s.\n", m.ID)
			return nil
		}
		// Move's first two steps, then the crash.
		e, err := first.current.Get(ctx, m.Department, m.ID)
		if err != nil {
			return err
		}
		if err := first.archive.Upsert(ctx, &e, entity.Replace); err != nil {
			return err
		}
		killer.Kill()
		fmt.Fprintf(s.out, "Worker 1 copied %s into Archive and crashed before deleting it from Current.\n", m.ID)
		close(crashed)
		return errors.New("crashed")
	}, eventual.HandleOptions{})
	if err != nil {
		return err
	}
	var msgs []eventual.Message
	for _, id := range []string{"000123", "000124", "000125"} {
		m, err := archiveKind.Message(ArchiveEmployee{Department: "Sales", ID: id})
		if err != nil {
			return err
		}
		msgs = append(msgs, m)
	}
	for _, m := range msgs { // one by one, to keep their order in the queue
		if err := first.p.Enqueue(ctx, m); err != nil {
			return err
		}
	}
	fmt.Fprintf(s.out, "Enqueued %d %s messages, one per employee.\n", len(msgs), archiveKind.Name())
	if err := runUntil(ctx, first.p, crashed); err != nil {
		return err
	}

	// What a reader sees now: no isolation, but nothing lost.
	second, err := s.worker(s.env, eventual.Config{Workers: 2})
	if err != nil {
		return err
	}
	inCurrent, err := s.list(ctx, second.current)
	if err != nil {
		return err
	}
	inArchive, err := s.list(ctx, second.archive)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "Mid-way, a reader sees Current: %s\n                    and Archive: %s\n", inCurrent, inArchive)

	// A second worker finishes: 000125 at once, 000124 once its message
	// reappears after the visibility timeout.
	var mu sync.Mutex
	var report []string
	done := make(chan struct{})
	err = eventual.Handle(second.p, archiveKind, func(ctx context.Context, m ArchiveEmployee) error {
		if err := eventual.Move(ctx, second.current, second.archive, m.Department, m.ID, nil); err != nil {
			return err
		}
		d, _ := eventual.DeliveryFrom(ctx)
		mu.Lock()
		defer mu.Unlock()
		report = append(report, fmt.Sprintf("Worker 2 archived %s (delivery %d of its message).", m.ID, d.DequeueCount))
		if len(report) == 2 {
			close(done)
		}
		return nil
	}, eventual.HandleOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "Worker 2 starts; the message worker 1 was running reappears after %v.\n", visibility)
	if err := runUntil(ctx, second.p, done); err != nil {
		return err
	}
	slices.Sort(report)
	fmt.Fprintln(s.out, strings.Join(report, "\n"))
	if inCurrent, err = s.list(ctx, second.current); err != nil {
		return err
	}
	if inArchive, err = s.list(ctx, second.archive); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "Converged. Current: %s\n           Archive: %s\n", inCurrent, inArchive)
	return nil
}

func (s *story) poisonAndReplay(ctx context.Context) error {
	var mu sync.Mutex
	var poisoned []eventual.Outcome
	w, err := s.worker(s.env, eventual.Config{Workers: 1, Hooks: eventual.Hooks{Outcome: func(o eventual.Outcome) {
		mu.Lock()
		defer mu.Unlock()
		if o.Result == eventual.Poison {
			poisoned = append(poisoned, o)
		}
	}}})
	if err != nil {
		return err
	}
	m, err := notifyKind.Message(NotifyPayroll{ID: "000124"})
	if err != nil {
		return err
	}
	if err := w.p.Enqueue(ctx, m); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "Enqueued a %s message, a kind no worker handles yet.\n", notifyKind.Name())
	sent, err := s.peek(ctx, s.queue)
	if err != nil {
		return err
	}
	// Drain runs the worker until nothing is left to do, then returns.
	dctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	report, err := w.p.Drain(dctx)
	if err != nil {
		return err
	}
	if len(poisoned) != 1 || report.Poisoned != 1 {
		return fmt.Errorf("drained %+v, want the message poisoned", report)
	}
	o := poisoned[0]
	fmt.Fprintf(s.out, "It went to the poison queue (<queue>%s) after delivery %d: %s.\n", eventual.PoisonSuffix, o.DequeueCount, o.Reason)
	kept, err := s.peek(ctx, s.queue+eventual.PoisonSuffix)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "The poison queue holds the text as it was sent, byte for byte: %v.\n", kept == sent)

	notified := make(chan struct{})
	if err := eventual.Handle(w.p, notifyKind, func(ctx context.Context, n NotifyPayroll) error {
		fmt.Fprintf(s.out, "The new handler notified payroll of %s.\n", n.ID)
		close(notified)
		return nil
	}, eventual.HandleOptions{}); err != nil {
		return err
	}
	n, err := w.p.Replay(ctx, eventual.ReplayOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "Deployed a handler for it; Replay moved %d message back.\n", n)
	if _, err := w.p.Drain(dctx); err != nil {
		return err
	}
	select {
	case <-notified:
		return nil
	default:
		return errors.New("the replayed message did not run")
	}
}

// peek returns the text of the first visible message of the named queue.
func (s *story) peek(ctx context.Context, queue string) (string, error) {
	resp, err := s.env.QueueService.NewQueueClient(queue).PeekMessages(ctx, nil)
	if err != nil {
		return "", err
	}
	if len(resp.Messages) == 0 || resp.Messages[0].MessageText == nil {
		return "", fmt.Errorf("no message in %s", queue)
	}
	return *resp.Messages[0].MessageText, nil
}
