package eventual_test

import (
	"context"
	"encoding/base64"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
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

// rawPeek peeks at up to 32 visible messages of q with a plain azqueue
// client.
func rawPeek(t testing.TB, q *azqueue.QueueClient) []*azqueue.PeekedMessage {
	t.Helper()
	resp, err := q.PeekMessages(context.Background(), &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Messages
}

// queueName is the name of q's work queue.
func queueName(t testing.TB, q eventual.Queue) string {
	t.Helper()
	parts, err := azqueue.ParseURL(q.Work.URL())
	if err != nil {
		t.Fatal(err)
	}
	return parts.QueueName
}

// blobNames lists the blobs of c with a plain azblob client.
func blobNames(t testing.TB, c *container.Client) []string {
	t.Helper()
	var names []string
	for pager := c.NewListBlobsFlatPager(nil); pager.More(); {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Segment.BlobItems {
			names = append(names, *b.Name)
		}
	}
	return names
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
// the poison queue, byte for byte, and its record — the reason, the
// handler's last error and the dequeue count — in a blob named by the
// poison message's id. Replay puts the very same text back into the work
// queue, where the fixed handler finishes it, and deletes the record.
func TestPoisonAfterMaxDeliveriesAndReplay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	qs := patterntest.Queues(t, env, 1)
	blobs := env.Container(t)
	rec := newOutcomes()
	cfg := patterntest.Fast()
	cfg.Hooks = rec.hooks()
	p, err := eventual.New(qs, blobs, cfg)
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
	poisoned := rawPeek(t, qs[0].Poison)
	if len(poisoned) != 1 {
		t.Fatalf("%d messages in the poison queue, want 1", len(poisoned))
	}
	if *poisoned[0].MessageText != original[0] {
		t.Errorf("the poison message is %q, want the original %q", *poisoned[0].MessageText, original[0])
	}
	r, err := p.PoisonRecord(ctx, queueName(t, qs[0]), *poisoned[0].MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Reason != eventual.ReasonFailed || r.Error != "boom 5" || r.DequeueCount != 5 ||
		r.Kind != archiveKind.Name() || r.ID != m.ID || r.Encoding != "base64" || r.Queue != queueName(t, qs[0]) ||
		r.MessageID == "" || r.PoisonMessageID != *poisoned[0].MessageID || r.Poisoned.IsZero() {
		t.Errorf("record %+v", r)
	}
	recordBlob := eventual.PoisonRecordPrefix + queueName(t, qs[0]) + eventual.PoisonSuffix + "/" + *poisoned[0].MessageID
	if got := blobNames(t, blobs); len(got) != 1 || got[0] != recordBlob {
		t.Errorf("blobs %q, want the record %q", got, recordBlob)
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
	if got := blobNames(t, blobs); len(got) != 0 {
		t.Errorf("blobs %q left after Replay", got)
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
	p, err := eventual.New(qs, env.Container(t), cfg)
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
		eventual.ReasonUnknownKind: `{"kind":"Unknown.v9","id":"u1","created":"` + recentCreated + `","payload":{}}`,
		eventual.ReasonBadPayload:  `{"kind":"Counted.v1","id":"b1","created":"` + recentCreated + `","payload":{"n":"not a number"}}`,
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
	poisoned := rawPeek(t, qs[0].Poison)
	if len(poisoned) != 3 {
		t.Fatalf("%d poison messages, want 3", len(poisoned))
	}
	for _, pm := range poisoned {
		r, err := p.PoisonRecord(ctx, queueName(t, qs[0]), *pm.MessageID)
		if err != nil || texts[r.Reason] == "" || r.DequeueCount != 1 {
			t.Errorf("poison record %+v (%v)", r, err)
			continue
		}
		if *pm.MessageText != texts[r.Reason] {
			t.Errorf("%s: kept %q, want %q", r.Reason, *pm.MessageText, texts[r.Reason])
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

// TestPoisonIsTheOriginalByteForByte enqueues, with a plain azqueue
// client, texts that can never succeed — not an envelope, an envelope of
// an unknown kind in base64, one in plain JSON with spaces, non-ASCII
// characters and XML's special characters — on a processor without a blob
// container (the default). Each is in <queue>-poison byte for byte as it
// was enqueued, as Azure Functions and WebJobs leave poison messages;
// there is no record to read (ErrNoPoisonRecord); Replay puts each back
// into the work queue byte for byte.
func TestPoisonIsTheOriginalByteForByte(t *testing.T) {
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
	texts := map[string]bool{
		"not an envelope at all": true,
		base64.StdEncoding.EncodeToString([]byte(`{"kind":"Unknown.v9","id":"u1","created":"` + recentCreated + `","payload":{"n":1}}`)): true,
		"{ \"kind\": \"Unknown.v9\",\n  \"id\": \"u2\", \"payload\": {\"name\": \"Zoë <&> 'x'\"} }":                                      true,
	}
	for text := range texts {
		if _, err := qs[0].Work.EnqueueMessage(ctx, text, nil); err != nil {
			t.Fatal(err)
		}
	}
	stop := run(t, p)
	waitFor(t, "three poison outcomes", func() bool { return rec.count(eventual.Poison) == 3 })
	stop()
	poisoned := rawPeek(t, qs[0].Poison)
	if len(poisoned) != 3 {
		t.Fatalf("%d poison messages, want 3", len(poisoned))
	}
	for _, pm := range poisoned {
		if !texts[*pm.MessageText] {
			t.Errorf("poison message %q is none of the texts enqueued", *pm.MessageText)
		}
		if _, err := p.PoisonRecord(ctx, queueName(t, qs[0]), *pm.MessageID); !errors.Is(err, eventual.ErrNoPoisonRecord) {
			t.Errorf("PoisonRecord without a container = %v, want ErrNoPoisonRecord", err)
		}
	}
	if n, err := p.Replay(ctx, eventual.ReplayOptions{}); n != 3 || err != nil {
		t.Fatalf("Replay = %d, %v; want 3", n, err)
	}
	back := rawPeek(t, qs[0].Work)
	if len(back) != 3 {
		t.Fatalf("%d messages replayed into the work queue, want 3", len(back))
	}
	for _, m := range back {
		if !texts[*m.MessageText] {
			t.Errorf("replayed %q, none of the texts enqueued", *m.MessageText)
		}
	}
	if n := count(t, qs[0].Poison); n != 0 {
		t.Errorf("%d messages left in the poison queue", n)
	}
}

// TestPoisonWrapped keeps the record inside the poison message
// (Config.Poison = PoisonWrapped), for a processor without a container:
// ParsePoison reads the record and the original, and Replay restores the
// original byte for byte.
func TestPoisonWrapped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	qs := patterntest.Queues(t, env, 1)
	rec := newOutcomes()
	cfg := patterntest.Fast()
	cfg.Hooks = rec.hooks()
	cfg.Poison = eventual.PoisonWrapped
	p, err := eventual.New(qs, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := archiveKind.Message(ArchiveEmployee{"Sales", "000123"})
	if err := p.Enqueue(ctx, m); err != nil {
		t.Fatal(err)
	}
	original := peekAll(t, qs[0].Work)
	stop := run(t, p) // no handler: unknown kind
	waitFor(t, "the poison outcome", func() bool { return rec.count(eventual.Poison) == 1 })
	stop()
	poisoned := peekAll(t, qs[0].Poison)
	if len(poisoned) != 1 {
		t.Fatalf("%d poison messages, want 1", len(poisoned))
	}
	r, text, ok := eventual.ParsePoison(poisoned[0])
	if !ok || text != original[0] || r.Reason != eventual.ReasonUnknownKind || r.ID != m.ID || r.DequeueCount != 1 || r.Encoding != "base64" {
		t.Errorf("ParsePoison = %+v, %q, %v", r, text, ok)
	}
	if n, err := p.Replay(ctx, eventual.ReplayOptions{Filter: func(r eventual.PoisonRecord) bool { return r.Reason == eventual.ReasonUnknownKind }}); n != 1 || err != nil {
		t.Fatalf("Replay = %d, %v", n, err)
	}
	if got := peekAll(t, qs[0].Work); len(got) != 1 || got[0] != original[0] {
		t.Errorf("after Replay the work queue holds %q, want %q", got, original)
	}
}
