package throttle

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
)

func request(t *testing.T, method, url, body string) *policy.Request {
	t.Helper()
	req, err := runtime.NewRequest(context.Background(), method, url)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		if err := req.SetBody(streaming.NopCloser(bytes.NewReader([]byte(body))), "application/json"); err != nil {
			t.Fatal(err)
		}
	}
	return req
}

const batchBody = "--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_1\r\n\r\n" +
	"--changeset_1\r\nContent-Type: application/http\r\n\r\n" +
	"POST http://127.0.0.1:1/devstoreaccount1/orders HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{\"PartitionKey\":\"O\\\"Br\",\"RowKey\":\"1\"}\r\n" +
	"--changeset_1\r\nContent-Type: application/http\r\n\r\n" +
	"MERGE http://127.0.0.1:1/devstoreaccount1/orders(PartitionKey='O%22Br',RowKey='2') HTTP/1.1\r\n\r\n{}\r\n" +
	"--changeset_1\r\nContent-Type: application/http\r\n\r\n" +
	"DELETE http://127.0.0.1:1/devstoreaccount1/orders(PartitionKey='O%22Br',RowKey='3') HTTP/1.1\r\nIf-Match: *\r\n\r\n" +
	"--changeset_1--\r\n--batch_1--\r\n"

func TestWorkOf(t *testing.T) {
	cases := []struct {
		name              string
		method, url, body string
		table, pk         string
		entities          int
		account           string
	}{
		{"point read, path-style", http.MethodGet, "http://127.0.0.1:1/devstoreaccount1/orders(PartitionKey='O''Brien',RowKey='1')", "", "orders", "O'Brien", 1, "127.0.0.1:1/devstoreaccount1"},
		{"update, account host", http.MethodPut, "https://acct.table.core.windows.net/orders(PartitionKey='%C3%9C%20k',RowKey='1')", "{}", "orders", "Ü k", 1, "acct.table.core.windows.net"},
		{"insert", http.MethodPost, "https://acct.table.core.windows.net/orders", `{"RowKey":"1","PartitionKey":"p\"q"}`, "orders", `p"q`, 1, "acct.table.core.windows.net"},
		{"batch of 3", http.MethodPost, "http://127.0.0.1:1/devstoreaccount1/$batch", batchBody, "orders", `O"Br`, 3, "127.0.0.1:1/devstoreaccount1"},
		{"query", http.MethodGet, "https://acct.table.core.windows.net/orders()?$filter=x", "", "", "", 1, "acct.table.core.windows.net"},
		{"tables", http.MethodGet, "https://acct.table.core.windows.net/Tables", "", "", "", 1, "acct.table.core.windows.net"},
	}
	for _, c := range cases {
		req := request(t, c.method, c.url, c.body)
		w := workOf(req)
		if w.table != c.table || w.partition != c.pk || w.entities != c.entities || w.account != c.account {
			t.Errorf("%s: %+v, want table %q pk %q entities %d account %q", c.name, w, c.table, c.pk, c.entities, c.account)
		}
		if c.body != "" {
			// The body is still there for the request to send.
			got := new(bytes.Buffer)
			got.ReadFrom(req.Body())
			if got.String() != c.body {
				t.Errorf("%s: body not rewound: %q", c.name, got.String())
			}
		}
	}
}

