package entity_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
)

// TestModifyTokensSettleBeforeTheChainMoves: on a table with write
// tokens, a Modify whose write's reply is lost while another writer keeps
// incrementing the same row settles its write by reading the row back at
// once — not after azcore's resend, which waits its RetryDelay (here
// 400 ms, the default is 4 s) while the other writer's writes push this
// write's token out of the stored chain (wtoken.MaxTokens) and leave the
// outcome unknown. The final count is every increment reported done.
func TestModifyTokensSettleBeforeTheChainMoves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{})
	opts := env.ClientOptions()
	opts.Retry.MaxRetries = 2
	opts.Retry.RetryDelay, opts.Retry.MaxRetryDelay = 400*time.Millisecond, 400*time.Millisecond
	f.SetEnabled(false)
	client := env.With(f).TableWith(t, entity.ClientOptions(opts))
	f.SetEnabled(true)
	base, err := entity.NewTable[Counter](client)
	if err != nil {
		t.Fatal(err)
	}
	counters := base.WithWriteTokens()
	if err := counters.Insert(ctx, &Counter{PartitionKey: "c", RowKey: "1"}); err != nil {
		t.Fatal(err)
	}
	inc := func(c *Counter) error { c.N++; return nil }
	var other atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	f.LoseNextThen(1, func(r *http.Request) bool { return r.Method != http.MethodGet && r.Method != http.MethodPost }, func(*http.Request) {
		// The other writer starts as the reply is lost, and writes for
		// longer than azcore's resend would wait.
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.After(time.Second)
			for {
				select {
				case <-deadline:
					return
				case <-stop:
					return
				default:
				}
				if _, err := base.WithWriteTokens().Modify(ctx, "c", "1", inc, entity.ModifyOptions{}); err != nil {
					t.Error(err)
					return
				}
				other.Add(1)
			}
		}()
	})
	_, err = counters.Modify(ctx, "c", "1", inc, entity.ModifyOptions{})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("Modify with its reply lost beside another writer: %v (want it settled: errors.Is ErrOutcomeUnknown = %v)", err, errors.Is(err, entity.ErrOutcomeUnknown))
	}
	got, err := base.Get(ctx, "c", "1")
	if err != nil {
		t.Fatal(err)
	}
	if want := other.Load() + 1; got.N != want {
		t.Errorf("counter %d, want %d (the other writer's %d and this one)", got.N, want, other.Load())
	}
	if s := f.Stats(); s.LostReplies != 1 {
		t.Fatalf("faults: %+v", s)
	}
	_ = azcore.ETagAny
}

// lateApply is a per-retry policy that answers the first matching write
// with a transport error at once, without sending it, and sends it on
// through the rest of the pipeline only after the next GET has been
// answered: a request the service executes after the writer's read-back.
type lateApply struct {
	match   func(*http.Request) bool
	mu      sync.Mutex
	held    *policy.Request
	applied chan error
}

func (l *lateApply) Do(req *policy.Request) (*http.Response, error) {
	l.mu.Lock()
	held := l.held
	if held == nil && l.applied == nil && l.match(req.Raw()) {
		// The body is copied now: azcore closes the call's own when the
		// call returns, before the late send.
		body, err := io.ReadAll(req.Body())
		if err == nil {
			l.held = req.Clone(context.Background())
			err = l.held.SetBody(streaming.NopCloser(bytes.NewReader(body)), req.Raw().Header.Get("Content-Type"))
		}
		l.applied = make(chan error, 1)
		l.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	}
	if held != nil && req.Raw().Method == http.MethodGet {
		l.held = nil
		l.mu.Unlock()
		resp, err := req.Next()
		lerr := held.RewindBody()
		if lerr == nil {
			var late *http.Response
			if late, lerr = held.Next(); lerr == nil {
				late.Body.Close()
				if late.StatusCode >= 300 {
					lerr = fmt.Errorf("the late write: %s", late.Status)
				}
			}
		}
		l.applied <- lerr
		return resp, err
	}
	l.mu.Unlock()
	return req.Next()
}

// TestModifyTokensWriteAppliedAfterTheReadBack: a conditional write whose
// connection broke is executed by the service only after Modify's next
// round has read the entity back (found without the write, so not
// applied) — the next round's write then meets the late write's version
// and fails, and the round after finds Modify's token in the chain: the
// change is applied once, never twice.
func TestModifyTokensWriteAppliedAfterTheReadBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	late := &lateApply{match: func(r *http.Request) bool { return r.Method != http.MethodGet && r.Method != http.MethodPost }}
	base, err := entity.NewTable[Counter](env.With(late).Table(t))
	if err != nil {
		t.Fatal(err)
	}
	counters := base.WithWriteTokens()
	if err := counters.Insert(ctx, &Counter{PartitionKey: "c", RowKey: "1"}); err != nil { // a POST: not held
		t.Fatal(err)
	}
	got, err := counters.Modify(ctx, "c", "1", func(c *Counter) error { c.N++; return nil }, entity.ModifyOptions{})
	if lerr := <-late.applied; lerr != nil {
		t.Fatal(lerr)
	}
	stored, gerr := base.Get(ctx, "c", "1")
	if gerr != nil {
		t.Fatal(gerr)
	}
	if err != nil || got.N != 1 || stored.N != 1 {
		t.Errorf("Modify: %+v, %v; stored %d: want the increment applied once", got, err, stored.N)
	}
}
