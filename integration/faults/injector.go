package faults

import (
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// ErrInjected is the cause of every failure an Injector makes: errors.Is
// finds it through azcore's wrapping.
var ErrInjected = errors.New("faults: injected connection reset")

// lostReply is the transport error a lost reply turns into. azcore retries
// it like any connection reset.
type lostReply struct{ executed bool }

func (e *lostReply) Error() string {
	if e.executed {
		return "faults: connection reset after the request was executed (reply lost)"
	}
	return "faults: connection reset before the request was sent"
}

func (e *lostReply) Unwrap() error { return ErrInjected }

// Config sets the share of requests an Injector fails.
type Config struct {
	// LoseReply is the share (0 to 1) of matching requests that are sent and
	// executed, and whose reply is then dropped: the caller sees a
	// transport error and azcore retries a request that was applied.
	LoseReply float64
	// FailBefore is the share of matching requests failed before sending:
	// nothing reaches the service.
	FailBefore float64
	// Seed makes the choice of requests repeatable; 0 means 1.
	Seed uint64
	// Match selects the requests that may fail; nil means every request.
	Match func(*http.Request) bool
}

// Stats counts what an Injector did.
type Stats struct {
	Requests     int64 // requests seen while enabled
	LostReplies  int64 // executed, reply dropped
	FailedBefore int64 // failed, not sent
}

// Injector is a pipeline policy that fails requests as its Config says.
// Add it to ClientOptions.PerRetryPolicies so that it sees every try. A new
// Injector is enabled.
type Injector struct {
	enabled atomic.Bool

	mu        sync.Mutex
	cfg       Config
	rng       *rand.Rand
	loseNext  int
	nextMatch func(*http.Request) bool
	nextThen  func(*http.Request)
	stats     Stats
}

// New returns an enabled Injector.
func New(cfg Config) *Injector {
	seed := cfg.Seed
	if seed == 0 {
		seed = 1
	}
	f := &Injector{cfg: cfg, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	f.enabled.Store(true)
	return f
}

// SetEnabled switches injection on or off; while off every request passes.
func (f *Injector) SetEnabled(on bool) { f.enabled.Store(on) }

// LoseNext drops the replies of the next n requests that match (nil: any
// request), whatever the configured rates: a deterministic lost reply.
func (f *Injector) LoseNext(n int, match func(*http.Request) bool) {
	f.LoseNextThen(n, match, nil)
}

// LoseNextThen is LoseNext that also calls then after each of those
// requests was executed and before its lost reply reaches the caller — that
// is, inside azcore's retry window, before the resend. It is where a test
// puts a second writer (through a client without this Injector) whose
// change the resend then meets. then runs on the caller's goroutine; nil
// means nothing.
func (f *Injector) LoseNextThen(n int, match func(*http.Request) bool, then func(*http.Request)) {
	f.mu.Lock()
	f.loseNext, f.nextMatch, f.nextThen = n, match, then
	f.mu.Unlock()
}

// Stats returns the counts so far.
func (f *Injector) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

type fate uint8

const (
	pass fate = iota
	loseReply
	failBefore
)

func (f *Injector) decide(r *http.Request) (fate, func(*http.Request)) {
	if !f.enabled.Load() {
		return pass, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats.Requests++
	if f.loseNext > 0 && (f.nextMatch == nil || f.nextMatch(r)) {
		f.loseNext--
		f.stats.LostReplies++
		return loseReply, f.nextThen
	}
	if f.cfg.Match != nil && !f.cfg.Match(r) {
		return pass, nil
	}
	x := f.rng.Float64()
	switch {
	case x < f.cfg.FailBefore:
		f.stats.FailedBefore++
		return failBefore, nil
	case x < f.cfg.FailBefore+f.cfg.LoseReply:
		f.stats.LostReplies++
		return loseReply, nil
	}
	return pass, nil
}

// Do implements policy.Policy.
func (f *Injector) Do(req *policy.Request) (*http.Response, error) {
	fate, then := f.decide(req.Raw())
	switch fate {
	case failBefore:
		return nil, &lostReply{executed: false}
	case loseReply:
		resp, err := req.Next()
		if err != nil {
			return resp, err
		}
		// The service has answered: it executed the request. Drain the
		// reply so the connection is reused, and report a reset instead.
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if then != nil {
			then(req.Raw())
		}
		return nil, &lostReply{executed: true}
	}
	return req.Next()
}
