package indexentity_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

func isBatch(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/$batch") }

// TestRenameUnderConcurrentWriter renames an employee from Jones to
// Smith — the employee, Jones's index entity and Smith's in one
// transaction — while another writer changes both index entities between
// the rename's reads and its transaction: the rename's transaction is
// refused, it starts again from the reads, and both writers' changes are
// in the lists.
func TestRenameUnderConcurrentWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	other, emps := newLocal(t, indexentity.Config{})
	for i, name := range []string{"Jones", "Jones", "Jones", "Smith"} {
		if err := other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: keys.Pad(int64(i+1), 6), LastName: name}); err != nil {
			t.Fatal(err)
		}
	}
	answered := &patterntest.Answered{} // the service's answers, not azcore's tries
	hook := &patterntest.Before{Match: isBatch, Fn: func() {
		// The concurrent writer: a new Smith, one Jones fewer.
		if err := other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000009", LastName: "Smith"}); err != nil {
			t.Error(err)
		}
		if err := other.Delete(ctx, "Sales", "000002", ""); err != nil {
			t.Error(err)
		}
	}}
	renamer, err := indexentity.New(patterntest.View[Employee](t, env.With(hook, answered), emps), indexentity.Config{},
		indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := renamer.Modify(ctx, "Sales", "000001", func(e *Employee) error { e.LastName = "Smith"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := answered.Count(cost.Table, cost.OpBatch); n != 2 {
		t.Errorf("%d transactions, want the refused one and the one that went through", n)
	}
	if got := lookup(t, renamer, "lastname", "Sales", "Jones"); !slices.Equal(got, []string{"000003"}) {
		t.Errorf("Jones: %v", got)
	}
	if got := lookup(t, renamer, "lastname", "Sales", "Smith"); !slices.Equal(got, []string{"000001", "000004", "000009"}) {
		t.Errorf("Smith: %v", got)
	}
	noDrift(t, renamer)
}

// TestLostReplyRename loses the reply to the rename's transaction: azcore
// sends it again, the service refuses the copy (the index entities'
// ETags changed: by the first copy), and the write token in the index
// entity read back shows the transaction was applied. Modify reports
// success, once; nothing is applied twice.
func TestLostReplyRename(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	plain, emps := newLocal(t, indexentity.Config{})
	for i, name := range []string{"Jones", "Jones", "Smith"} {
		if err := plain.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: keys.Pad(int64(i+1), 6), LastName: name}); err != nil {
			t.Fatal(err)
		}
	}
	f := faults.New(faults.Config{})
	// Last, after the injector: the lost reply's request was executed.
	answered := &patterntest.Answered{}
	s, err := indexentity.New(patterntest.View[Employee](t, env.With(f, answered), emps), indexentity.Config{},
		indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	f.LoseNext(1, isBatch)
	e, err := s.Modify(ctx, "Sales", "000001", func(e *Employee) error { e.LastName = "Smith"; return nil }, entity.ModifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st := f.Stats(); st.LostReplies != 1 {
		t.Fatalf("faults: %+v", st)
	}
	if n := answered.Count(cost.Table, cost.OpBatch); n != 2 {
		t.Errorf("%d transactions executed, want the lost one and azcore's copy", n)
	}
	// The copy's answer carried no ETag; settling read the stored one
	// back, which is this write's as long as nobody wrote since.
	stored, err := emps.Get(ctx, "Sales", "000001")
	if err != nil {
		t.Fatal(err)
	}
	if e.LastName != "Smith" || e.ETag != stored.ETag {
		t.Errorf("Modify returned %+v; want the change, with the stored ETag %s", e, stored.ETag)
	}
	if got := lookup(t, s, "lastname", "Sales", "Smith"); !slices.Equal(got, []string{"000001", "000003"}) {
		t.Errorf("Smith: %v", got)
	}
	if got := lookup(t, s, "lastname", "Sales", "Jones"); !slices.Equal(got, []string{"000002"}) {
		t.Errorf("Jones: %v", got)
	}
	// An insert whose reply is lost: the copy finds the index entity
	// changed (and the employee there); the token says it was this one.
	f.LoseNext(1, isBatch)
	if err := s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000004", LastName: "Jones"}); err != nil {
		t.Fatal(err)
	}
	// A delete whose reply is lost.
	f.LoseNext(1, isBatch)
	if err := s.Delete(ctx, "Sales", "000002", ""); err != nil {
		t.Fatal(err)
	}
	if got := lookup(t, s, "lastname", "Sales", "Jones"); !slices.Equal(got, []string{"000004"}) {
		t.Errorf("Jones: %v", got)
	}
	noDrift(t, s)
}

// TestLocalLoad has 16 writers change the last names of the same 50
// employees (and delete and insert some) at once, with 5% of the
// replies lost: every list ends exactly as the employees say, and the
// drift checker finds nothing. A write whose outcome stayed unknown
// (never expected with write tokens, and allowed) is counted.
func TestLocalLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	plain, emps := newLocal(t, indexentity.Config{})
	names := []string{"Jones", "Smith", "Brown", "Green"}
	for i := range 50 {
		if err := plain.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: keys.Pad(int64(i), 6), LastName: names[i%4]}); err != nil {
			t.Fatal(err)
		}
	}
	f := faults.New(faults.Config{LoseReply: 0.05, Seed: 3})
	s, err := indexentity.New(patterntest.View[Employee](t, patterntest.Faulty(env, f), emps), indexentity.Config{Retry: hot},
		indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	var unknown atomic.Int64
	patterntest.Parallel(t, 16, 16*12, func(i int) error {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		rk := keys.Pad(int64(r.IntN(50)), 6)
		name := names[r.IntN(4)]
		var err error
		switch i % 12 {
		case 0:
			err = s.Delete(ctx, "Sales", rk, "")
			if errors.Is(err, entity.ErrNotFound) {
				err = nil
			}
		case 1:
			err = s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: rk, LastName: name})
			if errors.Is(err, entity.ErrAlreadyExists) {
				err = nil
			}
		default:
			_, err = s.Modify(ctx, "Sales", rk, func(e *Employee) error { e.LastName = name; return nil }, entity.ModifyOptions{})
			if errors.Is(err, entity.ErrNotFound) {
				err = nil
			}
		}
		if errors.Is(err, entity.ErrOutcomeUnknown) {
			unknown.Add(1)
			return nil
		}
		if err != nil {
			return fmt.Errorf("writer %d: %w", i, err)
		}
		return nil
	})
	want := expect(t, emps, "Sales", lastName)
	for _, name := range names {
		if got := lookup(t, s, "lastname", "Sales", name); !slices.Equal(got, want[name]) {
			t.Errorf("%s: %v, want %v", name, got, want[name])
		}
	}
	noDrift(t, s)
	t.Logf("faults %+v; %d outcomes unknown", f.Stats(), unknown.Load())
	if f.Stats().LostReplies == 0 {
		t.Error("no reply was lost")
	}
}

