package patterntest

import (
	"context"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/tablekit/tablekit/cost"
)

// replies answers each request with the next of its replies: an error
// (the connection went away before the request reached the service) or a
// status.
type replies struct{ next []any }

func (r *replies) Do(req *http.Request) (*http.Response, error) {
	x := r.next[0]
	r.next = r.next[1:]
	if err, ok := x.(error); ok {
		return nil, err
	}
	return &http.Response{StatusCode: x.(int), Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

// TestAnsweredIgnoresRetriesOfUnansweredTries sends one $batch whose
// first try meets a connection the service closed and whose second gets a
// 503: azcore sends it three times, the meter bills three, and Answered
// counts the one the service executed.
func TestAnsweredIgnoresRetriesOfUnansweredTries(t *testing.T) {
	meter, answered := cost.NewMeter(), &Answered{}
	pl := runtime.NewPipeline("patterntest", "v0", runtime.PipelineOptions{}, &policy.ClientOptions{
		Transport:        &replies{next: []any{syscall.ECONNRESET, http.StatusServiceUnavailable, http.StatusAccepted}},
		Retry:            policy.RetryOptions{MaxRetries: 2, RetryDelay: time.Millisecond, MaxRetryDelay: time.Millisecond},
		PerRetryPolicies: []policy.Policy{meter.Policy(), answered},
	})
	req, err := runtime.NewRequest(context.Background(), http.MethodPost, "http://127.0.0.1:10002/devstoreaccount1/$batch")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := pl.Do(req)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("%v, %v", resp, err)
	}
	if n := meter.Snapshot().Count(cost.Table, cost.OpBatch); n != 3 {
		t.Errorf("meter: %d tries, want 3", n)
	}
	if n, all := answered.Count(cost.Table, cost.OpBatch), answered.Total(); n != 1 || all != 1 {
		t.Errorf("answered: %d batches, %d in all; want 1", n, all)
	}
	answered.Reset()
	if answered.Total() != 0 {
		t.Error("Reset kept counts")
	}
}