// fakeClock is a clock the tests move.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// The Limiter paces a partition to its rate, halves the rate on a 503
// (once per 200 ms), holds for Retry-After, and adds a twentieth back per
// quiet second.
func TestLimiterPacesAndAdapts(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	l, err := NewLimiter(Config{PartitionRate: 2000, AccountRate: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	l.now = clk.now
	w := work{account: "a", table: "t", partition: "p", entities: 100}
	for i, want := range []time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond} {
		if got := l.reserve(w); !near(got, want) {
			t.Fatalf("batch %d waits %v, want %v", i, got, want)
		}
	}
	other := work{account: "a", table: "t", partition: "q", entities: 100}
	if got := l.reserve(other); !near(got, 0) {
		t.Fatalf("another partition waits %v, want about 0", got)
	}
	busy := &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {"2"}}}
	l.observe(w, busy)
	l.observe(w, busy) // in flight at the same time: no second halving
	if r := l.Rate("a", "t", "p"); r != 1000 {
		t.Fatalf("rate after a 503 = %v, want 1000", r)
	}
	clk.t = clk.t.Add(150 * time.Millisecond)
	if got := l.reserve(w); !near(got, 2*time.Second-150*time.Millisecond) {
		t.Fatalf("wait under Retry-After = %v, want 1.85s", got)
	}
	timeout := &http.Response{StatusCode: http.StatusInternalServerError, Header: http.Header{"X-Ms-Error-Code": {"OperationTimedOut"}}}
	clk.t = clk.t.Add(time.Second)
	l.observe(w, timeout)
	if r := l.Rate("a", "t", "p"); r != 500 {
		t.Fatalf("rate after an Operation Timeout = %v, want 500", r)
	}
	ok := &http.Response{StatusCode: http.StatusNoContent}
	for range 3 {
		clk.t = clk.t.Add(time.Second)
		l.observe(w, ok)
	}
	if r := l.Rate("a", "t", "p"); r != 800 {
		t.Fatalf("rate after 3 quiet seconds = %v, want 500 + 3×100", r)
	}
	plain500 := &http.Response{StatusCode: http.StatusInternalServerError, Header: http.Header{}}
	clk.t = clk.t.Add(time.Second)
	l.observe(w, plain500)
	if r := l.Rate("a", "t", "p"); r != 900 {
		t.Fatalf("a 500 that is not a timeout lowered the rate: %v", r)
	}
	if s := l.Stats(); s.Throttled != 3 || s.Requests != 5 {
		t.Fatalf("stats %+v", s)
	}
	if _, err := NewLimiter(Config{Floor: 2}); err == nil {
		t.Fatal("a Floor above 1 was accepted")
	}
}

// The Simulator lets a second's burst through, then refuses with the
// service's 503 until tokens come back.
func TestSimulatorShedsAboveItsRate(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	s, err := NewSimulator(SimConfig{PartitionRate: 250, AccountRate: 1e6, RetryAfter: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s.now = clk.now
	pl := runtime.NewPipeline("t", "v", runtime.PipelineOptions{PerRetry: []policy.Policy{s}},
		&policy.ClientOptions{Transport: okTransport{}, Retry: policy.RetryOptions{MaxRetries: -1}})
	send := func() int {
		req := request(t, http.MethodPost, "http://127.0.0.1:1/devstoreaccount1/$batch", batchBody)
		resp, err := pl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	codes := map[int]int{}
	for range 100 { // 300 entities against a burst of 250
		codes[send()]++
	}
	if codes[http.StatusOK] != 83 || codes[http.StatusServiceUnavailable] != 17 {
		t.Fatalf("codes %v, want 83 passed (249 entities) and 17 refused", codes)
	}
	clk.t = clk.t.Add(time.Second)
	if c := send(); c != http.StatusOK {
		t.Fatalf("after a second: %d", c)
	}
	req := request(t, http.MethodPost, "http://127.0.0.1:1/devstoreaccount1/$batch", batchBody)
	resp := serverBusy(req.Raw(), time.Second, clk.t)
	if resp.Header.Get("x-ms-error-code") != "ServerBusy" || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("headers %v", resp.Header)
	}
	if st := s.Stats(); st.Throttled != 17 || st.Entities != 252 {
		t.Fatalf("stats %+v", st)
	}
}

type okTransport struct{}

func (okTransport) Do(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
}

// near allows the account key's microseconds.
func near(got, want time.Duration) bool { return got >= want && got-want < time.Millisecond }
