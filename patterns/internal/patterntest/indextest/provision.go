package indextest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// Provision runs, as a subtest per layout (an Other layout with an
// entries table; Blob, when the package has it), a Set opened on tables,
// queues and a container that do not exist yet, whose Provision creates
// them while the reply of each create is lost (executed, then resent by
// azcore, which meets what the first try made): it returns nil, and again
// when run a second time. Read raw, the tables, the queues and the
// container then exist, and the Set works: an insert is listed once the
// queue drained, and Check finds nothing.
func Provision(t *testing.T, a Adapter) {
	for _, l := range []Layout{{Placement: Other, Entries: true}, {Placement: Blob}} {
		if !a.has(l) {
			continue
		}
		t.Run(l.String(), func(t *testing.T) {
			t.Parallel()
			provision(t, &a, l)
		})
	}
}

// firstCreates matches the first try of each request that creates a
// table, a queue or a container, so that azcore's resend of it, the next
// create request (Provision creates one thing at a time), passes. The
// Injector calls it under its lock.
func firstCreates() func(*http.Request) bool {
	resend := false
	return func(r *http.Request) bool {
		create := false
		switch r.Method {
		case http.MethodPost:
			create = strings.HasSuffix(r.URL.Path, "/Tables")
		case http.MethodPut:
			q := r.URL.Query()
			create = q.Get("comp") == "" && (q.Get("restype") == "container" || q.Get("restype") == "")
		}
		if !create {
			return false
		}
		lose := !resend
		resend = !resend
		return lose
	}
}

func provision(t *testing.T, a *Adapter, l Layout) {
	ctx := context.Background()
	e := a.Env
	f := faults.New(faults.Config{})
	lossy := e.With(f)
	unmade := func() *entity.Table[entity.DynamicEntity] {
		tbl, err := entity.NewTableFromService[entity.DynamicEntity](e.TableService, e.TableName(t))
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	st := Store{Primaries: unmade(), Entries: unmade()}
	creates := 1 + 2 // the primaries' table, the work and poison queues
	if l.Entries {
		creates++
	}
	if l.Placement == Blob {
		name := e.ContainerName(t)
		st.Container = lossy.BlobService.ServiceClient().NewContainerClient(name)
		t.Cleanup(func() {
			_, _ = e.BlobService.ServiceClient().NewContainerClient(name).Delete(context.Background(), nil)
		})
		creates++
	}
	queue := e.QueueName(t)
	t.Cleanup(func() {
		for _, n := range []string{queue, queue + eventual.PoisonSuffix} {
			_, _ = e.QueueService.NewQueueClient(n).Delete(context.Background(), nil)
		}
	})
	cfg := patterntest.Fast()
	cfg.RetryDelay, cfg.MaxRetryDelay, cfg.MaxDeliveries = 200*time.Millisecond, time.Second, 20
	p, err := eventual.New(eventual.QueuesOf(lossy.QueueService, queue), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := a.Open(t, lossy, st, l, p)
	f.LoseNext(creates, firstCreates())
	if err := s.Provision(ctx); err != nil {
		t.Fatalf("Provision with every create's reply lost: %v", err)
	}
	if lost := f.Stats().LostReplies; lost != int64(creates) {
		t.Errorf("%d replies lost, want %d (one per create)", lost, creates)
	}
	if err := s.Provision(ctx); err != nil {
		t.Fatalf("Provision again: %v", err)
	}
	exists(t, e, st, l, queue)
	o := Order(PK(0), 1, "pending")
	if err := s.Insert(ctx, o); err != nil {
		t.Fatal(err)
	}
	Drain(t, p)
	NoDrift(t, "after the insert", s)
	Lookups(t, s, l, []string{PK(0)}, map[string][]drift.Key{"pending": {{PartitionKey: PK(0), RowKey: RK(1)}}})
}

// exists fails the test unless what the Set of layout l uses exists, read
// with e's clients: the tables, the queue and its poison queue, and the
// container.
func exists(t *testing.T, e *integration.Env, st Store, l Layout, queue string) {
	t.Helper()
	ctx := context.Background()
	tables := []*entity.Table[entity.DynamicEntity]{st.Primaries}
	if l.Entries {
		tables = append(tables, st.Entries)
	}
	for _, tbl := range tables {
		pager := e.TableService.NewClient(tbl.Name()).NewListEntitiesPager(nil)
		if _, err := pager.NextPage(ctx); err != nil {
			t.Errorf("table %s: %v", tbl.Name(), err)
		}
	}
	for _, n := range []string{queue, queue + eventual.PoisonSuffix} {
		if _, err := e.QueueService.NewQueueClient(n).GetProperties(ctx, &azqueue.GetQueuePropertiesOptions{}); err != nil {
			t.Errorf("queue %s: %v", n, err)
		}
	}
	if st.Container != nil {
		if _, err := e.BlobService.ServiceClient().NewContainerClient(containerName(st)).GetProperties(ctx, nil); err != nil {
			t.Errorf("container: %v", err)
		}
	}
}

func containerName(st Store) string {
	u := st.Container.URL()
	return u[strings.LastIndex(strings.TrimSuffix(u, "/"), "/")+1:]
}
