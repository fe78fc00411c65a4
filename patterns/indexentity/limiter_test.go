package indexentity_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/throttle"
)

// rawMembers reads table name through env's own client (no Limiter, no
// Simulator, no tablekit decoding) and returns, per PartitionKey, the
// members its index entities list, sorted.
func rawMembers(t *testing.T, name string) map[string][]string {
	t.Helper()
	pager := env.TableService.NewClient(name).NewListEntitiesPager(nil)
	out := map[string][]string{}
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Entities {
			var e map[string]any
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
			ms, ok := e[indexentity.PropMembers].(string)
			if !ok {
				continue
			}
			pk := e["PartitionKey"].(string)
			out[pk] = append(out[pk], strings.Split(strings.TrimSuffix(ms, "\n"), "\n")...)
		}
	}
	for _, ms := range out {
		slices.Sort(ms)
	}
	return out
}

// TestLimiterPacesCheckAndRebuild: employees written around the Set (no
// index entities), then Rebuild and Check through the clients of an
// Account whose Options share one Limiter, against a Simulator serving 15
// requests/s: every try goes through the Limiter, fewer are throttled
// than by the same Rebuild and Check without it, and the index entities
// list every employee, read back raw, with a Check through unthrottled
// clients finding nothing.
func TestLimiterPacesCheckAndRebuild(t *testing.T) {
	const rate, depts, per = 15, 3, 8
	names := []string{"Jones", "Smith", "Brown"}
	run := func(t *testing.T, lim *throttle.Limiter) (throttle.SimStats, string) {
		acct, sim := env.ThrottledAccount(t, lim, throttle.SimConfig{AccountRate: rate})
		emps := patterntest.Table[Employee](t, env)
		var seed []Employee
		for d := range depts {
			for i := range per {
				seed = append(seed, Employee{PartitionKey: fmt.Sprintf("dept%d", d), RowKey: fmt.Sprintf("e%03d", i), FirstName: "F", LastName: names[i%len(names)]})
			}
		}
		if _, err := emps.BulkWrite(t.Context(), seed, entity.BulkOptions{}); err != nil {
			t.Fatal(err)
		}
		svc, err := acct.TableService()
		if err != nil {
			t.Fatal(err)
		}
		paced, err := entity.NewTableFromService[Employee](svc, emps.Name())
		if err != nil {
			t.Fatal(err)
		}
		s, err := indexentity.New(paced, indexentity.Config{}, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := s.Rebuild(t.Context(), indexentity.CheckOptions{})
		if lim == nil {
			return sim.Stats(), emps.Name()
		}
		if err != nil {
			t.Fatalf("Rebuild: %v (%+v)", err, sum)
		}
		if sum.Repaired == 0 {
			t.Errorf("Rebuild repaired nothing: %+v", sum)
		}
		noDrift(t, s)
		return sim.Stats(), emps.Name()
	}

	lim, err := throttle.NewLimiter(throttle.Config{AccountRate: rate})
	if err != nil {
		t.Fatal(err)
	}
	with, name := run(t, lim)
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

	got := rawMembers(t, name)
	for d := range depts {
		pk := fmt.Sprintf("dept%d", d)
		var want []string
		for i := range per {
			want = append(want, fmt.Sprintf("e%03d", i))
		}
		if !slices.Equal(got[pk], want) {
			t.Errorf("%s: the index entities list %q, want %q", pk, got[pk], want)
		}
	}
	raw, err := entity.NewTableFromService[Employee](env.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := indexentity.New(raw, indexentity.Config{}, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	noDrift(t, s)
}
