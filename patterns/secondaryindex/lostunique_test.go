package secondaryindex_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestTakenValueLostReply: an Insert (and a Modify) whose unique value
// another employee holds, in the primary's partition, has its reply lost
// and azcore resends it; the resend is refused at the entry's insert
// (409) again. Reading the entry settles it: the value is held by the
// other employee, so the call reports a *UniqueError — not
// entity.ErrOutcomeUnknown — and nothing of it is stored (read with a
// raw client). And when the holder's insert lands inside the retry
// window, after the lost request was applied, the caller's write is the
// one that holds the value: it reports success, and the holder's write
// the *UniqueError.
func TestTakenValueLostReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	raw := rawTable(t, tbl.Name())
	healthy := localSet(t, tbl)
	inj := faults.New(faults.Config{})
	s := localSet(t, patterntest.View[Employee](t, patterntest.Faulty(env, inj), tbl))
	holder := Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "Holder", Email: "taken@x.com"}
	if err := healthy.Insert(ctx, &holder); err != nil {
		t.Fatal(err)
	}
	isBatch := func(r *http.Request) bool { return r.Method == http.MethodPost }

	inj.LoseNext(1, isBatch)
	err := s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(2), LastName: "Second", Email: "taken@x.com"})
	var ue *secondaryindex.UniqueError
	if !errors.As(err, &ue) || errors.Is(err, entity.ErrOutcomeUnknown) || ue.Holder.RowKey != empid(1) {
		t.Fatalf("Insert of a taken value, reply lost: %v; want a *UniqueError naming %s", err, empid(1))
	}
	if e := rawGet(t, raw, "Sales", empid(2)); e != nil {
		t.Errorf("the refused insert stored %v", e)
	}
	if st := inj.Stats(); st.LostReplies != 1 {
		t.Fatalf("%d replies lost", st.LostReplies)
	}

	third := Employee{PartitionKey: "Sales", RowKey: empid(3), LastName: "Third", Email: "third@x.com"}
	if err := healthy.Insert(ctx, &third); err != nil {
		t.Fatal(err)
	}
	inj.LoseNext(1, isBatch)
	_, err = s.Modify(ctx, "Sales", empid(3), func(e *Employee) error { e.Email = "taken@x.com"; return nil }, entity.ModifyOptions{})
	if !errors.As(err, &ue) || errors.Is(err, entity.ErrOutcomeUnknown) {
		t.Fatalf("Modify to a taken value, reply lost: %v; want a *UniqueError", err)
	}
	if e := rawGet(t, raw, "Sales", empid(3)); e["Email"] != "third@x.com" {
		t.Errorf("the refused modify stored %v", e)
	}

	// The holder's insert inside the retry window, after the lost
	// request was applied: the caller's insert won.
	var theirs error
	inj.LoseNextThen(1, isBatch, func(*http.Request) {
		theirs = healthy.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(5), LastName: "Late", Email: "late@x.com"})
	})
	if err := s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(4), LastName: "Early", Email: "late@x.com"}); err != nil {
		t.Fatalf("the insert applied before the other's: %v", err)
	}
	if !errors.As(theirs, &ue) || ue.Holder.RowKey != empid(4) {
		t.Errorf("the later insert: %v, want a *UniqueError naming %s", theirs, empid(4))
	}
	if e := rawGet(t, raw, "Sales", "email_late@x.com"); e == nil || e[secondaryindex.PropPrimaryRK] != empid(4) {
		t.Errorf("the entry of late@x.com: %v", e)
	}
	if fs := findings(t, healthy, secondaryindex.CheckOptions{}); len(fs) != 0 {
		t.Errorf("drift: %v", fs)
	}
}

// TestTakenValueLostReplyOtherPartition: the same with the email indexed
// in another partition, where the value is claimed by inserting its
// entry before the primary: another employee claims the value between
// the claim's read (nothing there) and its insert, which is refused; its
// reply is lost and the resend is refused again. Reading the entry
// settles it: a *UniqueError naming the other employee, and no employee
// is stored.
func TestTakenValueLostReplyOtherPartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	raw := rawTable(t, tbl.Name())
	qs := patterntest.Queues(t, env, 1)
	healthy, _ := remoteSet(t, env, qs, tbl, nil, fast())
	isEntryInsert := func(r *http.Request) bool {
		return r.Method == http.MethodPost && !strings.HasSuffix(r.URL.Path, "$batch")
	}
	inj := faults.New(faults.Config{})
	inj.LoseNext(1, isEntryInsert)
	hook := &patterntest.Before{Match: isEntryInsert, Fn: func() {
		if err := healthy.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "Holder", Email: "taken@x.com"}); err != nil {
			t.Error(err)
		}
	}}
	s, _ := remoteSet(t, patterntest.Faulty(env, hook, inj), qs, tbl, nil, fast())
	err := s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(2), LastName: "Second", Email: "taken@x.com"})
	var ue *secondaryindex.UniqueError
	if !errors.As(err, &ue) || errors.Is(err, entity.ErrOutcomeUnknown) || ue.Holder.RowKey != empid(1) {
		t.Fatalf("Insert of a value taken under it, the claim's reply lost: %v; want a *UniqueError naming %s", err, empid(1))
	}
	if st := inj.Stats(); st.LostReplies != 1 {
		t.Fatalf("%d replies lost", st.LostReplies)
	}
	if e := rawGet(t, raw, "Sales", empid(2)); e != nil {
		t.Errorf("the refused insert stored %v", e)
	}
	if err := drainSet(ctx, t, env, qs, tbl); err != nil {
		t.Fatal(err)
	}
	if e := rawGet(t, raw, "email_Sales", "email_taken@x.com"); e == nil || e[secondaryindex.PropPrimaryRK] != empid(1) {
		t.Errorf("the entry: %v", e)
	}
	if fs := findings(t, healthy, secondaryindex.CheckOptions{}); len(fs) != 0 {
		t.Errorf("drift: %v", fs)
	}
}
