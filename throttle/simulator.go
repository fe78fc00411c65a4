package throttle

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/google/uuid"
)

// SimConfig sets what a Simulator lets through.
type SimConfig struct {
	// PartitionRate is the entities per second one table + PartitionKey
	// serves, with a burst of one second's worth; 0 means PartitionTarget.
	PartitionRate float64
	// AccountRate is the requests per second the account serves, likewise;
	// 0 means AccountTarget.
	AccountRate float64
	// RetryAfter, when set, is sent as the Retry-After header (whole
	// seconds, at least 1) of every 503.
	RetryAfter time.Duration
}

// SimStats counts what a Simulator did.
type SimStats struct {
	Requests  int64 // tries seen
	Throttled int64 // answered 503 without being sent
	Entities  int64 // entities of the tries let through
}

// Simulator answers requests above its rates with the Table service's 503
// Server Busy, without sending them; see the package doc. It is a
// per-retry azcore policy for tests and benchmarks, safe for concurrent use.
type Simulator struct {
	cfg SimConfig
	now func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	stats   SimStats
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewSimulator returns a Simulator with cfg's rates.
func NewSimulator(cfg SimConfig) (*Simulator, error) {
	if err := checkRate("SimConfig.PartitionRate", cfg.PartitionRate); err != nil {
		return nil, err
	}
	if err := checkRate("SimConfig.AccountRate", cfg.AccountRate); err != nil {
		return nil, err
	}
	if cfg.RetryAfter < 0 {
		return nil, &ConfigError{Field: "SimConfig.RetryAfter", Reason: "is " + cfg.RetryAfter.String() + ": want 0 (none) or more"}
	}
	if cfg.PartitionRate == 0 {
		cfg.PartitionRate = PartitionTarget
	}
	if cfg.AccountRate == 0 {
		cfg.AccountRate = AccountTarget
	}
	return &Simulator{cfg: cfg, now: time.Now, buckets: map[string]*bucket{}}, nil
}

// Stats returns the counts so far.
func (s *Simulator) Stats() SimStats {
	if s == nil || s.buckets == nil {
		return SimStats{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// take removes n tokens from key's bucket (rate per second, one second of
// burst) if it holds them.
func (s *Simulator) take(key string, rate, n float64, now time.Time) bool {
	b := s.buckets[key]
	if b == nil {
		b = &bucket{tokens: rate, at: now}
		s.buckets[key] = b
	}
	b.tokens = min(rate, b.tokens+now.Sub(b.at).Seconds()*rate)
	b.at = now
	if b.tokens < n {
		return false
	}
	b.tokens -= n
	return true
}

// Do implements policy.Policy.
func (s *Simulator) Do(req *policy.Request) (*http.Response, error) {
	if err := usable(s != nil && s.buckets != nil, req); err != nil {
		return nil, err
	}
	w := workOf(req)
	s.mu.Lock()
	now := s.now()
	s.stats.Requests++
	ok := s.take("a\x00"+w.account, s.cfg.AccountRate, 1, now)
	if ok && w.table != "" {
		// An entity batch larger than a second's worth could never pass:
		// it waits for a full bucket instead.
		ok = s.take("p\x00"+w.partitionKey(), s.cfg.PartitionRate, min(float64(w.entities), s.cfg.PartitionRate), now)
		if !ok {
			s.buckets["a\x00"+w.account].tokens++ // the account's token back
		}
	}
	if !ok {
		s.stats.Throttled++
		s.mu.Unlock()
		return serverBusy(req.Raw(), s.cfg.RetryAfter, now), nil
	}
	if w.table != "" {
		s.stats.Entities += int64(w.entities)
	}
	s.mu.Unlock()
	return req.Next()
}

// serverBusy is the Table service's answer to a request it sheds.
func serverBusy(req *http.Request, retryAfter time.Duration, now time.Time) *http.Response {
	id := uuid.NewString()
	body := fmt.Sprintf(`{"odata.error":{"code":"ServerBusy","message":{"lang":"en-US","value":"The server is busy.\nRequestId:%s\nTime:%s"}}}`,
		id, now.UTC().Format("2006-01-02T15:04:05.0000000Z"))
	h := http.Header{}
	h.Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	h.Set("x-ms-error-code", "ServerBusy")
	h.Set("x-ms-request-id", id)
	// The service answers in the version the request asked for.
	version := req.Header.Get("x-ms-version")
	if version == "" {
		version = "2019-02-02"
	}
	h.Set("x-ms-version", version)
	h.Set("Date", now.UTC().Format(http.TimeFormat))
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(max(1, int(retryAfter.Round(time.Second)/time.Second))))
	}
	return &http.Response{
		Status:        "503 Server Busy",
		StatusCode:    http.StatusServiceUnavailable,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader([]byte(body))),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
