// Package proxytest is a throttling front for the Table service, written
// apart from package throttle's Simulator to measure the Limiter against a
// service that shares none of its code: its own request parser (a
// multipart cutter and net/http's request reader for a $batch, not
// throttle's scanner), its own token buckets and its own answer, the
// storage service's 503 ServerBusy with the XML error body.
//
// A [Proxy] keeps a token bucket per table + PartitionKey (entities per
// second) and one per account (requests per second), each Config.Burst
// deep. A request is admitted when every bucket it draws on holds its cost
// (or, for a cost deeper than the bucket, when the bucket is full); its
// cost is then taken, so a large transaction leaves its partition in debt
// and the long-run rate is exactly the configured one. A refused request
// is answered without reaching the backend and costs nothing. The
// partition's refusal says "The server is currently unable to receive
// requests. Please retry your request.", the account's "Operations per
// second is over the account limit.", as the service's documented
// ServerBusy messages do.
//
// The Proxy fronts a backend in process ([Proxy.Transport], for azcore's
// ClientOptions.Transport, on a real or a virtual clock) or over HTTP
// ([Proxy.Handler]). [Backend] is a backend that accepts everything after
// a latency, for runs that measure the Limiter alone. Every try is
// recorded ([Proxy.Events]) so a test can compute, over any window, the
// share of requests throttled and the entities admitted.
package proxytest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Config sets a Proxy's limits.
type Config struct {
	// PartitionRate is the entities per second one table + PartitionKey
	// admits; 0 means no partition limit.
	PartitionRate float64
	// AccountRate is the requests per second one account admits; 0 means
	// no account limit.
	AccountRate float64
	// Burst is each bucket's depth, as time at its rate; 0 means a second.
	Burst time.Duration
}

// Doer sends a request: an *http.Client, azcore's policy.Transporter.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Event is one try the Proxy answered.
type Event struct {
	At       time.Time
	Client   string // the label of the Transport it came through
	Account  string
	Table    string // "" for a request that names no partition
	Key      string // PartitionKey
	Entities int    // entities it writes or reads by key (1 for others)
	Admitted bool
	Refused  string // "partition" or "account" when refused
}

// Proxy is a throttling front; see the package doc. Safe for concurrent
// use.
type Proxy struct {
	mu      sync.Mutex
	cfg     Config
	buckets map[string]*bucket
	events  []Event
}

type bucket struct {
	tokens float64
	at     time.Time
}

// New returns a Proxy with cfg's limits.
func New(cfg Config) (*Proxy, error) {
	if cfg.PartitionRate < 0 || cfg.AccountRate < 0 || cfg.Burst < 0 {
		return nil, fmt.Errorf("proxytest: negative limit in %+v", cfg)
	}
	if cfg.Burst == 0 {
		cfg.Burst = time.Second
	}
	return &Proxy{cfg: cfg, buckets: map[string]*bucket{}}, nil
}

// SetRates changes the limits from now on: a partition or account limit
// that drops mid-run. Tokens above the new depth are lost.
func (p *Proxy) SetRates(partition, account float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cfg.PartitionRate, p.cfg.AccountRate = partition, account
}

// Events returns a copy of every try answered so far, in order.
func (p *Proxy) Events() []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Event(nil), p.events...)
}

// admit draws cost from the bucket at key, or reports that it cannot.
func (p *Proxy) refill(key string, rate float64, now time.Time) *bucket {
	depth := rate * p.cfg.Burst.Seconds()
	b := p.buckets[key]
	if b == nil {
		b = &bucket{tokens: depth, at: now}
		p.buckets[key] = b
	}
	if now.After(b.at) {
		b.tokens += now.Sub(b.at).Seconds() * rate
		b.at = now
	}
	b.tokens = min(b.tokens, depth)
	return b
}

func (p *Proxy) holds(b *bucket, rate, cost float64) bool {
	return b.tokens >= min(cost, rate*p.cfg.Burst.Seconds())
}

