package throttle

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// The service's scale targets for a storage account's tables.
const (
	// PartitionTarget is about the most entities per second one partition
	// serves.
	PartitionTarget = 2000
	// AccountTarget is about the most requests per second one account serves.
	AccountTarget = 20000
)

// Config sets a Limiter's targets. The zero value paces to the service's.
type Config struct {
	// PartitionRate is the most entities per second sent to one table +
	// PartitionKey; 0 means PartitionTarget.
	PartitionRate float64
	// AccountRate is the most requests per second sent to one account; 0
	// means AccountTarget.
	AccountRate float64
	// Floor is the least share of a target that throttling brings a rate
	// down to; 0 means 1/100.
	Floor float64
	// MaxHold bounds how long one Retry-After holds a key; 0 means a
	// minute, azcore's default MaxRetryDelay, beyond which azcore gives a
	// request up rather than wait (TestLimiterHoldIsBounded).
	MaxHold time.Duration
}

func (c Config) withDefaults() (Config, error) {
	if err := checkRate("Config.PartitionRate", c.PartitionRate); err != nil {
		return c, err
	}
	if err := checkRate("Config.AccountRate", c.AccountRate); err != nil {
		return c, err
	}
	if !(c.Floor >= 0 && c.Floor <= 1) {
		return c, &ConfigError{Field: "Config.Floor", Reason: "is " + formatFloat(c.Floor) + ": want 0 (1/100) to 1"}
	}
	if c.MaxHold < 0 {
		return c, &ConfigError{Field: "Config.MaxHold", Reason: "is " + c.MaxHold.String() + ": want 0 (a minute) or more"}
	}
	if c.MaxHold == 0 {
		c.MaxHold = time.Minute
	}
	if c.PartitionRate == 0 {
		c.PartitionRate = PartitionTarget
	}
	if c.AccountRate == 0 {
		c.AccountRate = AccountTarget
	}
	if c.Floor == 0 {
		c.Floor = 0.01
	}
	return c, nil
}

// Limiter paces requests to the scale targets and adapts to throttling; see
// the package doc. It is a per-retry azcore policy, safe for concurrent
// use by any number of clients.
type Limiter struct {
	cfg   Config
	now   func() time.Time
	sleep func(context.Context, time.Duration) error

	mu     sync.Mutex
	pacers map[string]*pacer
	stats  Stats
}

// Stats counts what a Limiter saw.
type Stats struct {
	Requests  int64         // tries paced
	Throttled int64         // answered 503 Server Busy or 500 Operation Timeout
	Waited    time.Duration // total time tries waited for their turn
}

// pacer is one key's rate and schedule.
type pacer struct {
	target, rate float64
	next         time.Time // when the next unit of work may start
	hold         time.Time // nothing starts before (Retry-After)
	raised       time.Time // last additive increase
	lowered      time.Time // last multiplicative decrease
}

