package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// script answers each request with the next of its steps, and records what
// was sent. As net/http's transport, it sends nothing for a request whose
// context is done.
type script struct {
	steps []func(*http.Request) (*http.Response, error)
	sent  []*http.Request
	body  [][]byte
}

func (s *script) Do(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	var b []byte
	if req.Body != nil {
		b, _ = io.ReadAll(req.Body)
	}
	s.sent = append(s.sent, req)
	s.body = append(s.body, b)
	step := s.steps[0]
	if len(s.steps) > 1 {
		s.steps = s.steps[1:]
	}
	return step(req)
}

func answer(status int, body string, h ...string) func(*http.Request) (*http.Response, error) {
	return func(req *http.Request) (*http.Response, error) {
		hdr := http.Header{"Date": {time.Now().UTC().Format(http.TimeFormat)}}
		for i := 0; i+1 < len(h); i += 2 {
			hdr.Set(h[i], h[i+1])
		}
		return &http.Response{StatusCode: status, Header: hdr, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	}
}

func fail(err error) func(*http.Request) (*http.Response, error) {
	return func(*http.Request) (*http.Response, error) { return nil, err }
}

func client(t *testing.T, s *script, install bool) *aztables.Client {
	t.Helper()
	o := azcore.ClientOptions{Transport: s, Retry: policy.RetryOptions{MaxRetries: 3, RetryDelay: time.Millisecond}}
	if install {
		Install(&o)
		Install(&o) // once only
		if !Installed(&o) || len(o.PerCallPolicies) != 1 || len(o.PerRetryPolicies) != 1 {
			t.Fatalf("Install: %+v", o)
		}
	}
	c, err := aztables.NewClientWithNoCredential("http://127.0.0.1:1/acct/tbl", &aztables.ClientOptions{ClientOptions: o})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestInstallKeepsOtherPolicies(t *testing.T) {
	var other policy.Policy = triesPolicy{} // any policy value
	shared := make([]policy.Policy, 1, 4)
	shared[0] = takeoverPolicy{}
	o := policy.ClientOptions{PerRetryPolicies: []policy.Policy{other}}
	Install(&o)
	if !isTries(o.PerRetryPolicies[0]) || len(o.PerRetryPolicies) != 1 {
		t.Fatalf("per-retry: %v", o.PerRetryPolicies)
	}
	o = policy.ClientOptions{PerCallPolicies: shared[:0]}
	Install(&o)
	if len(shared[:1]) != 1 || !isTakeover(shared[0]) {
		t.Fatal("Install wrote into the caller's array")
	}
	if Installed(&policy.ClientOptions{}) {
		t.Fatal("empty options report the policies")
	}
}

func probe(c *aztables.Client) (string, bool) {
	u, ok := Probe(func(ctx context.Context) { _, _ = c.GetEntity(ctx, "p", "r", nil) })
	if !ok {
		return "", false
	}
	return u.String(), true
}

func TestProbeSendsNothing(t *testing.T) {
	for _, install := range []bool{true, false} {
		s := &script{steps: []func(*http.Request) (*http.Response, error){answer(200, "{}")}}
		u, ok := probe(client(t, s, install))
		if ok != install {
			t.Fatalf("install=%v: probe says %v", install, ok)
		}
		if install && !strings.HasPrefix(u, "http://127.0.0.1:1/acct/tbl(PartitionKey='p',RowKey='r')") {
			t.Fatalf("probe URL %q", u)
		}
		if len(s.sent) != 0 {
			t.Fatalf("install=%v: the probe sent %d requests", install, len(s.sent))
		}
	}
}

// addEntity is a write through aztables with a Call in its context.
func addEntity(c *aztables.Client) (*Call, error) {
	ctx, call := WithCall(context.Background())
	_, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
	return call, err
}

func TestTriesSeeResends(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	cases := []struct {
		name   string
		steps  []func(*http.Request) (*http.Response, error)
		tries  int
		resent bool
	}{
		{"one try", []func(*http.Request) (*http.Response, error){answer(409, "")}, 1, false},
		{"reply lost, then 409", []func(*http.Request) (*http.Response, error){fail(reset), answer(409, "")}, 2, true},
		{"refused, then 409", []func(*http.Request) (*http.Response, error){fail(refused), answer(409, "")}, 2, false},
		{"503, then 409", []func(*http.Request) (*http.Response, error){answer(503, ""), answer(409, "")}, 2, true},
		{"lost twice, then 201", []func(*http.Request) (*http.Response, error){fail(reset), fail(reset), answer(201, "{}")}, 3, true},
	}
	for _, c := range cases {
		s := &script{steps: c.steps}
		call, _ := addEntity(client(t, s, true))
		if call.Tries() != c.tries || call.Resent() != c.resent || len(s.sent) != c.tries {
			t.Errorf("%s: tries %d resent %v (sent %d), want %d %v", c.name, call.Tries(), call.Resent(), len(s.sent), c.tries, c.resent)
		}
		if first, ok := call.FirstTryNotBefore(); !ok || time.Since(first) > 2*time.Second || time.Until(first) > 0 {
			t.Errorf("%s: first try not before %v %v", c.name, first, ok)
		}
	}
	// Without the policy nothing is counted.
	s := &script{steps: []func(*http.Request) (*http.Response, error){fail(reset), answer(409, "")}}
	call, _ := addEntity(client(t, s, false))
	if call.Tries() != 0 || call.Resent() {
		t.Fatalf("counted without the policy: %d", call.Tries())
	}
	if _, ok := call.FirstTryNotBefore(); ok {
		t.Fatal("a time without tries")
	}
}

// TestStopResends: a call that stops resends ends at its first try that
// failed after it may have reached the service, with that try's error;
// a try that failed to connect, and an answer azcore retries (503), are
// still retried.
func TestStopResends(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	cases := []struct {
		name    string
		steps   []func(*http.Request) (*http.Response, error)
		tries   int
		reached bool
		wantErr error
	}{
		{"reply lost", []func(*http.Request) (*http.Response, error){fail(reset), answer(409, "")}, 1, true, syscall.ECONNRESET},
		{"refused, then lost", []func(*http.Request) (*http.Response, error){fail(refused), fail(reset), answer(409, "")}, 2, true, syscall.ECONNRESET},
		{"503, then 201", []func(*http.Request) (*http.Response, error){answer(503, ""), answer(201, "{}")}, 2, true, nil},
		{"refused every time", []func(*http.Request) (*http.Response, error){fail(refused)}, 4, false, syscall.ECONNREFUSED},
	}
	for _, c := range cases {
		s := &script{steps: c.steps}
		ctx, call := WithCall(context.Background())
		call.StopResends()
		_, err := client(t, s, true).AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
		if call.Tries() != c.tries || len(s.sent) != c.tries || call.Reached() != c.reached {
			t.Errorf("%s: tries %d (sent %d) reached %v, want %d %v", c.name, call.Tries(), len(s.sent), call.Reached(), c.tries, c.reached)
		}
		if c.wantErr == nil && err != nil || c.wantErr != nil && !errors.Is(err, c.wantErr) {
			t.Errorf("%s: %v, want %v", c.name, err, c.wantErr)
		}
	}
}

// TestCancelledBeforeTheFirstTry: a call whose context ended before it
// started makes no try: nothing reaches the transport (or the policies
// after this one), and the Call counts none, so that a write is known
// not applied.
func TestCancelledBeforeTheFirstTry(t *testing.T) {
	s := &script{steps: []func(*http.Request) (*http.Response, error){answer(201, "{}")}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ctx, call := WithCall(ctx)
	_, err := client(t, s, true).AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
	if !errors.Is(err, context.Canceled) || len(s.sent) != 0 || call.Tries() != 0 || call.Reached() {
		t.Errorf("%v; sent %d, tries %d, reached %v: want context.Canceled and no try", err, len(s.sent), call.Tries(), call.Reached())
	}
}

func TestFirstTryNotBeforeUsesTheServersClock(t *testing.T) {
	server := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &script{steps: []func(*http.Request) (*http.Response, error){
		fail(&net.OpError{Op: "read", Err: syscall.ECONNRESET}),
		func(req *http.Request) (*http.Response, error) {
			time.Sleep(20 * time.Millisecond)
			r, err := answer(409, "")(req)
			r.Header.Set("Date", server.Format(http.TimeFormat))
			return r, err
		},
	}}
	call, _ := addEntity(client(t, s, true))
	first, ok := call.FirstTryNotBefore()
	if !ok || !first.Before(server.Add(-20*time.Millisecond)) || first.Before(server.Add(-time.Second)) {
		t.Fatalf("first try not before %v, server answered at %v", first, server)
	}
}

func TestTakeoverSendsTheBody(t *testing.T) {
	s := &script{steps: []func(*http.Request) (*http.Response, error){answer(202, "real reply", "Content-Type", "multipart/mixed; boundary=x")}}
	c := client(t, s, true)
	var carrierErr error
	carrierSaw := ""
	tk := &Takeover{Body: []byte("MY BODY"), ContentType: "multipart/mixed; boundary=mine", CarrierStatus: 200, CarrierBody: []byte(`{"from":"tablekit"}`)}
	resp, err := Send(context.Background(), tk, func(ctx context.Context) {
		r, err := c.GetEntity(ctx, "p", "r", nil)
		carrierErr, carrierSaw = err, string(r.Value)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.sent) != 1 || string(s.body[0]) != "MY BODY" || s.sent[0].Header.Get("Content-Type") != "multipart/mixed; boundary=mine" || s.sent[0].Method != http.MethodGet {
		t.Fatalf("sent %v %q", s.sent, s.body)
	}
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 202 || string(got) != "real reply" {
		t.Fatalf("tablekit got %d %q", resp.StatusCode, got)
	}
	if carrierErr != nil || !strings.Contains(carrierSaw, "tablekit") {
		t.Fatalf("carrier got %v %q", carrierErr, carrierSaw)
	}

	// A failure goes to the carrier as is; a transport error to both.
	s = &script{steps: []func(*http.Request) (*http.Response, error){answer(403, `{"odata.error":{"code":"AuthorizationFailure"}}`)}}
	c = client(t, s, true)
	tk = &Takeover{Body: []byte("x"), CarrierStatus: 200}
	resp, err = Send(context.Background(), tk, func(ctx context.Context) { _, carrierErr = c.GetEntity(ctx, "p", "r", nil) })
	var re *azcore.ResponseError
	if err != nil || resp.StatusCode != 403 || !errors.As(carrierErr, &re) || re.StatusCode != 403 {
		t.Fatalf("403: %v %v %v", resp, err, carrierErr)
	}

	// Without the policy, Send reports it (the carrier's request went as built).
	s = &script{steps: []func(*http.Request) (*http.Response, error){answer(200, "{}")}}
	c = client(t, s, false)
	if _, err := Send(context.Background(), &Takeover{Body: []byte("x")}, func(ctx context.Context) { _, _ = c.GetEntity(ctx, "p", "r", nil) }); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("without the policy: %v", err)
	}
	if !bytes.Equal(s.body[0], nil) && len(s.body[0]) != 0 {
		t.Fatalf("the carrier's own request carried %q", s.body[0])
	}
}

// TestTakeoverReplacesMethodPathAndHeaders: a single-entity write carried
// by an aztables call goes out with tablekit's method, escaped path and
// headers; the carrier's query (a SAS) and other headers stay, and each
// resend carries the same request.
func TestTakeoverReplacesMethodPathAndHeaders(t *testing.T) {
	s := &script{steps: []func(*http.Request) (*http.Response, error){fail(errors.New("reset")), answer(204, "", "ETag", "W/\"x\"")}}
	o := azcore.ClientOptions{Transport: s, Retry: policy.RetryOptions{MaxRetries: 3, RetryDelay: time.Millisecond}}
	Install(&o)
	c, err := aztables.NewClientWithNoCredential("http://127.0.0.1:1/acct/tbl?sv=2019&sig=abc", &aztables.ClientOptions{ClientOptions: o})
	if err != nil {
		t.Fatal(err)
	}
	path := "/acct/tbl(PartitionKey='',RowKey='%C3%9C%27%27p%20k')"
	tk := &Takeover{Method: http.MethodPut, Path: path, Header: http.Header{"If-Match": {"*"}, "Prefer": nil}, Body: []byte(`{"a":1}`), ContentType: "application/json", CarrierStatus: 204}
	resp, err := Send(context.Background(), tk, func(ctx context.Context) {
		_, _ = c.DeleteEntity(ctx, "p", "r", nil)
	})
	if err != nil || resp.StatusCode != 204 || resp.Header.Get("ETag") != `W/"x"` {
		t.Fatalf("Send: %v %v", resp, err)
	}
	if len(s.sent) != 2 {
		t.Fatalf("%d tries, want 2", len(s.sent))
	}
	for i, r := range s.sent {
		if r.Method != http.MethodPut || r.URL.EscapedPath() != path || r.URL.RawQuery != "sig=abc&sv=2019" && r.URL.RawQuery != "sv=2019&sig=abc" ||
			r.Header.Get("If-Match") != "*" || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Accept") != "application/json;odata=minimalmetadata" ||
			string(s.body[i]) != `{"a":1}` {
			t.Fatalf("try %d: %s %s?%s %v %q", i, r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header, s.body[i])
		}
	}
}

// TestProbeOverTheNetwork: with net/http's own transport, a probe of a
// client without the policies reaches no server.
func TestProbeOverTheNetwork(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(404)
	}))
	defer srv.Close()
	for _, install := range []bool{false, true} {
		o := &aztables.ClientOptions{}
		if install {
			Install(&o.ClientOptions)
		}
		c, err := aztables.NewClientWithNoCredential(srv.URL+"/acct/tbl", o)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := probe(c); ok != install {
			t.Fatalf("install=%v: probe says %v", install, ok)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the probes reached the server %d times", hits.Load())
	}
}
