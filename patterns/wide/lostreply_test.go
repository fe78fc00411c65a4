package wide_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/wide"
)

// isBatch matches entity group transactions.
func isBatch(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "$batch")
}

// Every write whose transaction's reply is lost — applied, then resent by
// azcore and refused at its first operation (409 for an insert, 412 for a
// write on condition of the ETag, 404 for a delete) — reports success, and
// leaves the state it wrote, once.
func TestLostRepliesReportTheTruth(t *testing.T) {
	t.Parallel()
	f := faults.New(faults.Config{})
	client := env.With(f).Table(t)
	w := wrap[Counted](t, client, wide.Config{})
	ctx := t.Context()
	const pk, id = "p", "lost"
	lose := func() { f.LoseNext(1, isBatch) }

	lose()
	v := Counted{PartitionKey: pk, RowKey: id, Writer: 1, Count: 1, Props: bagOf(pk, id, 1, size(1)).Props}
	if err := w.Insert(ctx, &v); err != nil {
		t.Fatalf("Insert with a lost reply: %v", err)
	}
	expectCounted(t, w, pk, id, 1, 1)

	lose()
	v.Writer, v.Count, v.Props = 7, 2, bagOf(pk, id, 7, size(7)).Props
	if err := w.Replace(ctx, &v); err != nil {
		t.Fatalf("Replace with a lost reply: %v", err)
	}
	expectCounted(t, w, pk, id, 7, 2)
	// The ETag returned is the new version's: a write on its condition works.
	v.Writer, v.Count, v.Props = 2, 3, bagOf(pk, id, 2, size(2)).Props
	if err := w.Replace(ctx, &v); err != nil {
		t.Fatalf("Replace with the ETag a settled write returned: %v", err)
	}

	calls := 0
	lose()
	got, err := w.Modify(ctx, pk, id, func(c *Counted) error {
		calls++
		c.Count++
		return nil
	}, entity.ModifyOptions{})
	if err != nil || calls != 1 || got.Count != 4 {
		t.Fatalf("Modify with a lost reply: %v after %d calls, count %d", err, calls, got.Count)
	}
	expectCounted(t, w, pk, id, 2, 4)

	lose()
	v = Counted{PartitionKey: pk, RowKey: id, Writer: 5, Count: 5, Props: bagOf(pk, id, 5, size(5)).Props}
	if err := w.Upsert(ctx, &v); err != nil {
		t.Fatalf("Upsert with a lost reply: %v", err)
	}
	expectCounted(t, w, pk, id, 5, 5)

	lose()
	if err := w.Delete(ctx, pk, id, v.ETag); err != nil {
		t.Fatalf("Delete with a lost reply: %v", err)
	}
	checkRows(t, client, pk, id, -1)
	if s := f.Stats(); s.LostReplies != 5 {
		t.Errorf("%d replies lost, want 5", s.LostReplies)
	}
}

func expectCounted(t *testing.T, w *wide.Table[Counted], pk, id string, writer int32, count int64) {
	t.Helper()
	c, err := w.Get(t.Context(), pk, id)
	if err != nil {
		t.Fatal(err)
	}
	if msg := consistent(c); msg != "" || c.Writer != writer || c.Count != count {
		t.Fatalf("stored writer %d count %d (%s), want writer %d count %d", c.Writer, c.Count, msg, writer, count)
	}
}

