package indexentity_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/seamtest"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestMoveToBesideAnotherWriter archives employee 000002 of three
// Joneses with MoveTo, loses the reply of each of its requests in turn —
// the read, the copy to the archive, the delete's requests — and has a
// second writer insert, replace (renaming to Smith), merge or delete the
// employee through a healthy Set inside azcore's retry window
// (seamtest.EveryReply), in both placements. The documentation promises
// an idempotent step that never loses a primary: MoveTo answers nil or an
// unknown outcome (entity.ErrOutcomeUnknown), and run again, as an
// eventual handler's redelivery would, answers nil. Then, once the outbox
// relayed and the queue drained, read raw: the employee is in the archive
// (or, for a second writer that inserted it again after the move, in the
// table, holding the second writer's values); a change of the second
// writer that succeeded is in the archive or the table, never lost; every
// list names exactly the employees the table holds, nothing is left in
// the queues, and Check finds no drift.
func TestMoveToBesideAnotherWriter(t *testing.T) {
	t.Parallel()
	for _, placement := range []indexentity.Placement{indexentity.SamePartition, indexentity.OtherPartition} {
		t.Run(placement.String(), func(t *testing.T) {
			t.Parallel()
			seamtest.EveryReply(t, env, seamtest.Race{Timeout: 2 * time.Minute, Prepare: func(t *testing.T) seamtest.RaceRun {
				if !strings.HasSuffix(t.Name(), "/no_fault") {
					t.Parallel() // each run has its own tables and queue
				}
				w := newWorld(t, placement, 1)
				w.seedRemote(t, "Jones", "Jones", "Jones")
				archive := patterntest.Table[Employee](t, env)
				other, _ := w.set(t, env, patterntest.Crashy(), indexentity.Config{Retry: hot})
				var compErr error
				competed := false
				return seamtest.RaceRun{
					Work: func(ctx context.Context, e *integration.Env) error {
						s, _ := w.set(t, e, patterntest.Crashy(), indexentity.Config{Retry: hot})
						return s.MoveTo(ctx, "Sales", "000002", patterntest.View[Employee](t, e, archive))
					},
					Compete: func(ctx context.Context, kind string, _ *http.Request) error {
						competed = true
						switch kind {
						case seamtest.Insert:
							compErr = other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000002", FirstName: "theirs", LastName: "Jones"})
						case seamtest.Replace:
							cur, err := w.emps.Get(ctx, "Sales", "000002")
							if err != nil {
								compErr = err
								break
							}
							cur.FirstName, cur.LastName = "theirs", "Smith"
							compErr = other.Update(ctx, &cur)
						case seamtest.Merge:
							_, compErr = other.Modify(ctx, "Sales", "000002", func(e *Employee) error { e.City = "Paris"; return nil }, entity.ModifyOptions{})
						default:
							compErr = other.Delete(ctx, "Sales", "000002", "")
						}
						return compErr
					},
					Check: func(t *testing.T, kind string, err error) {
						ctx := context.Background()
						if err != nil {
							if !errors.Is(err, entity.ErrOutcomeUnknown) {
								t.Errorf("MoveTo beside %s: %v, want nil or an unknown outcome", kind, err)
							}
							if err := other.MoveTo(ctx, "Sales", "000002", archive); err != nil {
								t.Fatalf("MoveTo again beside %s: %v", kind, err)
							}
						}
						if err := w.recover(ctx, t, patterntest.Crashy()); err != nil {
							t.Fatal(err)
						}
						final := rawGet(t, w.emps.Name(), "Sales", "000002")
						moved := rawGet(t, archive.Name(), "Sales", "000002")
						succeeded := competed && compErr == nil
						reinserted := kind == seamtest.Insert && succeeded && err == nil
						switch {
						case moved == nil && (kind != seamtest.Delete || !succeeded || final != nil):
							t.Errorf("MoveTo beside %s (theirs: %v): the employee is not in the archive; table: %v", kind, compErr, final)
						case final != nil && !reinserted:
							t.Errorf("MoveTo beside %s (theirs: %v): the employee is still in the table: %v", kind, compErr, final)
						case final != nil && final["FirstName"] != "theirs":
							t.Errorf("MoveTo beside %s: the table holds %v after the move", kind, final)
						}
						if succeeded {
							holds := func(m map[string]any) bool {
								switch kind {
								case seamtest.Merge:
									return m != nil && m["City"] == "Paris"
								case seamtest.Delete:
									return true
								}
								return m != nil && m["FirstName"] == "theirs"
							}
							if !holds(final) && !holds(moved) {
								t.Errorf("MoveTo beside %s: the second writer's change is lost: table %v, archive %v", kind, final, moved)
							}
						}
						w.check(t, "Jones", "Smith")
						if err != nil || competed && compErr != nil {
							t.Logf("MoveTo beside %s: %v (theirs: %v)", kind, err, compErr)
						}
					},
				}
			}})
		})
	}
}
