package eventual_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/throttle"
)

// rawRowKeys lists table name's RowKeys through env's own client (no
// Limiter, no Simulator, no tablekit decoding), sorted.
func rawRowKeys(t *testing.T, name string) []string {
	t.Helper()
	var out []string
	for p := env.TableService.NewClient(name).NewListEntitiesPager(nil); p.More(); {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Entities {
			var e struct{ RowKey string }
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
			out = append(out, e.RowKey)
		}
	}
	slices.Sort(out)
	return out
}

// TestLimiterPacesWorkers: the guide's archive example run by four
// workers on two queues, whose queue and table clients all come from an
// Account whose Options share one Limiter, against a Simulator serving 20
// requests/s per service: every try — receives, deletes, the handlers'
// reads and writes — goes through the Limiter, fewer are throttled than
// by the same workers without it, and every employee is archived and
// counted once, read back raw.
func TestLimiterPacesWorkers(t *testing.T) {
	const rate, n = 20, 8
	run := func(t *testing.T, lim *throttle.Limiter) (throttle.SimStats, archiver, []string) {
		acct, sim := env.ThrottledAccount(t, lim, throttle.SimConfig{AccountRate: rate})
		raw := archiver{patterntest.Table[Employee](t, env), patterntest.Table[Employee](t, env), patterntest.Table[Department](t, env)}
		ids := seed(t, raw.current, raw.depts, "Sales", n)
		svc, err := acct.TableService()
		if err != nil {
			t.Fatal(err)
		}
		a := archiver{
			current: viewOf[Employee](t, svc, raw.current.Name()),
			archive: viewOf[Employee](t, svc, raw.archive.Name()),
			depts:   viewOf[Department](t, svc, raw.depts.Name()),
		}
		qsvc, err := acct.QueueService()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, q := range patterntest.Queues(t, env, 2) {
			parts, err := azqueue.ParseURL(q.Work.URL())
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, parts.QueueName)
		}
		p, err := eventual.New(eventual.QueuesOf(qsvc, names...), nil, patterntest.Fast())
		if err != nil {
			t.Fatal(err)
		}
		if err := eventual.Handle(p, archiveKind, a.handle, eventual.HandleOptions{}); err != nil {
			t.Fatal(err)
		}
		var msgs []eventual.Message
		for _, id := range ids {
			m, err := archiveKind.Message(ArchiveEmployee{"Sales", id})
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, m)
		}
		if err := p.Enqueue(t.Context(), msgs...); err != nil && lim != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if _, err := p.Drain(ctx); err != nil && lim != nil {
			t.Fatal(err)
		}
		return sim.Stats(), raw, ids
	}

	lim, err := throttle.NewLimiter(throttle.Config{AccountRate: rate})
	if err != nil {
		t.Fatal(err)
	}
	with, a, ids := run(t, lim)
	without, _, _ := run(t, nil)
	t.Logf("with the Limiter: %d of %d tries throttled; without: %d of %d", with.Throttled, with.Requests, without.Throttled, without.Requests)
	if got := lim.Stats().Requests; got != with.Requests {
		t.Errorf("the Limiter paced %d tries, the Simulator saw %d: some went around it", got, with.Requests)
	}
	if without.Throttled == 0 {
		t.Fatalf("without the Limiter no try was throttled: the load does not exceed the simulated rate")
	}
	if with.Throttled >= without.Throttled {
		t.Errorf("%d tries throttled with the Limiter, %d without: want fewer with it", with.Throttled, without.Throttled)
	}

	if got := rawRowKeys(t, a.current.Name()); len(got) != 0 {
		t.Errorf("Current still holds %v", got)
	}
	if got := rawRowKeys(t, a.archive.Name()); !slices.Equal(got, ids) {
		t.Errorf("Archive holds %v, want %v", got, ids)
	}
	resp, err := env.TableService.NewClient(a.depts.Name()).GetEntity(context.Background(), "Sales", "dept", nil)
	if err != nil {
		t.Fatal(err)
	}
	var d struct{ Archived json.Number }
	if err := json.Unmarshal(resp.Value, &d); err != nil {
		t.Fatal(err)
	}
	if d.Archived.String() != strconv.Itoa(n) {
		t.Errorf("the department counts %s archived, want %d", d.Archived, n)
	}
}

// viewOf is a typed view of table name through svc.
func viewOf[T any](t *testing.T, svc *aztables.ServiceClient, name string) *entity.Table[T] {
	t.Helper()
	tbl, err := entity.NewTableFromService[T](svc, name)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}
