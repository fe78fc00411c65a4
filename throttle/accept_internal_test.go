package throttle

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
)

// A Retry-After longer than the Limiter's MaxHold (0 means a minute,
// azcore's default MaxRetryDelay, beyond which azcore does not resend but
// gives up) holds the key for MaxHold only, in seconds or as an HTTP
// date: a stray "Retry-After: 3600" does not stall every try of a
// partition for an hour.
func TestLimiterHoldIsBounded(t *testing.T) {
	for _, c := range []struct {
		name    string
		maxHold time.Duration
		header  func(now time.Time) string
		want    time.Duration
	}{
		{"seconds, default bound", 0, func(time.Time) string { return "3600" }, time.Minute},
		{"HTTP date, default bound", 0, func(now time.Time) string { return now.Add(2 * time.Hour).UTC().Format(http.TimeFormat) }, time.Minute},
		{"seconds, MaxHold 5s", 5 * time.Second, func(time.Time) string { return "3600" }, 5 * time.Second},
		{"seconds under the bound", 0, func(time.Time) string { return "7" }, 7 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := &fakeClock{t: time.Unix(1000, 0)}
			l, err := NewLimiter(Config{PartitionRate: 1e6, AccountRate: 1e6, MaxHold: c.maxHold})
			if err != nil {
				t.Fatal(err)
			}
			l.now = clk.now
			w := work{account: "a", table: "t", partition: "p", entities: 1}
			l.reserve(w) // the try that was answered
			l.observe(w, &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {c.header(clk.t)}}})
			if got := l.reserve(w).wait; !near(got, c.want) {
				t.Fatalf("the next try waits %v, want %v", got, c.want)
			}
		})
	}
}

// Cosmos DB's Table API throttles with 429 Too Many Requests and says how
// long to wait in x-ms-retry-after-ms: the Limiter lowers the key's rate
// and holds it as for a 503 with Retry-After.
func TestLimiterHonoursCosmosThrottling(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	l, err := NewLimiter(Config{PartitionRate: 1000, AccountRate: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	l.now = clk.now
	w := work{account: "a", table: "t", partition: "p", entities: 1}
	l.reserve(w) // the try that was answered
	l.observe(w, &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"X-Ms-Retry-After-Ms": {"1500"}}})
	if r := l.Rate("a", "t", "p"); r != 500 {
		t.Fatalf("rate after a 429 = %v, want 500", r)
	}
	if got := l.reserve(w).wait; !near(got, 1500*time.Millisecond) {
		t.Fatalf("the next try waits %v, want 1.5s", got)
	}
	if s := l.Stats(); s.Throttled != 1 {
		t.Fatalf("stats %+v: the 429 is not counted throttled", s)
	}
}

// A rate so small that one unit's interval overflows a time.Duration
// still paces (the interval saturates) instead of overflowing into no
// wait at all.
func TestLimiterTinyRateStillPaces(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	l, err := NewLimiter(Config{PartitionRate: 1e-12, AccountRate: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	l.now = clk.now
	w := work{account: "a", table: "t", partition: "p", entities: 100}
	l.reserve(w)
	if got := l.reserve(w).wait; got < 24*time.Hour {
		t.Fatalf("the second try at 1e-12 entities/s waits %v", got)
	}
}

// One Limiter shared by two tables of one account: a 503 on a partition
// of one table lowers and holds that table's partition only — the other
// table's partition of the same PartitionKey keeps its rate and waits for
// nothing — while both tables' requests share the account's schedule.
func TestLimiterSharedByTwoTables(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	l, err := NewLimiter(Config{PartitionRate: 1000, AccountRate: 10})
	if err != nil {
		t.Fatal(err)
	}
	l.now = clk.now
	a := work{account: "acct", table: "orders", partition: "p", entities: 1}
	b := work{account: "acct", table: "invoices", partition: "p", entities: 1}
	l.reserve(a) // the try that was answered: the account's turn at 0
	l.observe(a, &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {"3"}}})
	if ra, rb := l.Rate("acct", "orders", "p"), l.Rate("acct", "invoices", "p"); ra != 500 || rb != 1000 {
		t.Fatalf("rates orders %v invoices %v, want 500 and 1000", ra, rb)
	}
	// The other table's partition is not held: it waits only for the
	// account's next turn, 0.1 s on at 10 requests/s.
	if got := l.reserve(b).wait; !near(got, 100*time.Millisecond) {
		t.Fatalf("the other table's partition waits %v, want its account turn (0.1s), not this one's hold", got)
	}
	if got := l.reserve(a).wait; !near(got, 3*time.Second) {
		t.Fatalf("the held partition waits %v, want 3s", got)
	}
	// Both tables' requests share the account's schedule: a request to a
	// third partition takes the account's turn after the three above
	// (0, 0.1 and 0.2 s; each key keeps its own schedule, so the held
	// try's account turn is not moved to its partition's hold).
	c := work{account: "acct", table: "invoices", partition: "q", entities: 1}
	if got := l.reserve(c).wait; !near(got, 300*time.Millisecond) {
		t.Fatalf("a request to a third partition waits %v, want 0.3s: both tables share the account", got)
	}
}

