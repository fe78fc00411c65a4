package patterntest

import (
	"net/http"
	"sync/atomic"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// Before is a per-retry pipeline policy that runs Fn once, just before the
// N-th request Match accepts is sent (N 0 or 1: the first; Match nil: every
// request): another writer's step put between a writer's requests, at the
// same point on every run, so that a race a test guards against happens
// every time.
type Before struct {
	N     int32
	Match func(*http.Request) bool
	Fn    func()
	seen  atomic.Int32
}

// Do implements policy.Policy.
func (b *Before) Do(req *policy.Request) (*http.Response, error) {
	if b.Match == nil || b.Match(req.Raw()) {
		if b.seen.Add(1) == max(b.N, 1) {
			b.Fn()
		}
	}
	return req.Next()
}

// Ran reports whether Fn ran: a test checks it, so that a change of the
// requests a writer sends cannot make it pass without its race.
func (b *Before) Ran() bool { return b.seen.Load() >= max(b.N, 1) }

// Writes matches every request that is not a read (GET).
func Writes(r *http.Request) bool { return r.Method != http.MethodGet }
