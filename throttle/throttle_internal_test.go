package throttle

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
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
		{"point read, path-style", http.MethodGet, "http://127.0.0.1:1/devstoreaccount1/orders(PartitionKey='O''Brien',RowKey='1')", "", "orders", "O'Brien", 1, "127.0.0.1/devstoreaccount1"},
		{"update, account host", http.MethodPut, "https://acct.table.core.windows.net/orders(PartitionKey='%C3%9C%20k',RowKey='1')", "{}", "orders", "Ü k", 1, "acct.core.windows.net"},
		{"insert", http.MethodPost, "https://acct.table.core.windows.net/orders", `{"RowKey":"1","PartitionKey":"p\"q"}`, "orders", `p"q`, 1, "acct.core.windows.net"},
		{"batch of 3", http.MethodPost, "http://127.0.0.1:1/devstoreaccount1/$batch", batchBody, "orders", `O"Br`, 3, "127.0.0.1/devstoreaccount1"},
		{"query", http.MethodGet, "https://acct.table.core.windows.net/orders()?$filter=x", "", "", "", 1, "acct.core.windows.net"},
		{"tables", http.MethodGet, "https://acct.table.core.windows.net/Tables", "", "", "", 1, "acct.core.windows.net"},
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
		if got := l.reserve(w).wait; !near(got, want) {
			t.Fatalf("batch %d waits %v, want %v", i, got, want)
		}
	}
	other := work{account: "a", table: "t", partition: "q", entities: 100}
	if got := l.reserve(other).wait; !near(got, 0) {
		t.Fatalf("another partition waits %v, want about 0", got)
	}
	busy := &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {"2"}}}
	l.observe(w, busy)
	l.observe(w, busy) // in flight at the same time: no second halving
	if r := l.Rate("a", "t", "p"); r != 1000 {
		t.Fatalf("rate after a 503 = %v, want 1000", r)
	}
	clk.t = clk.t.Add(150 * time.Millisecond)
	if got := l.reserve(w).wait; !near(got, 2*time.Second-150*time.Millisecond) {
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

// newPipeline is a pipeline with p in front of a transport that answers 200
// (or what answer returns), without retries.
func newPipeline(p policy.Policy, answer func(*http.Request) *http.Response) runtime.Pipeline {
	var tr policy.Transporter = okTransport{}
	if answer != nil {
		tr = transportFunc(answer)
	}
	return runtime.NewPipeline("t", "v", runtime.PipelineOptions{PerRetry: []policy.Policy{p}},
		&policy.ClientOptions{Transport: tr, Retry: policy.RetryOptions{MaxRetries: -1}})
}

type transportFunc func(*http.Request) *http.Response

func (f transportFunc) Do(r *http.Request) (*http.Response, error) { return f(r), nil }

// A try whose context ends while it waits for its turn is not sent, and
// gives its turn back: the tries after it move up, and a burst of
// abandoned tries delays no one.
func TestLimiterCancelledWaitGivesBackItsTurn(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	l, err := NewLimiter(Config{PartitionRate: 1, AccountRate: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	l.now = clk.now
	l.sleep = func(ctx context.Context, d time.Duration) error { return context.Canceled }
	pl := newPipeline(l, nil)
	sent := 0
	for range 50 {
		req := request(t, http.MethodPut, "http://127.0.0.1:1/devstoreaccount1/t(PartitionKey='p',RowKey='r')", "{}")
		if resp, err := pl.Do(req); err == nil {
			resp.Body.Close()
			sent++
		} else if !errors.Is(err, context.Canceled) {
			t.Fatalf("a cancelled wait: %v", err)
		}
	}
	if sent != 1 {
		t.Fatalf("%d tries sent, want only the first (the others waited and were cancelled)", sent)
	}
	// 49 tries gave their turns back: the next waits one turn, not 50.
	w := work{account: "127.0.0.1/devstoreaccount1", table: "t", partition: "p", entities: 1}
	if got := l.reserve(w).wait; !near(got, time.Second) {
		t.Fatalf("the next try waits %v, want 1s (only the try that was sent counts)", got)
	}
	if s := l.Stats(); s.Requests != 2 {
		t.Fatalf("stats %+v, want the 2 tries that kept their turns", s)
	}
}

// A Retry-After answered while other tries already wait for their turns
// holds them too: none is sent before it ends.
func TestLimiterHoldsTriesAlreadyWaiting(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	l, err := NewLimiter(Config{PartitionRate: 10, AccountRate: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex // guards clk and sentAt
	l.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clk.t }
	gate := make(chan struct{})
	var sleeping sync.WaitGroup
	sleeping.Add(2)
	var entered atomic.Int32
	l.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		target := clk.t.Add(d)
		mu.Unlock()
		if entered.Add(1) <= 2 {
			sleeping.Done()
		}
		<-gate
		mu.Lock()
		if clk.t.Before(target) {
			clk.t = target
		}
		mu.Unlock()
		return nil
	}
	answerFirst := make(chan struct{})
	var sentAt []time.Time
	first := true
	pl := newPipeline(l, func(r *http.Request) *http.Response {
		mu.Lock()
		sentAt = append(sentAt, clk.t)
		isFirst := first
		first = false
		mu.Unlock()
		if isFirst {
			<-answerFirst
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {"5"}}, Body: http.NoBody, Request: r}
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}
	})
	send := func() {
		req := request(t, http.MethodPut, "http://127.0.0.1:1/devstoreaccount1/t(PartitionKey='p',RowKey='r')", "{}")
		resp, err := pl.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	}
	var wg sync.WaitGroup
	wg.Go(send) // sent at once, answered 503 with Retry-After: 5 below
	for len(func() []time.Time { mu.Lock(); defer mu.Unlock(); return sentAt }()) == 0 {
		time.Sleep(time.Millisecond)
	}
	wg.Go(send) // its turn is 0.1 s on
	wg.Go(send) // 0.2 s on
	sleeping.Wait()
	hold := clk.now().Add(5 * time.Second)
	close(answerFirst)
	for l.Stats().Throttled == 0 {
		time.Sleep(time.Millisecond)
	}
	close(gate)
	wg.Wait()
	if len(sentAt) != 3 {
		t.Fatalf("%d tries sent, want 3", len(sentAt))
	}
	for i, at := range sentAt[1:] {
		if at.Before(hold) {
			t.Fatalf("try %d sent %v before the Retry-After hold ended", i+2, hold.Sub(at))
		}
	}
}

// Many goroutines share one Limiter: 30 wait for their turns and give up
// (their context ends) while they wait; every call returns with its
// context's error (no deadlock, nothing sent), and the turns they gave back
// leave the next try waiting about one turn rather than theirs too; then
// 20 goroutines at once are all sent.
func TestLimiterUnderConcurrentGoroutines(t *testing.T) {
	l, err := NewLimiter(Config{PartitionRate: 20, AccountRate: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	pl := newPipeline(l, nil)
	do := func(ctx context.Context) error {
		req, _ := runtime.NewRequest(ctx, http.MethodPut, "http://127.0.0.1:1/devstoreaccount1/t(PartitionKey='p',RowKey='r')")
		resp, err := pl.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	// The first try takes the current turn, so that every one below waits.
	if err := do(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var cancelled atomic.Int64
	for range 30 {
		wg.Go(func() {
			if err := do(ctx); errors.Is(err, context.Canceled) {
				cancelled.Add(1)
			} else {
				t.Errorf("a try given up while waiting: %v", err)
			}
		})
	}
	for l.Stats().Requests < 31 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	wg.Wait()
	if cancelled.Load() != 30 {
		t.Fatalf("%d of 30 given up", cancelled.Load())
	}
	// Had the 30 kept their turns (50 ms each), the next would wait 1.5 s.
	w := work{account: "127.0.0.1/devstoreaccount1", table: "t", partition: "p", entities: 1}
	r := l.reserve(w)
	if r.wait > 500*time.Millisecond {
		t.Fatalf("the next try waits %v: the tries given up kept their turns", r.wait)
	}
	l.release(r)
	var sent atomic.Int64
	for range 20 {
		wg.Go(func() {
			if err := do(context.Background()); err != nil {
				t.Error(err)
				return
			}
			sent.Add(1)
		})
	}
	wg.Wait()
	if sent.Load() != 20 {
		t.Fatalf("%d of 20 sent", sent.Load())
	}
}

// TestOneAccountKeyPerAccount: the table, queue and blob endpoints of one
// account share the account's pacing key (its target of requests per
// second is the account's), and two accounts do not.
func TestOneAccountKeyPerAccount(t *testing.T) {
	keyOf := func(raw string) string {
		return workOf(request(t, http.MethodGet, raw, "")).account
	}
	same := [][]string{
		{"https://acct.table.core.windows.net/t()", "https://acct.queue.core.windows.net/q/messages", "https://acct.blob.core.windows.net/c/b"},
		{"http://127.0.0.1:10002/devstoreaccount1/t()", "http://127.0.0.1:10001/devstoreaccount1/q/messages", "http://127.0.0.1:10000/devstoreaccount1/c/b"},
		{"https://acct.table.cosmos.azure.com/t()", "https://acct.table.cosmos.azure.com/Tables"},
	}
	seen := map[string]int{}
	for i, urls := range same {
		k := keyOf(urls[0])
		for _, u := range urls[1:] {
			if got := keyOf(u); got != k {
				t.Errorf("%s is paced as account %q, %s as %q: want one account", urls[0], k, u, got)
			}
		}
		if j, dup := seen[k]; dup {
			t.Errorf("accounts %d and %d share the key %q", j, i, k)
		}
		seen[k] = i
	}
	if a, b := keyOf("https://one.table.core.windows.net/t()"), keyOf("https://two.table.core.windows.net/t()"); a == b {
		t.Errorf("two accounts share the key %q", a)
	}
	if a, b := keyOf("http://127.0.0.1:10002/devstoreaccount1/t()"), keyOf("http://127.0.0.1:10002/other/t()"); a == b {
		t.Errorf("two emulator accounts share the key %q", a)
	}
}