// A write applied, whose reply is lost, and which another writer replaces
// before azcore resends it: the resent transaction is refused (412), yet
// the write was applied — it reports success (with no ETag, since its
// version is gone) and Modify does not apply its change a second time.
func TestLostReplyThenAnotherWriter(t *testing.T) {
	t.Parallel()
	const pk, id = "p", "overtaken"
	f := faults.New(faults.Config{})
	var other *wide.Table[Counted]
	var batches atomic.Int32
	var otherErr error
	cut := hook(func(req *policy.Request) {
		if isBatch(req.Raw()) && batches.Add(1) == 2 { // the resend
			_, otherErr = other.Modify(context.Background(), pk, id, func(c *Counted) error {
				c.Count += 10
				return nil
			}, entity.ModifyOptions{})
		}
	})
	name := sharedTable(t)
	client := env.With(cut, f).TableService.NewClient(name)
	w := wrap[Counted](t, client, wide.Config{})
	other = wrap[Counted](t, env.TableService.NewClient(name), wide.Config{})
	ctx := t.Context()

	v := Counted{PartitionKey: pk, RowKey: id, Writer: 4, Props: bagOf(pk, id, 4, size(4)).Props}
	if err := w.Insert(ctx, &v); err != nil {
		t.Fatal(err)
	}
	batches.Store(0)
	f.LoseNext(1, isBatch)
	calls := 0
	got, err := w.Modify(ctx, pk, id, func(c *Counted) error {
		calls++
		c.Count++
		return nil
	}, entity.ModifyOptions{})
	if err != nil || otherErr != nil {
		t.Fatalf("Modify overtaken after its lost reply: %v (other writer: %v)", err, otherErr)
	}
	if calls != 1 || got.Count != 1 || got.ETag != "" {
		t.Errorf("change called %d times, returned count %d, ETag %q", calls, got.Count, got.ETag)
	}
	expectCounted(t, w, pk, id, 4, 11)
}

