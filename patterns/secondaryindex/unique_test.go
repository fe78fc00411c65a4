package secondaryindex_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestUniqueRace: eight writers claim one email at the same moment, by
// inserting new employees and by changing existing ones, with the
// entries in the primary's partition and in another: exactly one wins,
// the others get a *UniqueError, and after the queue drained the email
// finds the winner and nothing drifted.
func TestUniqueRace(t *testing.T) {
	t.Parallel()
	for _, placement := range []secondaryindex.Placement{secondaryindex.SamePartition, secondaryindex.OtherPartition} {
		for _, op := range []string{"insert", "modify"} {
			t.Run(fmt.Sprintf("%v/%s", placement, op), func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				const writers = 8
				tbl := employees(t, env)
				qs := patterntest.Queues(t, env, 1)
				var s *secondaryindex.Set[Employee]
				var drainIt func() error
				if placement == secondaryindex.SamePartition {
					s = localSet(t, tbl)
					drainIt = func() error { return nil }
				} else {
					rs, rp := remoteSet(t, env, qs, tbl, nil, fast())
					s = rs
					drainIt = func() error {
						dctx, cancel := context.WithTimeout(ctx, time.Minute)
						defer cancel()
						return patterntest.Drain(dctx, rp, qs)
					}
				}
				if op == "modify" {
					for i := range writers {
						e := Employee{PartitionKey: "Sales", RowKey: empid(i), LastName: "Jones", Email: fmt.Sprintf("e%d@contoso.com", i)}
						if err := s.Insert(ctx, &e); err != nil {
							t.Fatal(err)
						}
					}
				}
				barrier := crashtest.NewBarrier(writers)
				var wg sync.WaitGroup
				errs := make([]error, writers)
				for i := range writers {
					wg.Go(func() {
						if err := barrier.Wait(ctx); err != nil {
							errs[i] = err
							return
						}
						if op == "insert" {
							e := Employee{PartitionKey: "Sales", RowKey: empid(100 + i), LastName: "Smith", Email: "race@contoso.com"}
							errs[i] = s.Insert(ctx, &e)
							return
						}
						_, errs[i] = s.Modify(ctx, "Sales", empid(i), func(e *Employee) error {
							e.Email = "race@contoso.com"
							return nil
						}, entity.ModifyOptions{})
					})
				}
				wg.Wait()
				winner := -1
				for i, err := range errs {
					var ue *secondaryindex.UniqueError
					switch {
					case err == nil:
						if winner >= 0 {
							t.Errorf("writers %d and %d both won", winner, i)
						}
						winner = i
					case errors.As(err, &ue):
					default:
						t.Errorf("writer %d: %v", i, err)
					}
				}
				if winner < 0 {
					t.Fatal("no writer won")
				}
				if err := drainIt(); err != nil {
					t.Fatal(err)
				}
				want := empid(winner)
				if op == "insert" {
					want = empid(100 + winner)
				}
				got, err := s.Lookup(ctx, "email", "Sales", "race@contoso.com", secondaryindex.LookupOptions{Verify: true})
				if err != nil || got.RowKey != want {
					t.Errorf("the email finds %q (%v), want the winner %s", got.RowKey, err, want)
				}
				n := 0
				for e, err := range tbl.Query(ctx, entity.Query{}) {
					if err != nil {
						t.Fatal(err)
					}
					if e.Email == "race@contoso.com" && e.RowKey[:6] == "empid_" {
						n++
					}
				}
				if n != 1 {
					t.Errorf("%d employees have the email", n)
				}
				if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
					t.Errorf("drift: %v", fs)
				}
			})
		}
	}
}
