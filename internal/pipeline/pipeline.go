package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
)

// Install adds tablekit's per-call and per-retry policies to o, unless it
// already has them. The per-retry policy goes first among o's per-retry
// policies, so that it sees each try as the retry policy does (after a
// fault-injecting or metering policy has had its say). Slices are copied:
// o may share them with other options.
func Install(o *policy.ClientOptions) {
	if !slices.ContainsFunc(o.PerCallPolicies, isTakeover) {
		o.PerCallPolicies = append(slices.Clip(o.PerCallPolicies), takeoverPolicy{})
	}
	if !slices.ContainsFunc(o.PerRetryPolicies, isTries) {
		o.PerRetryPolicies = append([]policy.Policy{triesPolicy{}}, o.PerRetryPolicies...)
	}
}

// Installed reports whether o carries both policies.
func Installed(o *policy.ClientOptions) bool {
	return slices.ContainsFunc(o.PerCallPolicies, isTakeover) && slices.ContainsFunc(o.PerRetryPolicies, isTries)
}

func isTakeover(p policy.Policy) bool { _, ok := p.(takeoverPolicy); return ok }
func isTries(p policy.Policy) bool    { _, ok := p.(triesPolicy); return ok }

// Call records the tries of one call through a pipeline with the policies.
// A Call belongs to one call: make a new one with WithCall for each.
type Call struct {
	mu      sync.Mutex
	tries   int
	earlier bool // a try before the current one may have reached the service
	current bool // the current (last) try may have reached the service
	stop    bool // end the call at the first failed try that may have reached the service
	first   time.Time
	last    time.Time // when the last try's answer arrived (local clock)
	date    time.Time // that answer's Date header (server clock), zero if none
}

type callKey struct{}

// WithCall returns ctx carrying a new Call.
func WithCall(ctx context.Context) (context.Context, *Call) {
	c := new(Call)
	return context.WithValue(ctx, callKey{}, c), c
}

// StopResends makes the call end at its first try that fails after it
// may have reached the service (a transport error other than a failed
// connection), instead of azcore resending it after RetryDelay: for a
// write whose outcome a read back settles (a write token), a read at once
// beats a resend that meets the service after other writers moved on.
// A try that failed to connect is still resent, and answers (503, 500)
// are retried as azcore retries them.
func (c *Call) StopResends() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stop = true
}

// Tries is the number of tries the per-retry policy saw: 0 when the client
// does not carry the policy or nothing was sent.
func (c *Call) Tries() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tries
}

// Resent reports whether a try before the last one may have reached the
// service, so the last answer may be about a request already executed.
// A try that failed to connect was not sent; any other failed try may have
// been executed.
func (c *Call) Resent() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.earlier
}

// Reached reports whether any try may have reached the service: false
// when there was none or every try failed to connect.
func (c *Call) Reached() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.earlier || c.current
}

// FirstTryNotBefore is a lower bound, on the server's clock, of when the
// call's first try can have reached the service: the Date of the last
// answer (truncated to the second, so never late) less the local time from
// the first try's start to that answer. ok is false without a dated answer.
// An entity version stamped earlier than this (less a margin for clock
// differences inside the service) cannot be the work of this call.
func (c *Call) FirstTryNotBefore() (t time.Time, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.date.IsZero() || c.tries == 0 {
		return time.Time{}, false
	}
	return c.date.Add(-c.last.Sub(c.first)), true
}

// Date is the Date header of the call's last answer: the server's clock
// when it answered, truncated to the second (so never late). ok is false
// without a dated answer (no try, or a client without the policies).
func (c *Call) Date() (t time.Time, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.date, !c.date.IsZero()
}

// triesPolicy counts the tries of calls that carry a Call.
type triesPolicy struct{}

func (triesPolicy) Do(req *policy.Request) (*http.Response, error) {
	if err := req.Raw().Context().Err(); err != nil {
		// The call's context ended before this try: net/http would send
		// nothing, so the try is no try — not counted, not metered by the
		// policies after this one, and a write whose context was cancelled
		// before it started was certainly not applied.
		return nil, err
	}
	c, _ := req.Raw().Context().Value(callKey{}).(*Call)
	if c == nil {
		return req.Next()
	}
	c.mu.Lock()
	if c.tries == 0 {
		c.first = time.Now()
	}
	c.tries++
	c.earlier = c.earlier || c.current
	c.current = true
	c.mu.Unlock()

	resp, err := req.Next()

	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = time.Now()
	c.current = !(err != nil && notSent(err))
	c.date = time.Time{}
	if resp != nil {
		if d, perr := http.ParseTime(resp.Header.Get("Date")); perr == nil {
			c.date = d
		}
	}
	if err != nil && c.stop && c.current {
		err = noResend{err}
	}
	return resp, err
}