// Sixteen writers under lost replies (a fifth of all transactions): every
// increment lands exactly once and the final state is one writer's.
func TestConcurrentWritersUnderLostReplies(t *testing.T) {
	t.Parallel()
	f := faults.New(faults.Config{LoseReply: 0.2, Seed: 7, Match: isBatch})
	client := env.With(f).Table(t)
	w := wrap[Counted](t, client, wide.Config{})
	ctx := t.Context()
	const pk, id = "p", "lossy"
	first := Counted{PartitionKey: pk, RowKey: id, Props: bagOf(pk, id, 0, size(0)).Props}
	if err := w.Insert(ctx, &first); err != nil {
		t.Fatal(err)
	}
	const writers = 16
	var wg sync.WaitGroup
	var calls atomic.Int64
	for i := range writers {
		wg.Go(func() {
			_, err := w.Modify(ctx, pk, id,
				func(c *Counted) error {
					calls.Add(1)
					c.Count++
					c.Writer = int32(i)
					c.Props = bagOf(pk, id, i, size(i)).Props
					return nil
				}, entity.ModifyOptions{Mode: entity.Replace, Retry: entity.RetryPolicy{Attempts: 500, BaseDelay: 5 * time.Millisecond, MaxDelay: 100 * time.Millisecond}})
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	final, err := w.Get(ctx, pk, id)
	if err != nil {
		t.Fatal(err)
	}
	if msg := consistent(final); msg != "" || final.Count != writers {
		t.Errorf("final state: count %d after %d increments; %s", final.Count, writers, msg)
	}
	checkRows(t, client, pk, id, len(physical(t, client, pk))-1)
	s := f.Stats()
	if s.LostReplies == 0 {
		t.Error("no reply was lost")
	}
	t.Logf("%d transactions, %d replies lost, %d rounds of change for %d writers", s.Requests, s.LostReplies, calls.Load(), writers)
}

// When every try's reply is lost, the head decides: a write found there is
// applied; a write the head has moved on without was refused, and says so
// as the service would have; a write that may yet arrive (the head is as
// it found it) is in doubt.
func TestNoReplyAtAll(t *testing.T) {
	t.Parallel()
	f := faults.New(faults.Config{})
	name := sharedTable(t)
	client := env.With(f).TableService.NewClient(name)
	w := wrap[Counted](t, client, wide.Config{})
	ctx := t.Context()
	const pk, id = "p", "silent"
	const tries = 3 // the test clients retry twice
	loseAll := func() { f.LoseNext(tries, isBatch) }

	loseAll()
	v := Counted{PartitionKey: pk, RowKey: id, Writer: 1, Count: 1, Props: bagOf(pk, id, 1, size(1)).Props}
	if err := w.Insert(ctx, &v); err != nil {
		t.Fatalf("Insert applied at the first try, every reply lost: %v", err)
	}
	stale := v
	v.Writer, v.Count, v.Props = 2, 2, bagOf(pk, id, 2, size(2)).Props
	if err := w.Replace(ctx, &v); err != nil {
		t.Fatal(err)
	}

	loseAll()
	stale.Count = 99
	err := w.Replace(ctx, &stale)
	if !errors.Is(err, entity.ErrPreconditionFailed) || errors.Is(err, entity.ErrOutcomeUnknown) {
		t.Fatalf("Replace from a stale ETag, every reply lost: %v, want ErrPreconditionFailed", err)
	}
	expectCounted(t, w, pk, id, 2, 2)

	// Nothing sent at all: the head is unchanged, the transaction might
	// still be on its way.
	silent := faults.New(faults.Config{FailBefore: 1, Match: isBatch})
	ws := wrap[Counted](t, env.With(silent).TableService.NewClient(name), wide.Config{})
	v.Count = 3
	if err := ws.Replace(ctx, &v); !errors.Is(err, entity.ErrOutcomeUnknown) {
		t.Fatalf("Replace never sent: %v, want ErrOutcomeUnknown", err)
	}
	expectCounted(t, w, pk, id, 2, 2)

	loseAll()
	if err := w.Delete(ctx, pk, id, stale.ETag); !errors.Is(err, entity.ErrPreconditionFailed) || errors.Is(err, entity.ErrOutcomeUnknown) {
		t.Fatalf("Delete from a stale ETag, every reply lost: %v, want ErrPreconditionFailed", err)
	}
	expectCounted(t, w, pk, id, 2, 2)

	loseAll()
	if err := w.Delete(ctx, pk, id, v.ETag); err != nil {
		t.Fatalf("Delete applied at the first try, every reply lost: %v", err)
	}
	checkRows(t, client, pk, id, -1)
}

// A Replace applied, its reply lost, and then followed by other writers'
// versions before the resend: up to 15 of them, the head still remembers
// its token and it reports success; after 16, the head has forgotten it,
// and it reports entity.ErrOutcomeUnknown — never a refusal. Either way
// the stored entity, read raw, is one whole version holding every write.
func TestLostReplyThenSixteenWrites(t *testing.T) {
	t.Parallel()
	name := sharedTable(t)
	plain := env.TableService.NewClient(name)
	other := wrap[Counted](t, plain, wide.Config{})
	for _, c := range []struct {
		others  int
		unknown bool
	}{{15, false}, {16, true}} {
		t.Run(strconv.Itoa(c.others), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := faults.New(faults.Config{})
			w := wrap[Counted](t, env.With(f).TableService.NewClient(name), wide.Config{})
			const pk = "sixteen"
			id := strconv.Itoa(c.others)
			base := versionOf(Counted{PartitionKey: pk, RowKey: id}, 1)
			if err := other.Insert(ctx, &base); err != nil {
				t.Fatal(err)
			}
			var otherErr error
			f.LoseNextThen(1, isBatch, func(*http.Request) {
				for range c.others {
					if _, err := other.Modify(context.Background(), pk, id, func(v *Counted) error { v.Count += 100; return nil }, entity.ModifyOptions{}); err != nil {
						otherErr = err
					}
				}
			})
			v := versionOf(base, 2)
			v.ETag = base.ETag
			err := w.Replace(ctx, &v)
			if otherErr != nil {
				t.Fatal(otherErr)
			}
			switch {
			case c.unknown && !errors.Is(err, entity.ErrOutcomeUnknown):
				t.Errorf("Replace applied, then %d other writes: %v, want entity.ErrOutcomeUnknown", c.others, err)
			case !c.unknown && err != nil:
				t.Errorf("Replace applied, then %d other writes: %v, want success", c.others, err)
			}
			if n := wholeOrGone(t, plain, pk, id); n < 0 {
				t.Fatal("the entity is gone")
			}
			stored, err := other.Get(ctx, pk, id)
			if err != nil || stored.Writer != 2 || stored.Count != v.Count+int64(100*c.others) {
				t.Errorf("stored: writer %d, count %d (%v); want writer 2, count %d", stored.Writer, stored.Count, err, v.Count+int64(100*c.others))
			}
		})
	}
}
