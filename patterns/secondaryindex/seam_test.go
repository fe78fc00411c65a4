package secondaryindex_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/seamtest"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// seamOps are the writes of a primary the seam tests run: each changes
// employee Sales/empid_000001 to FirstName "ours" with a new unique
// email and last name (Insert, Update, Modify), or deletes it.
var seamOps = []string{"insert", "update", "modify", "delete"}

// seamRun is one run of a lost-reply race of a Set's write.
type seamRun struct {
	placement secondaryindex.Placement
	op        string
	tbl       *entity.Table[Employee]
	qs        []eventual.Queue
	other     *secondaryindex.Set[Employee] // the second writer's, healthy
	seen      map[string]any                // the primary as the second writer read it; nil: absent
	competed  bool
	compErr   error    // the second writer's answer
	out       Employee // Modify's answer
}

func (r *seamRun) set(t testing.TB, e *integration.Env) *secondaryindex.Set[Employee] {
	t.Helper()
	s, _ := r.setAndProcessor(t, e)
	return s
}

// setAndProcessor is a Set of the run's table through e's clients, with
// its processor for OtherPartition. Reservations protect a write for the
// processor's DefaultGrace (remoteConfig).
func (r *seamRun) setAndProcessor(t testing.TB, e *integration.Env) (*secondaryindex.Set[Employee], *eventual.Processor) {
	t.Helper()
	if r.placement == secondaryindex.SamePartition {
		return localSet(t, patterntest.View[Employee](t, e, r.tbl)), nil
	}
	p, err := eventual.New(patterntest.SameQueues(t, e, r.qs), nil, crashy())
	if err != nil {
		t.Fatal(err)
	}
	cfg := remoteConfig(nil)
	cfg.Processor = p
	s, err := secondaryindex.New(patterntest.View[Employee](t, e, r.tbl), cfg,
		emailIndex(secondaryindex.OtherPartition), nameIndex(secondaryindex.OtherPartition))
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

func ours(e *Employee) {
	e.FirstName, e.LastName, e.Email = "ours", "Ours", "ours@x.com"
}

// work is the write under test, through e's clients.
func (r *seamRun) work(ctx context.Context, t testing.TB, e *integration.Env) error {
	s := r.set(t, e)
	switch r.op {
	case "insert":
		x := Employee{PartitionKey: "Sales", RowKey: empid(1), Age: 30}
		ours(&x)
		return s.Insert(ctx, &x)
	case "update":
		cur, err := r.tbl.Get(ctx, "Sales", empid(1))
		if err != nil {
			return err
		}
		ours(&cur)
		return s.Update(ctx, &cur)
	case "modify":
		var err error
		r.out, err = s.Modify(ctx, "Sales", empid(1), func(e *Employee) error { ours(e); return nil }, entity.ModifyOptions{})
		return err
	}
	return s.Delete(ctx, "Sales", empid(1), "")
}

// compete is the second writer of the given kind on the same primary,
// through a healthy Set: it reads the primary (raw), then inserts it
// (FirstName "theirs"), replaces it on the ETag read, changes another
// property (a merge of Age), or deletes it.
func (r *seamRun) compete(ctx context.Context, t testing.TB, kind string) error {
	r.competed = true
	r.seen = rawGet(t, rawTable(t, r.tbl.Name()), "Sales", empid(1))
	r.compErr = r.write(ctx, kind)
	return r.compErr
}

func (r *seamRun) write(ctx context.Context, kind string) error {
	switch kind {
	case seamtest.Insert:
		return r.other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(1), FirstName: "theirs", LastName: "Theirs", Email: "theirs@x.com"})
	case seamtest.Replace:
		cur, err := r.tbl.Get(ctx, "Sales", empid(1))
		if err != nil {
			return err
		}
		cur.FirstName, cur.Email = "theirs", "theirs@x.com"
		return r.other.Update(ctx, &cur)
	case seamtest.Merge:
		_, err := r.other.Modify(ctx, "Sales", empid(1), func(e *Employee) error { e.Age += 100; return nil }, entity.ModifyOptions{})
		return err
	}
	return r.other.Delete(ctx, "Sales", empid(1), "")
}