// noResend is a try's error that azcore's retry policy does not retry
// (it has the NonRetriable method azcore looks for).
type noResend struct{ err error }

func (e noResend) Error() string { return e.err.Error() }
func (e noResend) Unwrap() error { return e.err }
func (noResend) NonRetriable()   {}

// notSent reports a transport error that happened before any byte of the
// request left: the connection could not be made.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// Takeover replaces the request an aztables method builds (the carrier)
// by tablekit's own: its body always, and its method, path and headers
// when set. What is not replaced is the carrier's: the URL's scheme, host
// and query (a SAS), the service version and the other headers. Choose a
// carrier whose request is the one wanted but for what is replaced
// (SubmitTransaction for a $batch; the single-entity call of the same
// kind for a single-entity write, and GetEntity for a point read, whose
// keys aztables cannot address).
type Takeover struct {
	// Method, when not empty, replaces the carrier's HTTP method.
	Method string
	// Path, when not empty, replaces the path of the carrier's URL. It is
	// the escaped form, sent as is: tablekit escapes keys itself.
	Path string
	// Header entries replace the carrier's headers of the same name; an
	// entry with no value removes the header.
	Header http.Header
	// Body, when not nil, replaces the carrier's body, with ContentType.
	Body        []byte
	ContentType string
	// CarrierStatus and CarrierBody are what the carrier is handed when
	// the service answered with a success: a reply it accepts without
	// reading tablekit's. A failure is handed to it as is, so that its
	// tracing span records it.
	CarrierStatus int
	CarrierBody   []byte

	taken bool
	resp  *http.Response
	err   error
}

type takeoverKey struct{}

// ErrNotInstalled reports a client without tablekit's policies.
var ErrNotInstalled = errors.New("entity: the client's pipeline does not carry tablekit's policies (build it with entity.ClientOptions)")

// Send runs carrier with a context that makes the per-call policy send
// t's body in place of the carrier's, and returns the service's answer to
// that request: the response (its body buffered by azcore) or the
// transport error. The carrier's own result is ignored. Call it only for
// a client that Probe found carrying the policies: otherwise the carrier's
// request would be sent as built.
func Send(ctx context.Context, t *Takeover, carrier func(ctx context.Context)) (*http.Response, error) {
	carrier(context.WithValue(ctx, takeoverKey{}, t))
	if !t.taken {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, ErrNotInstalled
	}
	return t.resp, t.err
}

type probeKey struct{}

type probeResult struct{ url *url.URL }

// Probe reports whether the pipeline carrier calls through carries the
// per-call policy, and the URL the carrier's request was built for. It
// sends nothing: the carrier runs with a cancelled context, which the
// policy answers itself, while a pipeline without it stops before
// sending (net/http's transport sends nothing for a done context). carrier
// should be a read (GetEntity), harmless should a transport send it.
func Probe(carrier func(ctx context.Context)) (*url.URL, bool) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := &probeResult{}
	carrier(context.WithValue(ctx, probeKey{}, p))
	return p.url, p.url != nil
}

// takeoverPolicy is the per-call policy.
type takeoverPolicy struct{}

func (takeoverPolicy) Do(req *policy.Request) (*http.Response, error) {
	ctx := req.Raw().Context()
	if p, ok := ctx.Value(probeKey{}).(*probeResult); ok {
		u := *req.Raw().URL
		p.url = &u
		return reply(req, http.StatusOK, []byte("{}")), nil
	}
	t, ok := ctx.Value(takeoverKey{}).(*Takeover)
	if !ok || t.taken {
		return req.Next()
	}
	t.taken = true
	if err := t.apply(req); err != nil {
		t.err = err
		return nil, err
	}
	t.resp, t.err = req.Next()
	if t.err != nil {
		return nil, t.err
	}
	if t.resp.StatusCode/100 == 2 {
		return reply(req, t.CarrierStatus, t.CarrierBody), nil
	}
	return t.resp, nil
}

// apply makes the carrier's request tablekit's.
func (t *Takeover) apply(req *policy.Request) error {
	raw := req.Raw()
	if t.Method != "" {
		raw.Method = t.Method
	}
	if t.Path != "" {
		p, err := url.PathUnescape(t.Path)
		if err != nil {
			return err
		}
		u := *raw.URL
		u.Path, u.RawPath = p, t.Path
		raw.URL = &u
	}
	for name, v := range t.Header {
		if len(v) == 0 {
			raw.Header.Del(name)
		} else {
			raw.Header[name] = v
		}
	}
	if t.Body == nil {
		return nil
	}
	return req.SetBody(streaming.NopCloser(bytes.NewReader(t.Body)), t.ContentType)
}

// reply is a response made up for a carrier.
func reply(req *policy.Request, status int, body []byte) *http.Response {
	return &http.Response{
		Status:        http.StatusText(status),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req.Raw(),
	}
}
