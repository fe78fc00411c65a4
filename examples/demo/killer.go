package demo

import (
	"errors"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// ErrKilled is the error of every request a Killer stops.
var ErrKilled = errors.New("demo: the process was killed")

// killed is ErrKilled as azcore sees it: not to be retried.
type killed struct{}

func (killed) Error() string { return ErrKilled.Error() }
func (killed) Unwrap() error { return ErrKilled }
func (killed) NonRetriable() {}

// Killer is a per-retry pipeline policy that simulates a process that
// dies: it lets a number of requests through and then fails every later
// one before it is sent, so that a tour can show what a fresh process
// recovers from what is stored. Put it in a view with Env.With.
type Killer struct {
	after  int64 // < 0: until Kill
	seen   atomic.Int64
	dead   atomic.Bool
	once   sync.Once
	killed chan struct{}
}

// NewKiller returns a Killer that lets after requests through; after < 0
// lets every request through until Kill is called.
func NewKiller(after int) *Killer {
	return &Killer{after: int64(after), killed: make(chan struct{})}
}

// Do implements policy.Policy.
func (k *Killer) Do(req *policy.Request) (*http.Response, error) {
	if n := k.seen.Add(1); k.dead.Load() || k.after >= 0 && n > k.after {
		k.Kill()
		return nil, killed{}
	}
	return req.Next()
}

// Kill kills at once: every later request is stopped.
func (k *Killer) Kill() {
	k.dead.Store(true)
	k.once.Do(func() { close(k.killed) })
}

// Killed is closed once the Killer has fired.
func (k *Killer) Killed() <-chan struct{} { return k.killed }
