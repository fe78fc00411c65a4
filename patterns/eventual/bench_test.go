package eventual_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// benchWorkers is the concurrency of both sides of BenchmarkArchive.
const benchWorkers = 4

// BenchmarkArchive is the guide's archive scenario, one op per employee:
// enqueue a message, receive it (32 per request), read Archive's
// employee, read the employee from Current, write it into Archive (on
// condition of Archive's ETag), delete it from Current (on condition of
// the read's ETag), delete the message — with 4 workers (the
// hand-written loop, the guide's, does without Archive's read).
// /tablekit runs it with a Processor and Move; /handwritten is the same
// loop written over raw azqueue and aztables. Both report storage-tx/op
// from the cost meter (the guide's minimum is 6 without batching the
// receive; 5 + 1/32 with it) and employees/s. Run it with -benchtime
// 2000x for the 2,000-message figure.
//
// Each variant runs on an Azurite of its own, started before the timer:
// Azurite's queue service collects the storage of deleted messages every
// minute, one message at a time against a growing list, which freezes it
// for seconds to minutes once some thousands of messages have come and
// gone — whichever variant ran second would pay for the first.
func BenchmarkArchive(b *testing.B) {
	for _, v := range []struct {
		name string
		run  func(b *testing.B, s archiveBench)
	}{
		{"tablekit", archiveTablekit},
		{"handwritten", archiveHandwritten},
	} {
		b.Run(v.name, func(b *testing.B) {
			n := b.N
			own, err := integration.Start(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = own.Close() }) // after the tables' and queues' cleanups
			s := newArchiveBench(b, own, n)
			before := s.meter.Snapshot()
			b.ResetTimer()
			v.run(b, s)
			b.StopTimer()
			used := s.meter.Snapshot().Sub(before)
			if left := rowKeys(b, s.current); len(left) != 0 {
				b.Fatalf("%d employees left in Current", len(left))
			}
			b.ReportMetric(float64(used.Total())/float64(n), "storage-tx/op")
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "employees/s")
			b.Logf("n=%d: %v", n, used)
		})
	}
}

type archiveBench struct {
	n                int
	meter            *cost.Meter
	metered          *integration.Env
	current, archive *entity.Table[Employee]
	qs               []eventual.Queue
	ids              []string
}

func newArchiveBench(b *testing.B, e *integration.Env, n int) archiveBench {
	b.Helper()
	s := archiveBench{n: n, meter: cost.NewMeter()}
	s.metered = e.With(s.meter.Policy())
	s.current, s.archive = patterntest.Table[Employee](b, e), patterntest.Table[Employee](b, e)
	s.qs = patterntest.Queues(b, e, 1)
	ctx := context.Background()
	emps := make([]Employee, n)
	for i := range emps {
		id := keysPad(i)
		s.ids = append(s.ids, id)
		emps[i] = Employee{PartitionKey: "Sales", RowKey: id, Name: "Employee " + id, Salary: int64(i)}
	}
	if _, err := s.current.BulkWrite(ctx, emps, entity.BulkOptions{}); err != nil {
		b.Fatal(err)
	}
	return s
}

func keysPad(i int) string {
	const digits = "0123456789"
	buf := []byte("000000")
	for j := len(buf) - 1; j >= 0 && i > 0; j-- {
		buf[j] = digits[i%10]
		i /= 10
	}
	return string(buf)
}

func archiveTablekit(b *testing.B, s archiveBench) {
	ctx := context.Background()
	current := patterntest.View[Employee](b, s.metered, s.current)
	archive := patterntest.View[Employee](b, s.metered, s.archive)
	var done atomic.Int64
	finished := make(chan struct{})
	p, err := eventual.New(patterntest.SameQueues(b, s.metered, s.qs), nil, eventual.Config{
		Workers:            benchWorkers,
		EnqueueConcurrency: benchWorkers,
		PollInterval:       10 * time.Millisecond,
		Hooks: eventual.Hooks{Outcome: func(o eventual.Outcome) {
			if o.Result == eventual.Done && done.Add(1) == int64(s.n) {
				close(finished)
			}
		}},
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := eventual.Handle(p, archiveKind, func(ctx context.Context, m ArchiveEmployee) error {
		return eventual.Move(ctx, current, archive, m.Department, m.ID, nil)
	}, eventual.HandleOptions{}); err != nil {
		b.Fatal(err)
	}
	msgs := make([]eventual.Message, s.n)
	for i, id := range s.ids {
		if msgs[i], err = archiveKind.Message(ArchiveEmployee{"Sales", id}); err != nil {
			b.Fatal(err)
		}
	}
	if err := p.Enqueue(ctx, msgs...); err != nil {
		b.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- p.Run(rctx) }()
	<-finished
	cancel()
	if err := <-stopped; err != nil {
		b.Fatal(err)
	}
}

// archiveHandwritten is what a careful programmer writes without tablekit:
// the same steps, the same message size class, the same concurrency.
func archiveHandwritten(b *testing.B, s archiveBench) {
	ctx := context.Background()
	name := func(q *azqueue.QueueClient) string {
		parts, err := azqueue.ParseURL(q.URL())
		if err != nil {
			b.Fatal(err)
		}
		return parts.QueueName
	}
	queue := s.metered.QueueService.NewQueueClient(name(s.qs[0].Work))
	current := s.metered.TableService.NewClient(s.current.Name())
	archive := s.metered.TableService.NewClient(s.archive.Name())

	type msg struct {
		Department string `json:"department"`
		ID         string `json:"id"`
	}
	// Enqueue with the same concurrency.
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range benchWorkers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(s.n); i = next.Add(1) - 1 {
				body, _ := json.Marshal(msg{"Sales", s.ids[i]})
				if _, err := queue.EnqueueMessage(ctx, base64.StdEncoding.EncodeToString(body), nil); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()

	var done atomic.Int64
	for range benchWorkers {
		wg.Go(func() {
			for done.Load() < int64(s.n) {
				resp, err := queue.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{
					NumberOfMessages:  to.Ptr(int32(32)),
					VisibilityTimeout: to.Ptr(int32(30)),
				})
				if err != nil {
					b.Error(err)
					return
				}
				if len(resp.Messages) == 0 {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				for _, dm := range resp.Messages {
					raw, err := base64.StdEncoding.DecodeString(*dm.MessageText)
					var m msg
					if err == nil {
						err = json.Unmarshal(raw, &m)
					}
					if err != nil {
						b.Error(err)
						return
					}
					if err := moveRaw(ctx, current, archive, m.Department, m.ID); err != nil {
						b.Error(err)
						return
					}
					if _, err := queue.DeleteMessage(ctx, *dm.MessageID, *dm.PopReceipt, nil); err != nil {
						b.Error(err)
						return
					}
					done.Add(1)
				}
			}
		})
	}
	wg.Wait()
}

// moveRaw is Move over raw aztables: read, upsert, conditional delete.
func moveRaw(ctx context.Context, from, to *aztables.Client, pk, rk string) error {
	got, err := from.GetEntity(ctx, pk, rk, nil)
	if err != nil {
		return err
	}
	var e aztables.EDMEntity
	if err := json.Unmarshal(got.Value, &e); err != nil {
		return err
	}
	body, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if _, err := to.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
		return err
	}
	_, err = from.DeleteEntity(ctx, pk, rk, &aztables.DeleteEntityOptions{IfMatch: &got.ETag})
	return err
}
