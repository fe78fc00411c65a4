package proxytest

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Backend is a Table service that accepts every request after a latency
// drawn from [Latency, Latency+Jitter) by a generator seeded with Seed:
// a $batch gets a 202 with one 204 per operation, a query an empty page,
// anything else a 204. Time passes with time.Sleep, so in a
// testing/synctest bubble it is virtual.
type Backend struct {
	Latency, Jitter time.Duration
	Seed            uint64

	once    sync.Once
	mu      sync.Mutex
	rng     *rand.Rand
	replies sync.Map // operations → reply body
}

func (b *Backend) delay() time.Duration {
	b.once.Do(func() { b.rng = rand.New(rand.NewPCG(b.Seed, 0x7461626c656b6974)) })
	if b.Jitter <= 0 {
		return b.Latency
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Latency + time.Duration(b.rng.Int64N(int64(b.Jitter)))
}

// Do implements Doer.
func (b *Backend) Do(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var buf bytes.Buffer
		buf.Grow(int(max(req.ContentLength, 0)) + bytes.MinRead)
		buf.ReadFrom(req.Body)
		req.Body.Close()
		body = buf.Bytes()
	}
	if d := b.delay(); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-req.Context().Done():
			t.Stop()
			return nil, req.Context().Err()
		}
	}
	h := http.Header{}
	h.Set("x-ms-version", req.Header.Get("x-ms-version"))
	h.Set("x-ms-request-id", "00000000-0000-0000-0000-000000000000")
	status, out := http.StatusNoContent, ""
	switch last := lastSegment(req.URL); {
	case last == "$batch":
		_, _, n := readBatch(req.Header.Get("Content-Type"), body)
		reply, ok := b.replies.Load(n)
		if !ok {
			reply, _ = b.replies.LoadOrStore(n, batchReply(n))
		}
		status, out = http.StatusAccepted, reply.(string)
		h.Set("Content-Type", "multipart/mixed; boundary="+replyBoundary)
	case strings.HasSuffix(last, "()") || (req.Method == http.MethodGet && !strings.Contains(last, "(")):
		status, out = http.StatusOK, `{"value":[]}`
		h.Set("Content-Type", "application/json;odata=nometadata;streaming=true;charset=utf-8")
	}
	if status == http.StatusNoContent {
		h.Set("ETag", `W/"datetime'2026-01-01T00%3A00%3A00Z'"`)
	}
	return &http.Response{
		Status: strconv.Itoa(status) + " " + http.StatusText(status), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader(out)), ContentLength: int64(len(out)), Request: req,
	}, nil
}

const replyBoundary = "batchresponse_1"

// batchReply is a $batch success: a changeset of one 204 per operation.
func batchReply(n int) string {
	var b bytes.Buffer
	const outer, inner = replyBoundary, "changesetresponse_1"
	b.WriteString("--" + outer + "\r\nContent-Type: multipart/mixed; boundary=" + inner + "\r\n\r\n")
	for range n {
		b.WriteString("--" + inner + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
			"HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 1.0;\r\n" +
			"ETag: W/\"datetime'2026-01-01T00%3A00%3A00Z'\"\r\n\r\n")
	}
	b.WriteString("--" + inner + "--\r\n--" + outer + "--\r\n")
	return b.String()
}
