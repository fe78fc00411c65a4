package secondaryindex_test

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
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestMoveToBesideAnotherWriter archives an employee indexed table-wide
// and in its partition with MoveTo, loses the reply of each of its
// requests in turn — the read, the copy to the archive, the delete's
// transaction, its message — and has a second writer insert, replace,
// merge or delete the employee through a healthy Set inside azcore's
// retry window (seamtest.EveryReply). The documentation promises an
// idempotent step that never loses a primary: MoveTo answers nil or an
// unknown outcome (entity.ErrOutcomeUnknown), and run again, as an
// eventual handler's redelivery would, answers nil. Then, once the outbox
// relayed and the queue drained, read raw: the employee is in the archive
// (or, for a second writer that inserted it again after the move, in the
// table, holding the second writer's values); a change of the second
// writer that succeeded is in the archive or the table, never lost; the
// table holds no entry of an employee no longer there, nothing is
// poisoned, and Check finds no drift.
func TestMoveToBesideAnotherWriter(t *testing.T) {
	t.Parallel()
	seamtest.EveryReply(t, env, seamtest.Race{Timeout: 2 * time.Minute, Prepare: func(t *testing.T) seamtest.RaceRun {
		if !strings.HasSuffix(t.Name(), "/no_fault") {
			t.Parallel() // each run has its own tables and queue
		}
		ctx := context.Background()
		tbl, archive := employees(t, env), employees(t, env)
		qs := patterntest.Queues(t, env, 1)
		other, p := movedSet(t, env, qs, tbl, crashy())
		if err := other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(1), FirstName: "orig", LastName: "Orig", Email: "orig@x.com", Age: 30}); err != nil {
			t.Fatal(err)
		}
		drainWide(t, p, qs)
		var compErr error
		competed := false
		return seamtest.RaceRun{
			Work: func(ctx context.Context, e *integration.Env) error {
				s, _ := movedSet(t, e, qs, tbl, crashy())
				return s.MoveTo(ctx, "Sales", empid(1), patterntest.View[Employee](t, e, archive))
			},
			Compete: func(ctx context.Context, kind string, _ *http.Request) error {
				competed = true
				switch kind {
				case seamtest.Insert:
					compErr = other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(1), FirstName: "theirs", LastName: "Theirs", Email: "theirs@x.com", Age: 30})
				case seamtest.Replace:
					cur, err := tbl.Get(ctx, "Sales", empid(1))
					if err != nil {
						compErr = err
						break
					}
					cur.FirstName, cur.Email = "theirs", "theirs@x.com"
					compErr = other.Update(ctx, &cur)
				case seamtest.Merge:
					_, compErr = other.Modify(ctx, "Sales", empid(1), func(e *Employee) error { e.Age += 100; return nil }, entity.ModifyOptions{})
				default:
					compErr = other.Delete(ctx, "Sales", empid(1), "")
				}
				return compErr
			},
			Check: func(t *testing.T, kind string, err error) {
				ctx := context.Background()
				if err != nil {
					if !errors.Is(err, entity.ErrOutcomeUnknown) {
						t.Errorf("MoveTo beside %s: %v, want nil or an unknown outcome", kind, err)
					}
					if err := other.MoveTo(ctx, "Sales", empid(1), archive); err != nil {
						t.Fatalf("MoveTo again beside %s: %v", kind, err)
					}
				}
				if _, err := other.Relay(ctx); err != nil {
					t.Fatal(err)
				}
				_, p := movedSet(t, env, qs, tbl, crashy())
				drainWide(t, p, qs)
				final := rawGet(t, rawTable(t, tbl.Name()), "Sales", empid(1))
				moved := rawGet(t, rawTable(t, archive.Name()), "Sales", empid(1))
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
							return m != nil && m["Age"] == float64(130)
						case seamtest.Delete:
							return true
						}
						return m != nil && m["FirstName"] == "theirs"
					}
					if !holds(final) && !holds(moved) {
						t.Errorf("MoveTo beside %s: the second writer's change is lost: table %v, archive %v", kind, final, moved)
					}
				}
				rows := indexRows(t, tbl.Name())
				if final == nil && len(rows) != 0 {
					t.Errorf("MoveTo beside %s: orphan rows %q", kind, rows)
				}
				if n := poisoned(t, qs); n != 0 {
					t.Errorf("MoveTo beside %s: %d messages poisoned", kind, n)
				}
				if fs := findings(t, other, secondaryindex.CheckOptions{}); len(fs) != 0 {
					t.Errorf("MoveTo beside %s: drift %v", kind, fs)
				}
				if err != nil || competed && compErr != nil {
					t.Logf("MoveTo beside %s: %v (theirs: %v)", kind, err, compErr)
				}
			},
		}
	}})
}
