package patterntest

import (
	"net/http"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/cost"
)

// Answered is a per-retry pipeline policy that counts, by operation, the
// requests the service executed and answered: the count of requests a
// design sends, exact even when azcore retries.
//
// cost.Meter counts every try, as the service bills them; so does a test
// asserting on it, and a try that never reached the service then shows as
// a request of the design. On a loaded machine that happens: the service
// closes an idle keep-alive connection (Azurite after 5 s) as a POST is
// written on it, the transport cannot replay a POST and azcore sends it
// again; or the service answers 500/503 and azcore retries. Answered
// counts neither: only tries that came back with a status azcore does not
// retry.
//
// Put it last in Env.With, after a fault injector, so that a reply the
// injector drops after the service executed the request (a lost reply)
// is counted: the service did the work.
type Answered struct {
	mu sync.Mutex
	n  map[cost.Key]int
}

// Do implements policy.Policy.
func (a *Answered) Do(req *policy.Request) (*http.Response, error) {
	k := cost.Classify(req.Raw())
	resp, err := req.Next()
	if err == nil && !retried(resp.StatusCode) {
		a.mu.Lock()
		if a.n == nil {
			a.n = map[cost.Key]int{}
		}
		a.n[k]++
		a.mu.Unlock()
	}
	return resp, err
}

// retried reports a status azcore's retry policy sends the request again
// for.
func retried(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// Count is the number of answered requests of op on svc so far.
func (a *Answered) Count(svc cost.Service, op string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n[cost.Key{Service: svc, Op: op}]
}

// Total is the number of answered requests so far.
func (a *Answered) Total() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, c := range a.n {
		n += c
	}
	return n
}

// Reset sets every count back to zero.
func (a *Answered) Reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.n)
}