// kept checks that a second writer's write that succeeded after the
// write under test was applied is in the final state: the resend of the
// write under test did not undo it. The one exception is azcore's: an
// Insert's resend inserts again what a delete removed.
func (r *seamRun) kept(t testing.TB, kind string, final map[string]any) {
	t.Helper()
	after := r.competed && r.compErr == nil && (r.op == "delete" && r.seen == nil || r.op != "delete" && r.seen != nil && r.seen["FirstName"] == "ours")
	if !after || r.op == "insert" && kind == seamtest.Delete {
		return
	}
	switch kind {
	case seamtest.Delete:
		if final != nil {
			t.Errorf("%s: the second writer's delete, after this write, was undone: %v", r.op, final)
		}
	case seamtest.Merge:
		if final == nil || final["FirstName"] != "ours" {
			t.Errorf("%s: the second writer's change, after this write, was lost: %v", r.op, final)
		}
	default:
		if final == nil || final["FirstName"] != "theirs" {
			t.Errorf("%s: the second writer's %s, after this write, was lost: %v", r.op, kind, final)
		}
	}
}

// applied tells from what the second writer saw and the final state
// whether the write under test was applied.
func (r *seamRun) applied(kind string, final map[string]any) bool {
	if r.op == "delete" {
		switch {
		case r.competed && r.seen == nil:
			return true // deleted before the second writer read
		case r.competed && kind == seamtest.Delete:
			return false // the second writer deleted it
		}
		return final == nil
	}
	return r.seen != nil && r.seen["FirstName"] == "ours" || final != nil && final["FirstName"] == "ours"
}

// TestLostReplyBesideWriter loses the reply of each request of each
// write of a primary, in turn, and has a second writer insert, replace,
// merge or delete the same employee inside azcore's retry window, before
// the resend (seamtest.EveryReply), in both placements. The write's
// answer is truthful about the final state read with a raw client (an
// applied write is never reported refused, a refused one never reported
// done), Modify returns the version it wrote, and once the queue drained
// the index has no drift and nothing is poisoned.
func TestLostReplyBesideWriter(t *testing.T) {
	t.Parallel()
	for _, placement := range []secondaryindex.Placement{secondaryindex.SamePartition, secondaryindex.OtherPartition} {
		for _, op := range seamOps {
			if placement == secondaryindex.OtherPartition && op == "update" {
				continue // Modify's path
			}
			t.Run(placement.String()+"/"+op, func(t *testing.T) {
				t.Parallel()
				// Eight runs at once: each has its own table and queues, and
				// an OtherPartition run mostly waits for a reservation's Grace.
				seamtest.EveryReply(t, env, seamtest.Race{Parallel: 8, Prepare: func(t *testing.T) seamtest.RaceRun {
					ctx := context.Background()
					r := &seamRun{placement: placement, op: op, tbl: employees(t, env)}
					if placement == secondaryindex.OtherPartition {
						r.qs = patterntest.Queues(t, env, 1)
					}
					r.other = r.set(t, env)
					if op != "insert" {
						if err := r.other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(1), FirstName: "orig", LastName: "Orig", Email: "orig@x.com", Age: 30}); err != nil {
							t.Fatal(err)
						}
					}
					return seamtest.RaceRun{
						Work: func(ctx context.Context, e *integration.Env) error { return r.work(ctx, t, e) },
						Compete: func(ctx context.Context, kind string, _ *http.Request) error {
							return r.compete(ctx, t, kind)
						},
						Check: func(t *testing.T, kind string, err error) {
							ctx := context.Background()
							if placement == secondaryindex.OtherPartition {
								if _, rerr := r.other.Relay(ctx); rerr != nil {
									t.Fatal(rerr)
								}
								_, p := r.setAndProcessor(t, env)
								dctx, cancel := context.WithTimeout(ctx, time.Minute)
								derr := patterntest.Drain(dctx, p, r.qs)
								cancel()
								if derr != nil {
									t.Fatal(derr)
								}
								if n := poisoned(t, r.qs); n != 0 {
									t.Errorf("%d messages poisoned", n)
								}
							}
							final := rawGet(t, rawTable(t, r.tbl.Name()), "Sales", empid(1))
							seamtest.Truthful(t, op+" beside "+kind, err, r.applied(kind, final))
							r.kept(t, kind, final)
							if op == "modify" && err == nil && r.out.FirstName != "ours" {
								t.Errorf("Modify returned %+v, not the version it wrote", r.out)
							}
							if err != nil && !errors.Is(err, entity.ErrOutcomeUnknown) {
								t.Logf("%s beside %s: %v", op, kind, err)
							}
							if fs := findings(t, r.other, secondaryindex.CheckOptions{}); len(fs) != 0 {
								t.Errorf("%s beside %s: drift %v", op, kind, fs)
							}
						},
					}
				}})
			})
		}
	}
}
