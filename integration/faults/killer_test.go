package faults

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
)

type countingTransport struct{ sent atomic.Int32 }

func (c *countingTransport) Do(r *http.Request) (*http.Response, error) {
	c.sent.Add(1)
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
}

// TestKillerStopsEveryLaterRequestUnretried checks the crash model: k
// requests reach the transport, every later one fails before it is sent,
// and azcore does not retry it.
func TestKillerStopsEveryLaterRequestUnretried(t *testing.T) {
	k := NewKiller(2)
	tr := &countingTransport{}
	pl := runtime.NewPipeline("faults", "v0", runtime.PipelineOptions{PerRetry: []policy.Policy{k}},
		&policy.ClientOptions{Transport: tr, Retry: policy.RetryOptions{MaxRetries: 3, RetryDelay: time.Millisecond}})
	do := func() error {
		req, err := runtime.NewRequest(context.Background(), http.MethodGet, "http://127.0.0.1:1/x")
		if err != nil {
			t.Fatal(err)
		}
		resp, err := pl.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	for i := range 2 {
		if err := do(); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	if k.Fired() {
		t.Fatal("fired before the third request")
	}
	for range 2 {
		if err := do(); !errors.Is(err, ErrKilled) {
			t.Fatalf("request after the kill = %v, want ErrKilled", err)
		}
	}
	if got := tr.sent.Load(); got != 2 {
		t.Errorf("%d requests reached the transport, want 2", got)
	}
	if got := k.seen.Load(); got != 4 {
		t.Errorf("the killer saw %d tries, want 4 (no retries)", got)
	}
	if !k.Fired() || k.Passed() != 2 {
		t.Errorf("Fired %v, Passed %d", k.Fired(), k.Passed())
	}
	select {
	case <-k.Killed():
	default:
		t.Error("Killed is not closed")
	}
	never := NewKiller(-1)
	if never.Fired() || never.Passed() != 0 {
		t.Error("a counting killer fired")
	}
	never.Kill()
	if !never.Fired() {
		t.Error("Kill did not kill")
	}
}

// TestExecutedKillerSendsTheLastRequestThenDies checks the second crash
// model: request k+1 reaches the transport (the service executes it), and
// the caller still sees ErrKilled, unretried; nothing later is sent.
func TestExecutedKillerSendsTheLastRequestThenDies(t *testing.T) {
	k := NewExecutedKiller(1)
	tr := &countingTransport{}
	pl := runtime.NewPipeline("faults", "v0", runtime.PipelineOptions{PerRetry: []policy.Policy{k}},
		&policy.ClientOptions{Transport: tr, Retry: policy.RetryOptions{MaxRetries: 3, RetryDelay: time.Millisecond}})
	do := func() error {
		req, err := runtime.NewRequest(context.Background(), http.MethodGet, "http://127.0.0.1:1/x")
		if err != nil {
			t.Fatal(err)
		}
		resp, err := pl.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := do(); err != nil {
		t.Fatalf("request 1: %v", err)
	}
	if err := do(); !errors.Is(err, ErrKilled) {
		t.Fatalf("request 2 = %v, want ErrKilled after it was executed", err)
	}
	if err := do(); !errors.Is(err, ErrKilled) {
		t.Fatalf("request 3 = %v, want ErrKilled", err)
	}
	if got := tr.sent.Load(); got != 2 {
		t.Errorf("%d requests reached the transport, want 2 (the second executed, its reply unread)", got)
	}
	if k.Passed() != 1 || !k.Fired() {
		t.Errorf("Passed %d Fired %v, want 1 true", k.Passed(), k.Fired())
	}
}
