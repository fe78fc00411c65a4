package indexentity_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/seamtest"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// seamRun is one run of a lost-reply race of a Set's write: employee
// Sales/000001 changed to LastName "Ours" (Insert, Update, Modify), or
// deleted, while a second writer writes it through a healthy Set.
type seamRun struct {
	op       string
	w        *world
	local    bool
	other    *indexentity.Set[Employee]
	seen     map[string]any // the employee as the second writer read it; nil: absent
	competed bool
	compErr  error // the second writer's answer
	out      Employee
}

func (r *seamRun) set(t testing.TB, e *integration.Env) *indexentity.Set[Employee] {
	t.Helper()
	if r.local {
		s, err := indexentity.New(patterntest.View[Employee](t, e, r.w.emps), indexentity.Config{},
			indexentity.Index[Employee]{Name: "lastname", Value: lastName})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s, _ := r.w.set(t, e, patterntest.Fast(), indexentity.Config{})
	return s
}

func (r *seamRun) work(ctx context.Context, t testing.TB, e *integration.Env) error {
	s := r.set(t, e)
	switch r.op {
	case "insert":
		return s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000001", FirstName: "ours", LastName: "Ours"})
	case "update":
		cur, err := r.w.emps.Get(ctx, "Sales", "000001")
		if err != nil {
			return err
		}
		cur.FirstName, cur.LastName = "ours", "Ours"
		return s.Update(ctx, &cur)
	case "modify":
		var err error
		r.out, err = s.Modify(ctx, "Sales", "000001", func(e *Employee) error { e.FirstName, e.LastName = "ours", "Ours"; return nil }, entity.ModifyOptions{})
		return err
	}
	return s.Delete(ctx, "Sales", "000001", "")
}

func (r *seamRun) compete(ctx context.Context, t testing.TB, kind string) error {
	r.competed = true
	r.seen = rawGet(t, r.w.emps.Name(), "Sales", "000001")
	r.compErr = r.write(ctx, kind)
	return r.compErr
}

func (r *seamRun) write(ctx context.Context, kind string) error {
	switch kind {
	case seamtest.Insert:
		return r.other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000001", FirstName: "theirs", LastName: "Theirs"})
	case seamtest.Replace:
		cur, err := r.w.emps.Get(ctx, "Sales", "000001")
		if err != nil {
			return err
		}
		cur.FirstName, cur.LastName = "theirs", "Theirs"
		return r.other.Update(ctx, &cur)
	case seamtest.Merge:
		_, err := r.other.Modify(ctx, "Sales", "000001", func(e *Employee) error { e.City = "Paris"; return nil }, entity.ModifyOptions{})
		return err
	}
	return r.other.Delete(ctx, "Sales", "000001", "")
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
		if final == nil || final["City"] != "Paris" || final["FirstName"] != "ours" {
			t.Errorf("%s: the second writer's change, after this write, was lost: %v", r.op, final)
		}
	default:
		if final == nil || final["FirstName"] != "theirs" {
			t.Errorf("%s: the second writer's %s, after this write, was lost: %v", r.op, kind, final)
		}
	}
}

func (r *seamRun) applied(kind string, final map[string]any) bool {
	if r.op == "delete" {
		switch {
		case r.competed && r.seen == nil:
			return true
		case r.competed && kind == seamtest.Delete:
			return false
		}
		return final == nil
	}
	return r.seen != nil && r.seen["FirstName"] == "ours" || final != nil && final["FirstName"] == "ours"
}

// TestLostReplyBesideWriter loses the reply of each request of each
// write of an employee, in turn, and has a second writer insert, replace,
// merge or delete the same employee inside azcore's retry window, before
// the resend (seamtest.EveryReply), in every placement. The write's
// answer is truthful about the final state read with a raw client,
// Modify returns the version it wrote, and once the queue drained the
// lists have no drift and hold exactly the employees of their value.
func TestLostReplyBesideWriter(t *testing.T) {
	t.Parallel()
	for _, placement := range []indexentity.Placement{indexentity.SamePartition, indexentity.OtherPartition, indexentity.Blob} {
		for _, op := range []string{"insert", "update", "modify", "delete"} {
			if placement != indexentity.SamePartition && op == "update" {
				continue // Modify's path
			}
			t.Run(placement.String()+"/"+op, func(t *testing.T) {
				t.Parallel()
				seamtest.EveryReply(t, env, seamtest.Race{Prepare: func(t *testing.T) seamtest.RaceRun {
					if !strings.HasSuffix(t.Name(), "/no_fault") {
						t.Parallel() // each run has its own storage
					}
					ctx := context.Background()
					r := &seamRun{op: op, w: newWorld(t, placement, 1), local: placement == indexentity.SamePartition}
					r.other = r.set(t, env)
					if op != "insert" {
						if err := r.other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000001", FirstName: "orig", LastName: "Orig"}); err != nil {
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
							if !r.local {
								dctx, cancel := context.WithTimeout(ctx, time.Minute)
								rerr := r.w.recover(dctx, t, patterntest.Fast())
								cancel()
								if rerr != nil {
									t.Fatal(rerr)
								}
							}
							final := rawGet(t, r.w.emps.Name(), "Sales", "000001")
							seamtest.Truthful(t, op+" beside "+kind, err, r.applied(kind, final))
							r.kept(t, kind, final)
							if op == "modify" && err == nil && r.out.FirstName != "ours" {
								t.Errorf("Modify returned %+v, not the version it wrote", r.out)
							}
							if err != nil {
								t.Logf("%s beside %s: %v", op, kind, err)
							}
							noDrift(t, r.other)
							want := expect(t, r.w.emps, "Sales", lastName)
							for _, name := range []string{"Orig", "Ours", "Theirs"} {
								if got, err := r.other.Members(ctx, "lastname", "Sales", name); err != nil || !slices.Equal(got, want[name]) {
									t.Errorf("%s's list: %v (%v), want %v", name, got, err, want[name])
								}
							}
						},
					}
				}})
			})
		}
	}
}
