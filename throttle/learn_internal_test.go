package throttle

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// try books w on l at the clock's time, moves the clock to its turn, and
// answers it with status (and body).
func try(l *Limiter, clk *fakeClock, w work, status int, body string) {
	r := l.reserve(w)
	clk.t = clk.t.Add(r.wait)
	resp := &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
	if status == http.StatusServiceUnavailable {
		resp.Header.Set("x-ms-error-code", "ServerBusy")
	}
	clk.t = clk.t.Add(30 * time.Millisecond) // the service's answer takes its time
	l.observeTry(w, r, resp)
}

func learner(t *testing.T) (*Limiter, *fakeClock) {
	t.Helper()
	l, err := NewLimiter(Config{})
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{t: time.Unix(1000, 0)}
	l.now = clk.now
	return l, clk
}

// With the default Config a partition starts at an eighth of the
// service's target, and doubles each interval in which it set the pace
// and its tries got through, up to the target; a partition whose tries
// never wait for their turn (its caller is slower) is not raised.
func TestLearnedKeyStartsLowAndDoubles(t *testing.T) {
	l, clk := learner(t)
	w := work{account: "a", table: "t", partition: "p", entities: 100}
	if r := l.Rate("a", "t", "p"); r != PartitionTarget/8 {
		t.Fatalf("a partition not yet written starts at %v, want %v", r, PartitionTarget/8)
	}
	var seen []float64
	for end := clk.t.Add(3 * time.Second); clk.t.Before(end); {
		try(l, clk, w, http.StatusNoContent, "")
		if r := l.Rate("a", "t", "p"); len(seen) == 0 || seen[len(seen)-1] != r {
			seen = append(seen, r)
		}
	}
	if want := []float64{250, 500, 1000, 2000}; !slices.Equal(seen, want) {
		t.Fatalf("rates %v, want %v", seen, want)
	}

	idle, _ := learner(t)
	idleClk := &fakeClock{t: time.Unix(1000, 0)}
	idle.now = idleClk.now
	for range 5 {
		try(idle, idleClk, w, http.StatusNoContent, "")
		idleClk.t = idleClk.t.Add(5 * time.Second) // slower than its rate: never waits
	}
	if got := idle.Rate("a", "t", "p"); got != PartitionTarget/8 {
		t.Fatalf("a partition that never set the pace rose to %v", got)
	}
}

// A round of tries in flight that are all throttled (a burst of 503s)
// lowers a learned key once; a try booked after the decrease and
// throttled too lowers it again.
func TestLearnedKeyHalvesOncePerRound(t *testing.T) {
	l, clk := learner(t)
	w := work{account: "a", table: "t", partition: "p", entities: 10}
	var round []reservation
	for range 8 {
		round = append(round, l.reserve(w))
	}
	clk.t = clk.t.Add(time.Second)
	busy := func() *http.Response {
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{"X-Ms-Error-Code": {"ServerBusy"}}, Body: http.NoBody}
	}
	for _, r := range round {
		l.observeTry(w, r, busy())
	}
	if got := l.Rate("a", "t", "p"); got != PartitionTarget/16 {
		t.Fatalf("rate %v after a round of 8 throttled tries, want one halving to %v", got, PartitionTarget/16)
	}
	if s := l.Stats(); s.Throttled != 8 {
		t.Fatalf("stats %+v: every 503 counts throttled", s)
	}
	clk.t = clk.t.Add(time.Second)
	r := l.reserve(w)
	clk.t = clk.t.Add(r.wait + 30*time.Millisecond)
	l.observeTry(w, r, busy())
	if got := l.Rate("a", "t", "p"); got >= PartitionTarget/16 {
		t.Fatalf("rate %v: a try of the next round throttled did not lower it", got)
	}
}

// After a throttle the rate halves; the first try paced at the halved
// rate that gets through takes it straight back to a little under the rate
// throttled (no lower than needed), not to a twentieth of the target
// added per second.
func TestLearnedKeyClimbsBackToWhatGotThrough(t *testing.T) {
	l, clk := learner(t)
	w := work{account: "a", table: "t", partition: "p", entities: 10}
	for range 5 { // slow start: 250, 500, 1000, 2000
		try(l, clk, w, http.StatusNoContent, "")
	}
	rt := l.Rate("a", "t", "p")
	try(l, clk, w, http.StatusServiceUnavailable, "")
	if got := l.Rate("a", "t", "p"); got != rt/2 {
		t.Fatalf("rate %v after a throttle at %v, want half", got, rt)
	}
	clk.t = clk.t.Add(time.Second)
	try(l, clk, w, http.StatusNoContent, "") // not paced: it waited for nothing
	try(l, clk, w, http.StatusNoContent, "") // paced at the halved rate
	if got := l.Rate("a", "t", "p"); got < 0.8*rt || got >= rt {
		t.Fatalf("rate %v after the climb back, want within 20%% under the rate throttled (%v)", got, rt)
	}
}

// A 503 whose message says the account's limit was met ("Operations per
// second is over the account limit.", as the service sends it) lowers the
// account, not the partition the request wrote, and leaves the body
// whole for the caller.
func TestLearnedAccountLimitLowersTheAccount(t *testing.T) {
	l, clk := learner(t)
	w := work{account: "a", table: "t", partition: "p", entities: 1}
	body := `<?xml version="1.0" encoding="utf-8"?><Error><Code>ServerBusy</Code><Message>Operations per second is over the account limit.` + "\n" + `RequestId:1</Message></Error>`
	r := l.reserve(w)
	resp := &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{"X-Ms-Error-Code": {"ServerBusy"}}, Body: io.NopCloser(strings.NewReader(body))}
	clk.t = clk.t.Add(30 * time.Millisecond)
	l.observeTry(w, r, resp)
	if got := l.Rate("a", "t", "p"); got != PartitionTarget/8 {
		t.Fatalf("the partition's rate moved to %v", got)
	}
	l.mu.Lock()
	acct := l.pacers["a"].rate
	l.mu.Unlock()
	if acct != AccountTarget/16 {
		t.Fatalf("the account's rate is %v, want halved to %v", acct, AccountTarget/16)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != body {
		t.Fatalf("the caller reads %q", b)
	}
	// Longer than what the Limiter reads of it: still whole.
	long := strings.Repeat("x", 10<<10) + body
	resp = &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader([]byte(long)))}
	if overAccountLimit(resp) {
		t.Fatal("a message past the first 4 KiB was read")
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != long {
		t.Fatalf("a long body comes back %d bytes long", len(b))
	}
}

// A configured rate is paced exactly and not learned: it starts at the
// rate given, and tries that get through while it sets the pace leave it
// there.
func TestConfiguredRateIsNotLearned(t *testing.T) {
	l, err := NewLimiter(Config{PartitionRate: 300})
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{t: time.Unix(1000, 0)}
	l.now = clk.now
	w := work{account: "a", table: "t", partition: "p", entities: 30}
	for range 10 {
		try(l, clk, w, http.StatusNoContent, "")
	}
	if got := l.Rate("a", "t", "p"); got != 300 {
		t.Fatalf("a configured rate moved to %v", got)
	}
	if got := l.reserve(w).wait; !near(got, 100*time.Millisecond-30*time.Millisecond) {
		t.Fatalf("the next try waits %v, want its turn at 300 entities/s", got)
	}
}
