package pipeline_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"

	"github.com/tablekit/tablekit/internal/pipeline"
)

// TestReadBodyRewinds checks that ReadBody returns the body and leaves it
// to be read again by the next policy, and is nil without a body.
func TestReadBodyRewinds(t *testing.T) {
	req, err := runtime.NewRequest(context.Background(), http.MethodPost, "http://127.0.0.1/x")
	if err != nil {
		t.Fatal(err)
	}
	if b := pipeline.ReadBody(req); b != nil {
		t.Fatalf("no body: ReadBody = %q", b)
	}
	if err := req.SetBody(streaming.NopCloser(bytes.NewReader([]byte("payload"))), "text/plain"); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if b := pipeline.ReadBody(req); string(b) != "payload" {
			t.Fatalf("read %d: ReadBody = %q", i, b)
		}
	}
	var seen []byte
	pl := runtime.NewPipeline("m", "v", runtime.PipelineOptions{}, &policy.ClientOptions{Transport: transport(func(r *http.Request) (*http.Response, error) {
		seen, _ = io.ReadAll(r.Body)
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
	})})
	if _, err := pl.Do(req); err != nil {
		t.Fatal(err)
	}
	if string(seen) != "payload" {
		t.Fatalf("sent %q after ReadBody, want the whole body", seen)
	}
}

type transport func(*http.Request) (*http.Response, error)

func (f transport) Do(r *http.Request) (*http.Response, error) { return f(r) }
