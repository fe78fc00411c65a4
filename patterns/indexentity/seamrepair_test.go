package indexentity_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/seamtest"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestRepairBesideWriter repairs a Missing member (its list deleted
// around the Set) and loses the reply of each of the repair's requests
// in turn, while a second writer inserts, replaces, merges or deletes the
// employee through a healthy Set inside the retry window
// (seamtest.EveryReply), in every placement. Repair reports success or
// drift.ErrRaced, nothing else; after success the lists have no drift,
// and after a race one Rebuild leaves none.
func TestRepairBesideWriter(t *testing.T) {
	t.Parallel()
	for _, c := range driftCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			seamtest.EveryReply(t, env, seamtest.Race{Prepare: func(t *testing.T) seamtest.RaceRun {
				if !strings.HasSuffix(t.Name(), "/no_fault") {
					t.Parallel()
				}
				ctx := context.Background()
				f := newFixture(t, c)
				r := &seamRun{op: "repair", w: f.w, local: c.placement == indexentity.SamePartition, other: f.s}
				f.insert(t, Employee{PartitionKey: "Sales", RowKey: "000001", FirstName: "orig", LastName: "Orig"})
				f.setList(t, "Sales", "Orig", nil)
				fs := findings(t, f.s, indexentity.CheckOptions{})
				if len(fs) != 1 || fs[0].Kind != drift.Missing {
					t.Fatalf("findings %v", fs)
				}
				return seamtest.RaceRun{
					Work: func(ctx context.Context, e *integration.Env) error {
						s, _ := f.w.set(t, e, patterntest.Fast(), indexentity.Config{})
						if r.local {
							s = r.set(t, e)
						}
						return s.Repair(ctx, fs[0])
					},
					Compete: func(ctx context.Context, kind string, _ *http.Request) error {
						return r.compete(ctx, t, kind)
					},
					Check: func(t *testing.T, kind string, err error) {
						if err != nil && !errors.Is(err, drift.ErrRaced) {
							t.Errorf("repair beside %s: %v, want success or drift.ErrRaced", kind, err)
						}
						f.settle(t)
						if err != nil {
							if _, rerr := f.s.Rebuild(ctx, indexentity.CheckOptions{}); rerr != nil {
								t.Fatal(rerr)
							}
						}
						noDrift(t, f.s)
					},
				}
			}})
		})
	}
}
