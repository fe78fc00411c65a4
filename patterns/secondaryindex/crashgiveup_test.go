package secondaryindex_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestCrashThenFreshProcess inserts (or deletes) an employee whose email
// is indexed (in its partition, or another) and kills the process before each of
// the write's storage requests, and once the service executed each of
// them (crashtest.EveryStep). The program that restarts does not repeat
// the call: a fresh Set — its outbox relay, a fresh worker draining the
// queue, and a Rebuild with a clock past Config.Grace, as an operator's
// nightly run — is all the recovery. Afterwards nothing has drifted,
// nothing is poisoned, and the email finds exactly the employee the
// table holds (read with a raw client): the write is either wholly there
// or wholly not, and no reservation of an insert that never landed is
// left behind.
func TestCrashThenFreshProcess(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		placement secondaryindex.Placement
		op        string
	}{
		{secondaryindex.SamePartition, "insert"}, {secondaryindex.SamePartition, "delete"},
		{secondaryindex.OtherPartition, "insert"}, {secondaryindex.OtherPartition, "delete"},
	} {
		placement, op := tc.placement, tc.op
		t.Run(placement.String()+"/"+op, func(t *testing.T) {
			t.Parallel()
			crashtest.EveryStep(t, env, crashtest.Scenario{Timeout: time.Minute, Prepare: func(t *testing.T) crashtest.Run {
				ctx := context.Background()
				tbl := employees(t, env)
				qs := patterntest.Queues(t, env, 1)
				newSet := func(e *integration.Env) *secondaryindex.Set[Employee] {
					if placement == secondaryindex.SamePartition {
						return localSet(t, patterntest.View[Employee](t, e, tbl))
					}
					s, _ := remoteSet(t, e, qs, tbl, nil, fast())
					return s
				}
				epk := map[secondaryindex.Placement]string{secondaryindex.SamePartition: "Sales", secondaryindex.OtherPartition: "email_Sales"}[placement]
				s := newSet(env)
				if op == "delete" {
					e := Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "Jones", Email: "jones@x.com"}
					if err := s.Insert(ctx, &e); err != nil {
						t.Fatal(err)
					}
					if err := drainSet(ctx, t, env, qs, tbl); err != nil {
						t.Fatal(err)
					}
				}
				return crashtest.Run{
					Work: func(ctx context.Context, kenv *integration.Env) error {
						ks := newSet(kenv)
						if op == "delete" {
							return ks.Delete(ctx, "Sales", empid(1), "")
						}
						return ks.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "Jones", Email: "jones@x.com"})
					},
					Recover: func(ctx context.Context) error {
						if placement == secondaryindex.SamePartition {
							return nil // one transaction: nothing to finish
						}
						fresh, _ := remoteSet(t, env, qs, tbl, nil, fast())
						if _, err := fresh.Relay(ctx); err != nil {
							return err
						}
						if err := drainSet(ctx, t, env, qs, tbl); err != nil {
							return err
						}
						cfg := remoteConfig(nil)
						p, err := eventual.New(patterntest.SameQueues(t, env, qs), nil, fast())
						if err != nil {
							return err
						}
						cfg.Processor = p
						late, err := secondaryindex.New(tbl, cfg, emailIndex(secondaryindex.OtherPartition), nameIndex(secondaryindex.OtherPartition))
						if err != nil {
							return err
						}
						secondaryindex.AgeReservations(late, time.Minute)
						_, err = late.Rebuild(ctx, secondaryindex.CheckOptions{})
						return err
					},
					Check: func(t *testing.T) {
						raw := rawTable(t, tbl.Name())
						there := rawGet(t, raw, "Sales", empid(1)) != nil
						entry := rawGet(t, raw, epk, "email_jones@x.com")
						switch {
						case there && (entry == nil || entry[secondaryindex.PropPrimaryRK] != empid(1) || entry[secondaryindex.PropClaim] != nil):
							t.Errorf("the employee is there, its entry %v", entry)
						case !there && entry != nil:
							t.Errorf("the employee is not there, its entry is: %v", entry)
						}
						if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
							t.Errorf("drift: %v", fs)
						}
						if n := poisoned(t, qs); n != 0 {
							t.Errorf("%d messages poisoned", n)
						}
						_, err := s.Lookup(context.Background(), "email", "Sales", "jones@x.com", secondaryindex.LookupOptions{Verify: true})
						if there != (err == nil) || !there && !errors.Is(err, entity.ErrNotFound) {
							t.Errorf("the lookup: %v (employee there: %t)", err, there)
						}
					},
				}
			}})
		})
	}
}
