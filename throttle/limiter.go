package throttle

import (
	"context"
	"errors"
	"math"
	"net/http"
	"slices"
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

// Config sets a Limiter's targets. The zero value learns each key's limit,
// up to the service's targets.
type Config struct {
	// PartitionRate is the most entities per second sent to one table +
	// PartitionKey, the rate each starts at; 0 means learn each
	// partition's limit, starting at an eighth of PartitionTarget and
	// never above it (see the package doc).
	PartitionRate float64
	// AccountRate is the most requests per second sent to one account,
	// the rate it starts at; 0 means learn the account's limit, starting
	// at an eighth of AccountTarget and never above it.
	AccountRate float64
	// Floor is the least share of a target that throttling brings a rate
	// down to; 0 means 1/100 of a configured rate, and 1/2,000 of the
	// service's target for a learned one (1 entity per second for a
	// partition, 10 requests per second for an account), since a
	// partition shared by many writers may leave each a small share.
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
	return c, nil
}

// Limiter paces requests to the scale targets and adapts to throttling; see
// the package doc. It is a per-retry azcore policy, safe for concurrent
// use by any number of clients.
type Limiter struct {
	cfg   Config
	learn learning
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
	next         time.Time // when the next unit of work may start (a learned key's: when the last started)
	hold         time.Time // nothing starts before (Retry-After)
	raised       time.Time // last additive increase (configured rates)
	lowered      time.Time // last multiplicative decrease

	// A learned key's state (its Config rate left 0): see learn.go.
	learned  bool
	probing  bool      // throttled once: the slow start is over
	epoch    uint64    // decreases so far: a try booked before the last says nothing new
	cost     float64   // the average cost of a try
	ceiling  float64   // a little under the rate last throttled
	good     float64   // the climb's goal after a throttle
	passed   bool      // a rate got through since the last throttle (two tries in a row, paced)
	passedAt float64   // the last rate that got through
	streak   int       // tries paced that got through since the last throttle
	wins     int       // of them, since the climb reached its top (-1 before)
	since    int       // tries that got through since the last throttle, paced or not
	calm     bool      // the last throttle came after a calm (learning.calm tries through)
	stepped  time.Time // last change of rate
	busy     bool      // a try waited for this key's turn since stepped
}

// NewLimiter returns a Limiter with cfg's targets.
func NewLimiter(cfg Config) (*Limiter, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Limiter{cfg: cfg, learn: defaultLearning, now: time.Now, sleep: sleepCtx, pacers: map[string]*pacer{}}, nil
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
// (entities per second), or the rate its first request would be paced
// at if nothing was sent there yet: Config.PartitionRate, or an eighth of
// PartitionTarget when the Limiter learns it. The
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
	return l.newPacer(l.cfg.PartitionRate, PartitionTarget).rate
}

// newPacer is a key's pacer: at rate, or when rate is 0 (not configured)
// learning its limit up to target from an eighth of it.
func (l *Limiter) newPacer(rate, target float64) *pacer {
	if rate > 0 {
		return &pacer{target: rate, rate: rate}
	}
	return &pacer{target: target, rate: target * l.learn.start, learned: true}
}

func (l *Limiter) pacer(key string, rate, target float64) *pacer {
	p := l.pacers[key]
	if p == nil {
		p = l.newPacer(rate, target)
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
	var r reservation
	for {
		r = l.reserve(w)
		if r.wait > 0 {
			if err := l.sleep(ctx, r.wait); err != nil {
				// Not sent: the turn goes back to those after it.
				l.release(r)
				return nil, err
			}
		}
		if !l.stale(w, r) {
			break
		}
		// A Retry-After arrived while this try waited, or a learned key's
		// rate was lowered: it takes a turn after the hold, at the new
		// rate, instead.
		l.release(r)
	}
	resp, err := req.Next()
	l.observeTry(w, r, resp)
	return resp, err
}

// reservation is a try's turn: how long it waits, and how far it moved
// each of its keys' schedules, at which rate and in which of their
// epochs.
type reservation struct {
	wait   time.Duration
	sent   time.Time // when its turn comes
	keys   []*pacer
	moved  []time.Duration
	rates  []float64 // the rate of each key it was booked at
	epochs []uint64  // and in which of its epochs
	paced  []bool    // whether the key made it wait for its turn
}

// reserve books w's turn on its keys.
func (l *Limiter) reserve(w work) reservation {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	r := reservation{keys: []*pacer{l.pacer(w.account, l.cfg.AccountRate, AccountTarget)}}
	costs := []float64{1}
	if w.table != "" {
		r.keys = append(r.keys, l.pacer(w.partitionKey(), l.cfg.PartitionRate, PartitionTarget))
		costs = append(costs, float64(w.entities))
	}
	// Each key keeps its own schedule (GCRA): a request waiting for its
	// partition does not hold up the account's other partitions.
	start := now
	for i, p := range r.keys {
		d := interval(costs[i], p.rate)
		rate := p.rate
		var s time.Time
		if p.learned {
			// A learned key's next is the start of its last try, and a
			// try waits for its own cost at the key's rate after it, so
			// that the rate it was sent at is the rate it was booked at.
			last := p.next
			if last.IsZero() {
				last = now.Add(-d)
			}
			s = later(now, last.Add(d), p.hold)
			p.next = s
			d = s.Sub(last)
		} else {
			s = later(now, p.next, p.hold)
			p.next = s.Add(d)
		}
		if s.After(now) {
			p.busy = true // this key's rate, not the caller, sets the pace
		}
		r.paced = append(r.paced, s.After(now))
		if p.cost == 0 {
			p.cost = costs[i]
		}
		p.cost += (costs[i] - p.cost) / 8
		r.moved = append(r.moved, d)
		r.rates = append(r.rates, rate)
		r.epochs = append(r.epochs, p.epoch)
		start = later(start, s)
	}
	l.stats.Requests++
	r.sent = start
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

// stale reports whether a key of r is held (Retry-After) now, or is a
// learned key whose rate was lowered since r was booked.
func (l *Limiter) stale(w work, r reservation) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for i, p := range r.keys {
		if p.hold.After(now) || (p.learned && p.epoch != r.epochs[i]) {
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

// observe adapts w's keys to an answer to a try booked now in their
// current epochs.
func (l *Limiter) observe(w work, resp *http.Response) {
	l.mu.Lock()
	r := reservation{sent: l.now()}
	for _, p := range []*pacer{l.pacers[w.account], l.pacers[w.partitionKey()]} {
		if p != nil {
			r.keys, r.rates, r.epochs, r.paced = append(r.keys, p), append(r.rates, p.rate), append(r.epochs, p.epoch), append(r.paced, false)
		}
	}
	l.mu.Unlock()
	l.observeTry(w, r, resp)
}

// observeTry adapts the keys of w, booked as r, to the answer. A throttled
// answer lowers the key it names: the account when the service says its
// account limit was met (or the request names no partition), else the
// partition. Every key the try was paced by learns from a success.
func (l *Limiter) observeTry(w work, r reservation, resp *http.Response) {
	accountLimit := overAccountLimit(resp)
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if throttled(resp) {
		l.stats.Throttled++
		key := w.account
		if w.table != "" && !accountLimit {
			key = w.partitionKey()
		}
		p := l.pacers[key]
		if p == nil {
			return
		}
		if p.learned {
			i := slices.Index(r.keys, p)
			if i >= 0 && r.epochs[i] == p.epoch && now.Sub(p.lowered) >= l.learn.settle {
				l.lower(p, r.rates[i], now)
			}
		} else {
			l.lowerConfigured(p, now)
		}
		if d := retryAfter(resp, now); d > 0 {
			p.hold = later(p.hold, now.Add(min(d, l.cfg.MaxHold)))
		}
		return
	}
	if resp == nil {
		return
	}
	for i, p := range r.keys {
		if p.learned {
			if r.epochs[i] == p.epoch {
				l.raise(p, r.paced[i], r.rates[i], r.sent, now)
			}
			continue
		}
		if w.table == "" || i > 0 {
			l.raiseConfigured(p, now)
		}
	}
}

// lowerConfigured halves a configured key's rate on throttling, at most
// once per 200 ms: the answers to requests already in flight say nothing
// new.
func (l *Limiter) lowerConfigured(p *pacer, now time.Time) {
	if now.Sub(p.lowered) >= 200*time.Millisecond {
		p.rate = max(p.rate/2, l.floor(p))
		p.lowered, p.raised = now, now
	}
}

// raiseConfigured adds back a twentieth of a configured key's target per
// second without throttling, idle seconds included.
func (l *Limiter) raiseConfigured(p *pacer, now time.Time) {
	if p.rate >= p.target {
		return
	}
	// Every whole second since the last change counts, sent in or idle
	// (TestLimiterIdleSecondsRestoreTheRate).
	if secs := now.Sub(p.raised) / time.Second; secs > 0 {
		p.rate = min(p.target, p.rate+float64(secs)*p.target/20)
		p.raised = p.raised.Add(secs * time.Second)
	}
}

// floor is the least rate throttling brings p down to.
func (l *Limiter) floor(p *pacer) float64 {
	f := l.cfg.Floor
	if f == 0 {
		f = 0.01
		if p.learned {
			f = 1.0 / 2000
		}
	}
	return p.target * f
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