// decide records r's try at now and says whether it is admitted, and if
// not by which limit.
func (p *Proxy) decide(client string, r request, now time.Time) (refused string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var acct, part *bucket
	if rate := p.cfg.AccountRate; rate > 0 {
		acct = p.refill("a\x00"+r.account, rate, now)
		if !p.holds(acct, rate, 1) {
			refused = "account"
		}
	}
	if rate := p.cfg.PartitionRate; rate > 0 && r.table != "" && refused == "" {
		part = p.refill("p\x00"+r.account+"\x00"+r.table+"\x00"+r.key, rate, now)
		if !p.holds(part, rate, float64(r.entities)) {
			refused = "partition"
		}
	}
	if refused == "" {
		if acct != nil {
			acct.tokens--
		}
		if part != nil {
			part.tokens -= float64(r.entities)
		}
	}
	p.events = append(p.events, Event{At: now, Client: client, Account: r.account, Table: r.table, Key: r.key,
		Entities: r.entities, Admitted: refused == "", Refused: refused})
	return refused
}

// Transport returns a Doer that sends through the Proxy to next, its
// events labelled client. Time is time.Now: in a testing/synctest bubble,
// the bubble's virtual clock.
func (p *Proxy) Transport(client string, next Doer) Doer {
	return doerFunc(func(req *http.Request) (*http.Response, error) {
		r, err := read(req)
		if err != nil {
			return nil, err
		}
		now := time.Now()
		if refused := p.decide(client, r, now); refused != "" {
			return serverBusy(req, refused, now), nil
		}
		return next.Do(req)
	})
}

// Handler returns an HTTP front that answers requests through the Proxy,
// passing those it admits to next (an httputil.ReverseProxy to the
// service, say). The label of its events is the request's User-Agent.
func (p *Proxy) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r, err := read(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		now := time.Now()
		if refused := p.decide(req.UserAgent(), r, now); refused != "" {
			resp := serverBusy(req, refused, now)
			for k, v := range resp.Header {
				w.Header()[k] = v
			}
			w.WriteHeader(resp.StatusCode)
			io.Copy(w, resp.Body)
			return
		}
		next.ServeHTTP(w, req)
	})
}

type doerFunc func(*http.Request) (*http.Response, error)

func (f doerFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

// The service's documented ServerBusy messages.
const (
	msgPartition = "The server is currently unable to receive requests. Please retry your request."
	msgAccount   = "Operations per second is over the account limit."
)

// serverBusy is the storage service's 503 ServerBusy with its XML error
// body.
func serverBusy(req *http.Request, refused string, now time.Time) *http.Response {
	msg := msgPartition
	if refused == "account" {
		msg = msgAccount
	}
	id := fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", rand.Uint32(), rand.Uint32()&0xffff, rand.Uint32()&0xffff, rand.Uint32()&0xffff, rand.Uint64()&0xffffffffffff)
	body := `<?xml version="1.0" encoding="utf-8"?><Error><Code>ServerBusy</Code><Message>` + msg +
		"\nRequestId:" + id + "\nTime:" + now.UTC().Format("2006-01-02T15:04:05.0000000Z") + "</Message></Error>"
	h := http.Header{}
	h.Set("Content-Type", "application/xml")
	h.Set("x-ms-error-code", "ServerBusy")
	h.Set("x-ms-request-id", id)
	if v := req.Header.Get("x-ms-version"); v != "" {
		h.Set("x-ms-version", v)
	}
	h.Set("Date", now.UTC().Format(http.TimeFormat))
	return &http.Response{
		Status: "503 Server Busy", StatusCode: http.StatusServiceUnavailable,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: req,
	}
}

// request is what a try asks of the service, as the Proxy counts it.
type request struct {
	account, table, key string
	entities            int
}

// read classifies req, leaving its body readable.
func read(req *http.Request) (request, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		var buf bytes.Buffer
		buf.Grow(int(max(req.ContentLength, 0)) + bytes.MinRead)
		_, err := buf.ReadFrom(req.Body)
		req.Body.Close()
		if err != nil {
			return request{}, err
		}
		b := buf.Bytes()
		body = b
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	r := request{account: accountOf(req.URL), entities: 1}
	last := lastSegment(req.URL)
	switch {
	case last == "$batch":
		table, key, n := readBatch(req.Header.Get("Content-Type"), body)
		if n > 0 {
			r.table, r.key, r.entities = table, key, n
		}
	case last == "" || strings.HasPrefix(last, "Tables"):
	case strings.HasSuffix(last, "()"): // a query
	default:
		r.table, r.key = entityOf(req.Method, last, body)
	}
	return r, nil
}

// lastSegment is u's last path segment, unescaped after it is cut, so a
// key's escaped '/' stays in it.
func lastSegment(u *url.URL) string {
	p := u.EscapedPath()
	seg := p[strings.LastIndexByte(p, '/')+1:]
	if s, err := url.PathUnescape(seg); err == nil {
		return s
	}
	return seg
}

// accountOf names the account: the first label of NAME.table.core.…, or
// for a path-style endpoint (an emulator's) host and first segment.
func accountOf(u *url.URL) string {
	host := u.Hostname()
	if strings.Count(host, ".") >= 2 && !isIP(host) {
		return host[:strings.IndexByte(host, '.')]
	}
	seg, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	return host + "/" + seg
}

func isIP(h string) bool {
	for _, c := range h {
		if (c < '0' || c > '9') && c != '.' && c != ':' {
			return false
		}
	}
	return true
}

// entityOf reads the table and PartitionKey of a single-entity request
// from its last path segment, table(PartitionKey='…',RowKey='…'), or for
// an insert (POST to the table) from its JSON body.
func entityOf(method, last string, body []byte) (table, key string) {
	table, keys, ok := strings.Cut(last, "(")
	if !ok {
		if method != http.MethodPost {
			return "", ""
		}
		var e struct{ PartitionKey *string }
		if json.Unmarshal(body, &e) != nil || e.PartitionKey == nil {
			return "", ""
		}
		return table, *e.PartitionKey
	}
	const pre = "PartitionKey='"
	if !strings.HasPrefix(keys, pre) {
		return "", ""
	}
	return table, odataString(keys[len(pre):])
}

// odataString reads an OData string literal's body up to its closing
// quote, where a doubled quote stands for one.
func odataString(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '\'')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		if !strings.HasPrefix(s[i:], "''") {
			return b.String()
		}
		b.WriteByte('\'')
		s = s[i+2:]
	}
}

