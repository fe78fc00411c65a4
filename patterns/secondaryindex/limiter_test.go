package secondaryindex_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
	"github.com/tablekit/tablekit/throttle"
)

// rawRowKeys lists table name's PartitionKey/RowKey pairs through env's
// own client (no Limiter, no Simulator, no tablekit decoding).
func rawRowKeys(t *testing.T, name string) []string {
	t.Helper()
	sel := "PartitionKey,RowKey"
	pager := env.TableService.NewClient(name).NewListEntitiesPager(&aztables.ListEntitiesOptions{Select: &sel})
	var out []string
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Entities {
			var e struct{ PartitionKey, RowKey string }
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
			out = append(out, e.PartitionKey+"/"+e.RowKey)
		}
	}
	return out
}

// TestLimiterPacesCheckAndRebuild: primaries written around the Set (no
// entries), then Rebuild and Check through the clients of an Account
// whose Options share one Limiter, against a Simulator serving 15
// requests/s: every try goes through the Limiter, fewer are throttled
// than by the same Rebuild and Check without it, and the entries are all
// there, read back raw, with a Check through unthrottled clients finding
// nothing.
func TestLimiterPacesCheckAndRebuild(t *testing.T) {
	const rate, depts, per = 15, 2, 6
	run := func(t *testing.T, lim *throttle.Limiter) (throttle.SimStats, string) {
		acct, sim := env.ThrottledAccount(t, lim, throttle.SimConfig{AccountRate: rate})
		tbl := employees(t, env)
		var seed []Employee
		for d := range depts {
			for i := range per {
				seed = append(seed, Employee{PartitionKey: fmt.Sprintf("dept%d", d), RowKey: empid(i), FirstName: "F", LastName: []string{"Jones", "Smith"}[i%2], Email: fmt.Sprintf("d%d-%d@contoso.com", d, i), Age: int32(20 + i)})
			}
		}
		if _, err := tbl.BulkWrite(t.Context(), seed, entity.BulkOptions{}); err != nil {
			t.Fatal(err)
		}
		svc, err := acct.TableService()
		if err != nil {
			t.Fatal(err)
		}
		paced, err := entity.NewTableFromService[Employee](svc, tbl.Name())
		if err != nil {
			t.Fatal(err)
		}
		s := localSet(t, paced)
		sum, err := s.Rebuild(t.Context(), secondaryindex.CheckOptions{})
		if lim == nil {
			return sim.Stats(), tbl.Name()
		}
		if err != nil {
			t.Fatalf("Rebuild: %v (%+v)", err, sum)
		}
		if sum.Repaired != 2*depts*per {
			t.Errorf("Rebuild repaired %d, want %d", sum.Repaired, 2*depts*per)
		}
		if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
			t.Errorf("a Check after Rebuild found %v", fs)
		}
		return sim.Stats(), tbl.Name()
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

	var email, names int
	for _, k := range rawRowKeys(t, name) {
		_, rk, _ := strings.Cut(k, "/")
		switch {
		case strings.HasPrefix(rk, "email_"):
			email++
		case strings.HasPrefix(rk, "name_"):
			names++
		}
	}
	if email != depts*per || names != depts*per {
		t.Errorf("stored %d email and %d name entries, want %d each", email, names, depts*per)
	}
	raw, err := entity.NewTableFromService[Employee](env.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	if fs := findings(t, localSet(t, raw), secondaryindex.CheckOptions{}); len(fs) != 0 {
		t.Errorf("a Check through unthrottled clients found %v", fs)
	}
}
