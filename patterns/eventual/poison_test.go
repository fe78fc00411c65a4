package eventual_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// peekAll returns the texts of the visible messages of q (at most 32).
func peekAll(t testing.TB, q *azqueue.QueueClient) []string {
	t.Helper()
	resp, err := q.PeekMessages(context.Background(), &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range resp.Messages {
		texts = append(texts, *m.MessageText)
	}
	return texts
}

// waitFor polls cond for up to 30 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPoisonAfterMaxDeliveriesAndReplay runs a handler that always fails:
// it is attempted exactly MaxDeliveries (5) times, then the message is in
// the poison queue with the reason, the handler's last error and the
// dequeue count. Replay puts the very same text back into the work queue,
// where the fixed handler finishes it.
func TestPoisonAfterMaxDeliveriesAndReplay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	qs := patterntest.Queues(t, env, 1)
	rec := newOutcomes()
	cfg := patterntest.Fast()
	cfg.Hooks = rec.hooks()
	p, err := eventual.New(qs, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var attempts, fixed atomic.Int32
	if err := eventual.Handle(p, archiveKind, func(ctx context.Context, m ArchiveEmployee) error {
		if fixed.Load() == 1 {
			return nil
		}
		n := attempts.Add(1)
		return errors.New("boom " + string(rune('0'+n)))
	}, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	m, err := archiveKind.Message(ArchiveEmployee{"Sales", "000123"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Enqueue(ctx, m); err != nil {
		t.Fatal(err)
	}
	original := peekAll(t, qs[0].Work)
	stop := run(t, p)
	waitFor(t, "the poison outcome", func() bool { return rec.count(eventual.Poison) == 1 })
	stop()

	if got := attempts.Load(); got != 5 {
		t.Errorf("the handler ran %d times, want MaxDeliveries = 5", got)
	}
	if got := rec.count(eventual.Retry); got != 4 {
		t.Errorf("%d retries, want 4", got)
	}
	if n := count(t, qs[0].Work); n != 0 {
		t.Errorf("%d messages left in the work queue", n)
	}
	poisoned := peekAll(t, qs[0].Poison)
	if len(poisoned) != 1 {
		t.Fatalf("%d messages in the poison queue, want 1", len(poisoned))
	}
	r, text, ok := eventual.ParsePoison(poisoned[0])
	if !ok {
		t.Fatalf("the poison message has no record: %q", poisoned[0])
	}
	if r.Reason != eventual.ReasonFailed || r.Error != "boom 5" || r.DequeueCount != 5 ||
		r.Kind != archiveKind.Name() || r.ID != m.ID || r.Encoding != "base64" ||
		!strings.HasSuffix(qs[0].Poison.URL(), r.Queue+eventual.PoisonSuffix) || r.MessageID == "" || r.Poisoned.IsZero() {
		t.Errorf("record %+v", r)
	}
	if text != original[0] {
		t.Errorf("the poison message keeps %q, want the original %q", text, original[0])
	}

	fixed.Store(1)
	n, err := p.Replay(ctx, eventual.ReplayOptions{})
	if err != nil || n != 1 {
		t.Fatalf("Replay = %d, %v; want 1", n, err)
	}
	if got := peekAll(t, qs[0].Work); len(got) != 1 || got[0] != original[0] {
		t.Errorf("after Replay the work queue holds %q, want the original %q", got, original)
	}
	if n := count(t, qs[0].Poison); n != 0 {
		t.Errorf("%d messages left in the poison queue after Replay", n)
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := patterntest.Drain(dctx, p, qs); err != nil {
		t.Fatal(err)
	}
	if got := rec.count(eventual.Done); got != 1 {
		t.Errorf("%d Done after the replay, want 1", got)
	}
}

// TestPoisonAtOnce sends messages that can never succeed — text that is not
// an envelope, a kind with no handler, a payload that does not decode —
// straight to the poison queue after one delivery, without running a
// handler, each with its reason. Replay restores their exact text.
func TestPoisonAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	qs := patterntest.Queues(t, env, 1)
	rec := newOutcomes()
	cfg := patterntest.Fast()
	cfg.Hooks = rec.hooks()
	p, err := eventual.New(qs, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	type counted struct {
		N int `json:"n"`
	}
	countKind := eventual.NewKind[counted]("Counted.v1")
	var ran atomic.Int32
	if err := eventual.Handle(p, countKind, func(context.Context, counted) error { ran.Add(1); return nil }, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{
		eventual.ReasonUndecodable: "not an envelope at all",
		eventual.ReasonUnknownKind: `{"kind":"Unknown.v9","id":"u1","created":"2024-05-01T10:00:00Z","payload":{}}`,
		eventual.ReasonBadPayload:  `{"kind":"Counted.v1","id":"b1","created":"2024-05-01T10:00:00Z","payload":{"n":"not a number"}}`,
	}
	for _, text := range texts {
		if _, err := qs[0].Work.EnqueueMessage(ctx, text, nil); err != nil {
			t.Fatal(err)
		}
	}
	stop := run(t, p)
	waitFor(t, "three poison outcomes", func() bool { return rec.count(eventual.Poison) == 3 })
	stop()
	if ran.Load() != 0 {
		t.Errorf("a handler ran %d times", ran.Load())
	}
	for _, o := range rec.list() {
		if o.Result != eventual.Poison || o.DequeueCount != 1 || texts[o.Reason] == "" {
			t.Errorf("outcome %+v, want Poison on the first delivery with a known reason", o)
		}
	}
	poisoned := peekAll(t, qs[0].Poison)
	if len(poisoned) != 3 {
		t.Fatalf("%d poison messages, want 3", len(poisoned))
	}
	for _, pt := range poisoned {
		r, original, ok := eventual.ParsePoison(pt)
		if !ok || texts[r.Reason] == "" || r.DequeueCount != 1 {
			t.Errorf("poison record %+v (ok %v)", r, ok)
			continue
		}
		if original != texts[r.Reason] {
			t.Errorf("%s: kept %q, want %q", r.Reason, original, texts[r.Reason])
		}
	}
	// Replay only the unknown kind.
	n, err := p.Replay(ctx, eventual.ReplayOptions{Filter: func(r eventual.PoisonRecord) bool { return r.Reason == eventual.ReasonUnknownKind }})
	if err != nil || n != 1 {
		t.Fatalf("Replay = %d, %v; want 1", n, err)
	}
	if got := peekAll(t, qs[0].Work); len(got) != 1 || got[0] != texts[eventual.ReasonUnknownKind] {
		t.Errorf("work queue after Replay: %q", got)
	}
	if got := peekAll(t, qs[0].Poison); len(got) != 2 {
		t.Errorf("%d poison messages left visible after a filtered Replay, want 2", len(got))
	}
}
