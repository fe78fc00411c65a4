package secondaryindex_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/seamtest"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestRepairBesideWriter repairs a Missing entry (deleted around the
// Set) and loses the reply of each of the repair's requests in turn,
// while a second writer inserts, replaces, merges or deletes the employee
// through a healthy Set inside the retry window (seamtest.EveryReply), in
// both placements. Repair reports success or drift.ErrRaced, nothing
// else; after it reported success the index has no drift, and after it
// reported a race one Rebuild leaves none (read back with Check, and the
// entry with a raw client).
func TestRepairBesideWriter(t *testing.T) {
	t.Parallel()
	for _, placement := range []secondaryindex.Placement{secondaryindex.SamePartition, secondaryindex.OtherPartition} {
		t.Run(placement.String(), func(t *testing.T) {
			t.Parallel()
			seamtest.EveryReply(t, env, seamtest.Race{Prepare: func(t *testing.T) seamtest.RaceRun {
				if !strings.HasSuffix(t.Name(), "/no_fault") {
					t.Parallel()
				}
				ctx := context.Background()
				r := &seamRun{placement: placement, op: "repair", tbl: employees(t, env)}
				if placement == secondaryindex.OtherPartition {
					r.qs = patterntest.Queues(t, env, 1)
				}
				r.other = r.set(t, env)
				if err := r.other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(1), FirstName: "orig", LastName: "Orig", Email: "orig@x.com"}); err != nil {
					t.Fatal(err)
				}
				epk := "Sales"
				if placement == secondaryindex.OtherPartition {
					r.settle(t)
					epk = "email_Sales"
				}
				rawDelete(t, rawTable(t, r.tbl.Name()), epk, "email_orig@x.com")
				fs := findings(t, r.other, secondaryindex.CheckOptions{})
				if len(fs) != 1 || fs[0].Kind != drift.Missing {
					t.Fatalf("findings %v", fs)
				}
				return seamtest.RaceRun{
					Work: func(ctx context.Context, e *integration.Env) error { return r.set(t, e).Repair(ctx, fs[0]) },
					Compete: func(ctx context.Context, kind string, _ *http.Request) error {
						return r.compete(ctx, t, kind)
					},
					Check: func(t *testing.T, kind string, err error) {
						ctx := context.Background()
						if err != nil && !errors.Is(err, drift.ErrRaced) {
							t.Errorf("repair beside %s: %v, want success or drift.ErrRaced", kind, err)
						}
						r.settle(t)
						if err != nil {
							if _, rerr := r.other.Rebuild(ctx, secondaryindex.CheckOptions{}); rerr != nil {
								t.Fatal(rerr)
							}
							r.settle(t)
						}
						if fs := findings(t, r.other, secondaryindex.CheckOptions{}); len(fs) != 0 {
							t.Errorf("repair beside %s (%v): drift %v", kind, err, fs)
						}
						final := rawGet(t, rawTable(t, r.tbl.Name()), "Sales", empid(1))
						if final != nil && final["Email"] == "orig@x.com" && rawGet(t, rawTable(t, r.tbl.Name()), epk, "email_orig@x.com") == nil {
							t.Errorf("repair beside %s: the employee holds orig@x.com and has no entry", kind)
						}
					},
				}
			}})
		})
	}
}

// settle relays and drains the run's queue (OtherPartition).
func (r *seamRun) settle(t testing.TB) {
	t.Helper()
	if r.placement != secondaryindex.OtherPartition {
		return
	}
	ctx := context.Background()
	if _, err := r.other.Relay(ctx); err != nil {
		t.Fatal(err)
	}
	_, p := r.setAndProcessor(t, env)
	if err := patterntest.Drain(ctx, p, r.qs); err != nil {
		t.Fatal(err)
	}
}
