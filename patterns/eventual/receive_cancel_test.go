package eventual_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// holdReceive is a per-retry pipeline policy that delays the reply of the
// first Get Messages request to one queue until the caller's context
// ends: the service has executed the receive (its messages are hidden),
// and the reply is still on its way when the caller stops. A request
// whose own context has ended by then loses its reply, as a real
// transport does when the request is cancelled mid-reply.
type holdReceive struct {
	queue   string          // the queue's name
	until   context.Context // the reply comes once it has ended
	held    chan struct{}   // closed once the service has answered the held receive
	once    sync.Once
	claimed atomic.Bool
}

func newHoldReceive(queue string, until context.Context) *holdReceive {
	return &holdReceive{queue: queue, until: until, held: make(chan struct{})}
}

// isReceive reports a Get Messages request (not a peek) to the queue.
func (h *holdReceive) isReceive(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/"+h.queue+"/messages") &&
		!strings.EqualFold(r.URL.Query().Get("peekonly"), "true")
}

func (h *holdReceive) Do(req *policy.Request) (*http.Response, error) {
	if !h.isReceive(req.Raw()) || !h.claimed.CompareAndSwap(false, true) {
		return req.Next()
	}
	resp, err := req.Next()
	if err != nil {
		return resp, err
	}
	h.once.Do(func() { close(h.held) })
	<-h.until.Done()
	if cerr := req.Raw().Context().Err(); cerr != nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return nil, fmt.Errorf("the reply of a cancelled receive: %w", cerr)
	}
	return resp, nil
}

var _ policy.Policy = (*holdReceive)(nil)

// TestShutdownReleasesTheBatchOfAReceiveInFlight stops a processor while
// the reply to its Get Messages request is on its way: the service has
// hidden a whole batch (8 messages) for the 30 s visibility timeout. Run
// must still take the reply and release every message, so that right
// after Run returns all 8 are visible to a raw Peek — none stranded until
// its visibility timeout ends — and none of them ran.
func TestShutdownReleasesTheBatchOfAReceiveInFlight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	qs := patterntest.Queues(t, env, 1)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hold := newHoldReceive(queueName(t, qs[0]), rctx)
	rec := newOutcomes()
	cfg := patterntest.Fast()
	cfg.Workers, cfg.BatchSize = 2, 8
	cfg.VisibilityTimeout = 30 * time.Second // stranded messages would stay hidden for 30 s
	cfg.Hooks = rec.hooks()
	p, err := eventual.New(patterntest.SameQueues(t, env.With(hold), qs), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ran atomic.Int32
	if err := eventual.Handle(p, archiveKind, func(context.Context, ArchiveEmployee) error {
		ran.Add(1)
		return nil
	}, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	const n = 8
	for i := range n {
		m, _ := archiveKind.Message(ArchiveEmployee{"Sales", fmt.Sprintf("%06d", i)})
		if err := p.Enqueue(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(rctx) }()
	select {
	case <-hold.held:
	case err := <-done:
		t.Fatalf("Run returned %v before its first receive was answered", err)
	}
	cancel() // the reply is on its way
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	// Right after Run returns, read raw: every message not done is visible.
	if got := len(peekAll(t, qs[0].Work)); got != n {
		t.Errorf("%d of %d messages visible right after Run returned (%d in the queue): a received batch was stranded until its visibility timeout", got, n, count(t, qs[0].Work))
	}
	if got := ran.Load(); got != 0 {
		t.Errorf("%d handlers ran after the shutdown began, want 0", got)
	}
	if got := rec.count(eventual.Released); got != n {
		t.Errorf("%d messages released, want %d: %+v", got, n, rec.list())
	}
}

// TestReplayCancelledMidReceiveReleasesTheBatch cancels Replay while the
// reply to its Get Messages request on the poison queue is on its way:
// the service has hidden the three poison messages for the 30 s
// visibility timeout. Replay returns an error matching context.Canceled,
// having moved nothing, and the three are visible again at once (a raw
// Peek), byte for byte.
func TestReplayCancelledMidReceiveReleasesTheBatch(t *testing.T) {
	t.Parallel()
	w := newPoisonWorld(t)
	var originals []string
	for i := 1; i <= 3; i++ {
		m := strings.Replace(w.original, `"u1"`, fmt.Sprintf(`"r%d"`, i), 1)
		if _, err := w.qs[0].Poison.EnqueueMessage(t.Context(), m, nil); err != nil {
			t.Fatal(err)
		}
		originals = append(originals, m)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	hold := newHoldReceive(queueName(t, w.qs[0])+eventual.PoisonSuffix, ctx)
	cfg := patterntest.Fast()
	cfg.VisibilityTimeout = 30 * time.Second
	p := w.processor(t, env.With(hold), cfg)
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := p.Replay(ctx, eventual.ReplayOptions{})
		done <- result{n, err}
	}()
	select {
	case <-hold.held:
	case r := <-done:
		t.Fatalf("Replay returned %d, %v before its receive was answered", r.n, r.err)
	}
	cancel()
	r := <-done
	if r.n != 0 || !errors.Is(r.err, context.Canceled) {
		t.Errorf("Replay = %d, %v; want 0 and context.Canceled", r.n, r.err)
	}
	left := peekAll(t, w.qs[0].Poison)
	if !sameSet(left, originals) {
		t.Errorf("visible in the poison queue right after Replay returned:\n%q\nwant\n%q", left, originals)
	}
	if work := peekAll(t, w.qs[0].Work); len(work) != 1 || work[0] != w.original {
		t.Errorf("the work queue holds %q, want only the unpoisoned message", work)
	}
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		if seen[s] == 0 {
			return false
		}
		seen[s]--
	}
	return true
}
