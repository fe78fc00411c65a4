package faults

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// ErrKilled is the error of every request a Killer stops.
var ErrKilled = errors.New("faults: the process was killed")

// killed is ErrKilled as azcore sees it: not to be retried.
type killed struct{}

func (killed) Error() string   { return ErrKilled.Error() }
func (killed) Unwrap() error   { return ErrKilled }
func (killed) NonRetriable()   {}
func (killed) Temporary() bool { return false }

// Killer is a per-retry pipeline policy that simulates a process that
// dies: it lets a number of requests through and then fails every later
// one before it is sent (or, made by NewExecutedKiller, sends the next one
// and dies before its reply is read). Package crashtest's EveryStep kills
// a scenario with it at every request; a program (a demo's tour) can show
// what a fresh process recovers from what is stored. It links no testing.
type Killer struct {
	after int64 // < 0: until Kill
	// executed: request after+1 is sent and executed, and the process dies
	// before its reply is read.
	executed bool
	seen     atomic.Int64
	passed   atomic.Int64
	dead     atomic.Bool
	once     sync.Once
	killed   chan struct{}
}

// NewKiller returns a Killer that lets after requests through; after < 0
// lets every request through until Kill is called.
func NewKiller(after int) *Killer {
	return &Killer{after: int64(after), killed: make(chan struct{})}
}

// NewExecutedKiller returns a Killer that lets after requests through,
// sends request after+1 and kills the process once the service has
// executed it, before its reply is read: the crash that leaves a change
// applied with nobody knowing.
func NewExecutedKiller(after int) *Killer {
	k := NewKiller(after)
	k.executed = true
	return k
}

// Do implements policy.Policy.
func (k *Killer) Do(req *policy.Request) (*http.Response, error) {
	if n := k.seen.Add(1); k.dead.Load() || k.after >= 0 && n > k.after {
		if k.executed && n == k.after+1 && !k.dead.Load() {
			if resp, err := req.Next(); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		}
		k.Kill()
		return nil, killed{}
	}
	k.passed.Add(1)
	return req.Next()
}

// Kill kills at once: every later request is stopped.
func (k *Killer) Kill() {
	k.dead.Store(true)
	k.once.Do(func() { close(k.killed) })
}

// Killed is closed when the first request is stopped, or Kill is called.
func (k *Killer) Killed() <-chan struct{} { return k.killed }

// Fired reports whether the Killer has killed.
func (k *Killer) Fired() bool { return k.dead.Load() }

// Passed is the number of requests let through.
func (k *Killer) Passed() int { return int(k.passed.Load()) }