// readBatch reads a $batch body: the batch part holds a changeset whose
// parts are HTTP requests, each cut at its boundary line (as RFC 2046
// delimits them) and the first read by net/http's request reader. It
// returns the table and PartitionKey of the first operation and the
// number of operations.
func readBatch(contentType string, body []byte) (table, key string, ops int) {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil || params["boundary"] == "" {
		return "", "", 0
	}
	for _, part := range parts(body, params["boundary"]) {
		head, rest, ok := bytes.Cut(part, []byte("\r\n\r\n"))
		if !ok {
			continue
		}
		hdr, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(append(head, "\r\n\r\n"...)))).ReadMIMEHeader()
		if err != nil {
			continue
		}
		mt, cs, err := mime.ParseMediaType(hdr.Get("Content-Type"))
		if err != nil || mt != "multipart/mixed" || cs["boundary"] == "" {
			continue
		}
		for _, op := range parts(rest, cs["boundary"]) {
			ops++
			if ops > 1 {
				continue
			}
			_, msg, ok := bytes.Cut(op, []byte("\r\n\r\n")) // the part's own headers
			if !ok {
				continue
			}
			req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(msg)))
			if err != nil {
				continue
			}
			u, err := url.Parse(req.RequestURI)
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(req.Body)
			table, key = entityOf(req.Method, lastSegment(u), b)
		}
	}
	return table, key, ops
}

// parts cuts a multipart body at its boundary lines: what lies between
// "--boundary" lines, up to the closing "--boundary--".
func parts(body []byte, boundary string) [][]byte {
	delim := []byte("--" + boundary)
	var out [][]byte
	i := bytes.Index(body, delim)
	for i >= 0 {
		rest := body[i+len(delim):]
		if bytes.HasPrefix(rest, []byte("--")) {
			break // the closing delimiter
		}
		rest = bytes.TrimPrefix(bytes.TrimLeft(rest, " \t"), []byte("\r\n"))
		j := bytes.Index(rest, append([]byte("\r\n"), delim...))
		if j < 0 {
			break
		}
		out = append(out, rest[:j])
		body, i = rest[j+2:], 0
	}
	return out
}
