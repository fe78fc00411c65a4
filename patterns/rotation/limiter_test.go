package rotation_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/rotation"
	"github.com/tablekit/tablekit/throttle"
)

// rawCount counts the entities of table name through env's own client
// (no Limiter, no Simulator, no decoding).
func rawCount(t *testing.T, name string) int {
	t.Helper()
	n := 0
	for p := env.TableService.NewClient(name).NewListEntitiesPager(nil); p.More(); {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Entities)
	}
	return n
}

// TestLimiterPacesRotation: a rotation's BulkWrite over four hourly
// tables, its Query across them and an Expire of the first, through the
// clients of an Account whose Options share one Limiter (the catalog's
// client and the service client the period tables are made from), after a
// burst of point reads at once, against a Simulator serving 10 requests/s: every try goes through the Limiter,
// fewer are throttled than by the same work without it, and the tables
// hold what was written, read back raw, the expired one gone.
func TestLimiterPacesRotation(t *testing.T) {
	const rate, hours, users, per = 10, 4, 2, 20
	run := func(t *testing.T, lim *throttle.Limiter) (throttle.SimStats, *fixture) {
		acct, sim := env.ThrottledAccount(t, lim, throttle.SimConfig{AccountRate: rate})
		f := newFixture(t)
		svc, err := acct.TableService()
		if err != nil {
			t.Fatal(err)
		}
		catalog, err := acct.Table(f.catalog)
		if err != nil {
			t.Fatal(err)
		}
		r, err := rotation.New(svc, catalog, rotation.Config[Attempt]{Name: f.name, Period: rotation.Hour, Time: attemptTime})
		if err != nil {
			t.Fatal(err)
		}
		// Twice the simulated rate's point reads at once (404s, counted as
		// requests): above the rate however slowly this machine sends the
		// rest, which it might send under it.
		var wg sync.WaitGroup
		for range 2 * rate {
			wg.Go(func() { _, _ = catalog.GetEntity(t.Context(), "burst", "none", nil) })
		}
		wg.Wait()
		var all []Attempt
		for h := range hours {
			all = append(all, attempts(base.Add(time.Duration(h)*time.Hour), users, per)...)
		}
		_, werr := r.BulkWrite(t.Context(), all, entity.BulkOptions{})
		n, qerr := 0, error(nil)
		for _, err := range r.Query(t.Context(), base, base.Add(hours*time.Hour), entity.Query{}) {
			if err != nil {
				qerr = err
				break
			}
			n++
		}
		_, eerr := r.Expire(t.Context(), base.Add(time.Hour))
		if lim != nil {
			if werr != nil || qerr != nil || eerr != nil {
				t.Fatalf("BulkWrite: %v; Query: %v; Expire: %v", werr, qerr, eerr)
			}
			if n != len(all) {
				t.Errorf("Query read %d of %d attempts", n, len(all))
			}
		}
		return sim.Stats(), f
	}

	lim, err := throttle.NewLimiter(throttle.Config{AccountRate: rate})
	if err != nil {
		t.Fatal(err)
	}
	with, f := run(t, lim)
	without, _ := run(t, nil)
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

	// Read back raw: the first hour's table is gone, the other three hold
	// their attempts (the table Ahead of the last hour holds none).
	tables := tablesOf(t, f.name)
	total := 0
	for _, name := range tables {
		total += rawCount(t, name)
	}
	if total != (hours-1)*users*per {
		t.Errorf("the rotation's tables %v hold %d attempts, want %d", tables, total, (hours-1)*users*per)
	}
	if len(tables) != hours {
		t.Errorf("tables %v: want %d (three hours and the one ahead)", tables, hours)
	}
}