// NewLimiter returns a Limiter with cfg's targets.
func NewLimiter(cfg Config) (*Limiter, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Limiter{cfg: cfg, now: time.Now, sleep: sleepCtx, pacers: map[string]*pacer{}}, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Errors of a policy used outside a pipeline or without its constructor;
// a pipeline never sends a nil request.
var (
	errNotMade    = errors.New("throttle: use NewLimiter or NewSimulator: the zero value has no state")
	errNilRequest = errors.New("throttle: nil request")
)

// usable says why a policy cannot handle req, or nil.
func usable(made bool, req *policy.Request) error {
	switch {
	case !made:
		return errNotMade
	case req == nil || req.Raw() == nil:
		return errNilRequest
	}
	return nil
}

// Stats returns the counts so far.
func (l *Limiter) Stats() Stats {
	if l == nil || l.pacers == nil {
		return Stats{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// Rate returns the current rate for a table's partition of an account
// (entities per second), or the target if nothing was sent there yet. The
// account is named as the Limiter keys it, one key for all its service
// endpoints: the host without its service label ("acct.core.windows.net"
// for https://acct.table.core.windows.net), or for an emulator's
// path-style endpoint the host without its port and the account
// ("127.0.0.1/devstoreaccount1").
func (l *Limiter) Rate(account, table, partitionKey string) float64 {
	if l == nil || l.pacers == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.pacers[work{account: account, table: table, partition: partitionKey}.partitionKey()]; p != nil {
		return p.rate
	}
	return l.cfg.PartitionRate
}

func (l *Limiter) pacer(key string, target float64) *pacer {
	p := l.pacers[key]
	if p == nil {
		p = &pacer{target: target, rate: target}
		l.pacers[key] = p
	}
	return p
}

// Do implements policy.Policy.
func (l *Limiter) Do(req *policy.Request) (*http.Response, error) {
	if err := usable(l != nil && l.pacers != nil, req); err != nil {
		return nil, err
	}
	w := workOf(req)
	ctx := req.Raw().Context()
	for {
		r := l.reserve(w)
		if r.wait > 0 {
			if err := l.sleep(ctx, r.wait); err != nil {
				// Not sent: the turn goes back to those after it.
				l.release(r)
				return nil, err
			}
		}
		if !l.held(w) {
			break
		}
		// A Retry-After arrived while this try waited: it takes a turn
		// after the hold instead.
		l.release(r)
	}
	resp, err := req.Next()
	l.observe(w, resp)
	return resp, err
}

// reservation is a try's turn: how long it waits, and how far it moved
// each of its keys' schedules.
type reservation struct {
	wait  time.Duration
	keys  []*pacer
	moved []time.Duration
}

// reserve books w's turn on its keys.
func (l *Limiter) reserve(w work) reservation {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	r := reservation{keys: []*pacer{l.pacer(w.account, l.cfg.AccountRate)}}
	costs := []float64{1}
	if w.table != "" {
		r.keys = append(r.keys, l.pacer(w.partitionKey(), l.cfg.PartitionRate))
		costs = append(costs, float64(w.entities))
	}
	// Each key keeps its own schedule (GCRA): a request waiting for its
	// partition does not hold up the account's other partitions.
	start := now
	for i, p := range r.keys {
		s := later(now, p.next, p.hold)
		d := interval(costs[i], p.rate)
		p.next = s.Add(d)
		r.moved = append(r.moved, d)
		start = later(start, s)
	}
	l.stats.Requests++
	r.wait = start.Sub(now)
	l.stats.Waited += r.wait
	return r
}

// release gives back a turn that was not used: the schedules move back by
// what it had moved them, so a try given up (its context ended) or
// rescheduled delays no one.
func (l *Limiter) release(r reservation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, p := range r.keys {
		p.next = p.next.Add(-r.moved[i])
	}
	l.stats.Requests--
	l.stats.Waited -= r.wait
}

// held reports whether a key of w is held (Retry-After) now.
func (l *Limiter) held(w work) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if p := l.pacers[w.account]; p != nil && p.hold.After(now) {
		return true
	}
	if w.table != "" {
		if p := l.pacers[w.partitionKey()]; p != nil && p.hold.After(now) {
			return true
		}
	}
	return false
}

func later(ts ...time.Time) time.Time {
	var m time.Time
	for _, t := range ts {
		if t.After(m) {
			m = t
		}
	}
	return m
}

// observe adapts w's keys to the answer: halve on throttling (at most once
// per 200 ms: the answers to requests already in flight say nothing new),
// add back a twentieth of the target per second without, idle seconds
// included.
func (l *Limiter) observe(w work, resp *http.Response) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	p := l.pacers[w.account]
	if w.table != "" {
		p = l.pacers[w.partitionKey()]
	}
	if p == nil {
		return
	}
	if throttled(resp) {
		l.stats.Throttled++
		if now.Sub(p.lowered) >= 200*time.Millisecond {
			p.rate = max(p.rate/2, p.target*l.cfg.Floor)
			p.lowered, p.raised = now, now
		}
		if d := retryAfter(resp, now); d > 0 {
			p.hold = later(p.hold, now.Add(min(d, l.cfg.MaxHold)))
		}
		return
	}
	if resp == nil || p.rate >= p.target {
		return
	}
	// Every whole second since the last change counts, sent in or idle
	// (TestLimiterIdleSecondsRestoreTheRate).
	if secs := now.Sub(p.raised) / time.Second; secs > 0 {
		p.rate = min(p.target, p.rate+float64(secs)*p.target/20)
		p.raised = p.raised.Add(secs * time.Second)
	}
}

// maxInterval is the longest interval one reservation moves a schedule:
// about 146 years, far from time.Duration's overflow.
const maxInterval = time.Duration(1 << 62)

// maxFloat is the largest finite float64.
const maxFloat = math.MaxFloat64

// interval is the time n units take at rate per second, saturated at
// maxInterval: a rate so small that the product overflows a Duration
// still paces (TestLimiterTinyRateStillPaces).
func interval(n, rate float64) time.Duration {
	ns := n / rate * float64(time.Second)
	if !(ns < float64(maxInterval)) {
		return maxInterval
	}
	return time.Duration(ns)
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// throttled reports a 503 Server Busy, a 500 Operation Timeout, or a 429
// Too Many Requests (Cosmos DB's Table API's throttling).
func throttled(resp *http.Response) bool {
	if resp == nil {
		return false
	}
	switch resp.StatusCode {
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		return true
	case http.StatusInternalServerError:
		return resp.Header.Get("x-ms-error-code") == "OperationTimedOut"
	}
	return false
}

// retryAfter reads Retry-After (seconds or an HTTP date), or the
// millisecond forms some Azure services send (Cosmos DB:
// x-ms-retry-after-ms), in azcore's order of preference.
func retryAfter(resp *http.Response, now time.Time) time.Duration {
	for _, h := range []string{"retry-after-ms", "x-ms-retry-after-ms"} {
		if ms := resp.Header.Get(h); ms != "" {
			if n, err := strconv.Atoi(ms); err == nil && n > 0 {
				return time.Duration(n) * time.Millisecond
			}
		}
	}
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return t.Sub(now)
	}
	return 0
}