// TestLostReplyRenameBesideRename: a rename of the only Orig to Ours has
// its reply lost, and inside the retry window another writer renames the
// employee on to Theirs (deleting Ours's list, which the rename created).
// azcore's resend is refused at Orig's list, gone; the list entity that
// carried the rename's write token is gone too, but the employee, written
// over by the other writer, still carries it in its chain: Modify reports
// success with the version it wrote, not entity.ErrOutcomeUnknown.
func TestLostReplyRenameBesideRename(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	other, emps := newLocal(t, indexentity.Config{})
	if err := other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000001", LastName: "Orig"}); err != nil {
		t.Fatal(err)
	}
	f := faults.New(faults.Config{})
	s, err := indexentity.New(patterntest.View[Employee](t, patterntest.Faulty(env, f), emps), indexentity.Config{},
		indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	var theirs error
	f.LoseNextThen(1, isBatch, func(*http.Request) {
		_, theirs = other.Modify(ctx, "Sales", "000001", func(e *Employee) error { e.LastName = "Theirs"; return nil }, entity.ModifyOptions{})
	})
	got, err := s.Modify(ctx, "Sales", "000001", func(e *Employee) error { e.LastName = "Ours"; return nil }, entity.ModifyOptions{})
	if err != nil || got.LastName != "Ours" {
		t.Fatalf("the rename whose reply was lost: %+v, %v; want success", got, err)
	}
	if theirs != nil {
		t.Fatalf("the other rename: %v", theirs)
	}
	if e := rawGet(t, emps.Name(), "Sales", "000001"); e["LastName"] != "Theirs" {
		t.Errorf("stored %v", e)
	}
	noDrift(t, other)
}
