package indexentity_test

import (
	"context"
	"testing"
	"time"

	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestCrashThenFreshProcess inserts (or deletes) an employee whose last
// name is indexed (in its partition, another, or a blob) and kills the process
// before each of the write's storage requests, and once the service
// executed each of them (crashtest.EveryStep). The program that restarts
// does not repeat the call: a fresh Set's outbox relay and a fresh worker
// draining the queue are all the recovery. Afterwards the list holds
// exactly the employees the table holds, nothing has drifted and nothing
// is poisoned: the write is wholly there or wholly not.
func TestCrashThenFreshProcess(t *testing.T) {
	t.Parallel()
	for _, placement := range append([]indexentity.Placement{indexentity.SamePartition}, placements...) {
		for _, op := range []string{"insert", "delete"} {
			t.Run(placement.String()+"/"+op, func(t *testing.T) {
				t.Parallel()
				crashtest.EveryStep(t, env, crashtest.Scenario{Timeout: time.Minute, Prepare: func(t *testing.T) crashtest.Run {
					w := newWorld(t, placement, 1)
					if op == "delete" {
						w.seedRemote(t, "Jones", "Jones")
					} else {
						w.seedRemote(t, "Jones")
					}
					return crashtest.Run{
						Work: func(ctx context.Context, kenv *integration.Env) error {
							s, _ := w.set(t, kenv, patterntest.Crashy(), indexentity.Config{})
							if op == "delete" {
								return s.Delete(ctx, "Sales", "000002", "")
							}
							return s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000002", LastName: "Jones"})
						},
						Recover: func(ctx context.Context) error { return w.recover(ctx, t, patterntest.Crashy()) },
						Check:   func(t *testing.T) { w.check(t, "Jones") },
					}
				}})
			})
		}
	}
}