// The Simulator's 503 is the Table service's answer as documented: status
// 503, the x-ms-error-code header ServerBusy (sent since version
// 2017-07-29), the OData JSON error body with the same code, a request id,
// and the x-ms-version the request asked for; azcore reads it as a
// *azcore.ResponseError with ErrorCode ServerBusy.
func TestSimulatorAnswersAsTheService(t *testing.T) {
	req := request(t, http.MethodPut, "http://127.0.0.1:1/devstoreaccount1/t(PartitionKey='p',RowKey='r')", "{}")
	req.Raw().Header.Set("x-ms-version", "2020-12-06")
	resp := serverBusy(req.Raw(), 0, time.Unix(1000, 0))
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("x-ms-error-code") != "ServerBusy" ||
		resp.Header.Get("x-ms-version") != "2020-12-06" || resp.Header.Get("x-ms-request-id") == "" || resp.Header.Get("Retry-After") != "" {
		t.Fatalf("status %d headers %v", resp.StatusCode, resp.Header)
	}
	var body struct {
		Err struct {
			Code    string `json:"code"`
			Message struct {
				Lang, Value string
			} `json:"message"`
		} `json:"odata.error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Err.Code != "ServerBusy" ||
		!strings.Contains(body.Err.Message.Value, "RequestId:"+resp.Header.Get("x-ms-request-id")) {
		t.Fatalf("body %+v: %v", body, err)
	}
	err := runtime.NewResponseError(resp)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.ErrorCode != "ServerBusy" || re.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("azcore reads %v", err)
	}
}

// Seconds without a throttled answer count whether or not requests were
// sent in them: a rate halved by a 503 and then left idle for ten seconds
// is back at its target at the next answer, not one twentieth up.
func TestLimiterIdleSecondsRestoreTheRate(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	l, err := NewLimiter(Config{PartitionRate: 1000, AccountRate: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	l.now = clk.now
	w := work{account: "a", table: "t", partition: "p", entities: 1}
	l.reserve(w)
	l.observe(w, &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}})
	if r := l.Rate("a", "t", "p"); r != 500 {
		t.Fatalf("rate after a 503 = %v", r)
	}
	clk.t = clk.t.Add(2500 * time.Millisecond)
	l.reserve(w)
	l.observe(w, &http.Response{StatusCode: http.StatusNoContent})
	if r := l.Rate("a", "t", "p"); r != 600 {
		t.Fatalf("rate after 2.5 quiet seconds = %v, want 500 + 2×50", r)
	}
	clk.t = clk.t.Add(10 * time.Second)
	l.reserve(w)
	l.observe(w, &http.Response{StatusCode: http.StatusNoContent})
	if r := l.Rate("a", "t", "p"); r != 1000 {
		t.Fatalf("rate after 10 idle seconds = %v, want the target 1000", r)
	}
}
