package secondaryindex_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestConcurrentWriters: 16 writers change the emails (unique) and last
// names (non-unique) of the same 50 employees at once, while 5% of the
// replies are lost (azcore resends transactions that were applied).
// Afterwards the check finds no drift, and every lookup returns exactly
// the employees holding the value.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const n, writers, rounds = 50, 16, 12
	tbl := employees(t, env)
	s := localSet(t, tbl)
	for i := range n {
		e := Employee{PartitionKey: "Sales", RowKey: empid(i), FirstName: "F", LastName: "Initial", Email: fmt.Sprintf("e%d@contoso.com", i)}
		if err := s.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
	}
	f := faults.New(faults.Config{LoseReply: 0.05, Seed: 7})
	meter := cost.NewMeter()
	fs := localSet(t, patterntest.View[Employee](t, patterntest.Faulty(env, meter.Policy(), f), tbl))

	var mu sync.Mutex
	count := map[string]int{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range rounds {
				id := empid(r.IntN(n))
				email := fmt.Sprintf("e%d@contoso.com", r.IntN(2*n)) // often taken
				last := []string{"Jones", "Smith", "Brown", "Taylor"}[r.IntN(4)]
				_, err := fs.Modify(ctx, "Sales", id, func(e *Employee) error {
					e.Email, e.LastName, e.Age = email, last, e.Age+1
					return nil
				}, entity.ModifyOptions{})
				var ue *secondaryindex.UniqueError
				outcome := "ok"
				switch {
				case errors.As(err, &ue):
					outcome = "taken"
				case errors.Is(err, entity.ErrOutcomeUnknown):
					outcome = "unknown"
				case errors.Is(err, entity.ErrContention):
					outcome = "conflict"
				case errors.Is(err, faults.ErrInjected):
					outcome = "failed" // every try's reply lost: azcore gave up
				case err != nil:
					t.Errorf("Modify %s: %v", id, err)
					return
				}
				mu.Lock()
				count[outcome]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("outcomes %v; faults %+v; storage %v", count, f.Stats(), meter.Snapshot())
	if count["ok"] == 0 || count["taken"] == 0 {
		t.Errorf("the load did not change emails and collide: %v", count)
	}
	if f.Stats().LostReplies == 0 {
		t.Error("no reply was lost")
	}
	if got := findings(t, s, secondaryindex.CheckOptions{}); len(got) != 0 {
		t.Errorf("drift after the writers: %v", got)
	}
	checkLookups(t, s, tbl, "Sales")
}

// checkLookups checks that every lookup of every current value returns
// exactly the employees holding it, and nothing else is indexed.
func checkLookups(t *testing.T, s *secondaryindex.Set[Employee], tbl *entity.Table[Employee], pk string) {
	t.Helper()
	ctx := context.Background()
	byName := map[string][]string{}
	emails := 0
	for e, err := range tbl.Query(ctx, entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.PartitionKey != pk || len(e.RowKey) < 6 || e.RowKey[:6] != "empid_" {
			continue
		}
		byName[e.LastName] = append(byName[e.LastName], e.RowKey)
		got, err := s.Lookup(ctx, "email", pk, strings.ToLower(e.Email), secondaryindex.LookupOptions{})
		if err != nil || got.RowKey != e.RowKey || got.LastName != e.LastName || got.Age != e.Age {
			t.Errorf("lookup of %s's email %s: %+v, %v", e.RowKey, e.Email, got, err)
		}
		emails++
	}
	var total int
	for name, want := range byName {
		var got []string
		for e, err := range s.LookupAll(ctx, "name", pk, name, secondaryindex.LookupOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, e.RowKey)
		}
		if !slices.Equal(got, want) {
			t.Errorf("LookupAll(%s) = %v, want %v", name, got, want)
		}
		total += len(want)
	}
	var all int
	for _, err := range s.LookupPrefix(ctx, "email", pk, "", secondaryindex.LookupOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		all++
	}
	if all != emails {
		t.Errorf("%d email entries for %d employees", all, emails)
	}
	all = 0
	for _, err := range s.LookupPrefix(ctx, "name", pk, "", secondaryindex.LookupOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		all++
	}
	if all != total {
		t.Errorf("%d name entries for %d employees", all, total)
	}
}
