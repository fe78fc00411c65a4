package large_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
)

// ops matches requests by the operation they are billed as.
func ops(names ...string) func(*http.Request) bool {
	return func(r *http.Request) bool { return slices.Contains(names, cost.Classify(r).Op) }
}

// Each kind of request of the pattern has its reply lost once — executed,
// then the reply dropped, so that azcore sends it again: every operation
// still reports success, the employee reads back as written after each
// step, and the queue alone (no sweep) leaves no blob behind.
func TestLostRepliesAreSettled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, op := range []string{
		cost.OpPutBlob, cost.OpPutBlock, cost.OpPutBlockList, // uploads
		cost.OpInsert, cost.OpUpdate, cost.OpDelete, // the entity's writes
		cost.OpGet, cost.OpGetBlob, // reads
		cost.OpPutMessage, cost.OpGetMessages, cost.OpDeleteBlob, cost.OpDeleteMessage, // the disposal
	} {
		t.Run(op, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, testConfig())
			inj := faults.New(faults.Config{})
			lossy := f.on(t, env.With(inj))
			lose := func() { inj.LoseNext(1, ops(op)) }
			step := func(what string, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s with the reply of a %s lost: %v", what, op, err)
				}
			}
			lose()
			e := v1.employee()
			step("Insert", lossy.emps.Insert(ctx, &e))
			readsAs(t, f, false, v1)
			lose()
			got, err := lossy.emps.Get(ctx, "Sales", "000123")
			step("Get", err)
			if d := same(got.Photo, v1.photo); d != "" {
				t.Errorf("Get: photo %s", d)
			}
			lose()
			r := v2.employee()
			r.ETag = got.ETag
			step("Replace", lossy.emps.Replace(ctx, &r))
			readsAs(t, f, false, v2)
			lose()
			step("drain", lossy.drain(ctx))
			f.checkClean(t)
			lose()
			step("Delete", lossy.emps.Delete(ctx, "Sales", "000123", r.ETag))
			readsAs(t, f, true)
			lose()
			step("drain", lossy.drain(ctx))
			if res := f.settle(t); res.Deleted != 0 {
				t.Errorf("the sweep found %d orphans: the queue should have deleted them", res.Deleted)
			}
			f.checkClean(t)
			if s := inj.Stats(); s.LostReplies == 0 {
				t.Errorf("no %s reply was lost", op)
			}
		})
	}
}

// A run of writes to three employees through clients that lose a fifth
// of all replies, workers included: every outcome reported is the truth
// (success: the version written is stored; a refusal: nothing changed;
// ErrOutcomeUnknown: one of the two), every read is whole, and once the
// queue is drained and the sweep has run, no blob is left over or
// missing.
func TestLostRepliesAtRandom(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testConfig())
	inj := faults.New(faults.Config{LoseReply: 0.2, Seed: 7})
	lossy := f.on(t, env.With(inj))
	r := rand.New(rand.NewPCG(7, 7))
	versions := map[string]version{}
	model := map[string]string{} // id → version name, "" for absent
	ids := []string{"000001", "000002", "000003"}
	check := func(id string, want ...string) string {
		t.Helper()
		got, err := f.emps.Get(ctx, "Sales", id)
		name := ""
		switch {
		case errors.Is(err, entity.ErrNotFound):
		case err != nil:
			t.Fatalf("%s: Get: %v", id, err)
		default:
			v := versions[got.Name]
			video, err := readAll(t, got.Video)
			if d := same(got.Photo, v.photo) + same(video, v.video); d != "" || err != nil || got.CV != v.cv {
				t.Fatalf("%s: %s reads back torn: %s %v", id, got.Name, d, err)
			}
			name = got.Name
		}
		if !slices.Contains(want, name) {
			t.Fatalf("%s is %q, want one of %q", id, name, want)
		}
		return name
	}
	var unknown int
	for i := range 30 {
		id := ids[r.IntN(len(ids))]
		v := version{name: fmt.Sprintf("v%d", i), photo: payload(uint64(i), 4<<10+r.IntN(4<<10)), video: payload(uint64(i)+1000, r.IntN(150<<10)), cv: fmt.Sprint("cv ", r.IntN(3))}
		versions[v.name] = v
		before := model[id]
		var err error
		after := before
		switch r.IntN(4) {
		case 0:
			e := v.employee()
			e.ID = id
			err = lossy.emps.Insert(ctx, &e)
			after = v.name
		case 1, 2:
			e := v.employee()
			e.ID, e.ETag = id, entity.AnyETag
			err = lossy.emps.Replace(ctx, &e)
			after = v.name
			if before == "" {
				after = ""
			}
		case 3:
			err = lossy.emps.Delete(ctx, "Sales", id, entity.AnyETag)
			after = ""
		}
		switch {
		case err == nil:
			model[id] = check(id, after)
		case errors.Is(err, entity.ErrOutcomeUnknown):
			unknown++
			model[id] = check(id, before, after)
		default: // refused, or failed before the entity's write: nothing changed
			model[id] = check(id, before)
		}
	}
	if err := lossy.drain(ctx); err != nil {
		t.Logf("draining through the lossy clients: %v", err)
	}
	res := f.settle(t)
	f.checkClean(t)
	for _, id := range ids {
		check(id, model[id])
	}
	s := inj.Stats()
	t.Logf("%d requests, %d replies lost, %d outcomes unknown; the sweep deleted %d orphans", s.Requests, s.LostReplies, unknown, res.Deleted)
	if s.LostReplies < 15 {
		t.Errorf("only %d replies were lost", s.LostReplies)
	}
}
