// Package cosmos is a test profile of the Azure Cosmos DB for Table API: a
// pipeline policy that, in front of Azurite (or a storage account), applies
// the documented differences of Cosmos DB from Table storage, so that
// tablekit's suites can say what holds there without a Cosmos emulator.
//
// What the profile does, each from the Cosmos DB for Table FAQ:
//
//   - ETags are opaque: every ETag the service sends (the ETag header, a
//     body's odata.etag, a $batch reply's ETag lines) reaches the client as
//     W/"<32 hex digits>", with no time in it; the profile maps it back in
//     If-Match headers (also inside $batch bodies).
//   - Query results are not sorted by PartitionKey and RowKey: each page
//     comes back in reverse order (continuation tokens still work).
//   - A RowKey is at most 255 bytes; a $batch at most 2 MB; the property
//     names Id, rid, etag and ResourceId are reserved: such requests are
//     refused with 400 Bad Request before they reach the service.
//
// Not modelled: Cosmos DB's case-sensitive table names, its reserved
// capacity and its larger encoding of binary values (a 1 MiB binary entity
// that Table storage takes may be refused by Cosmos DB); nor which rows a
// page holds: the profile keeps Table storage's pages and only reverses
// them, whereas a Cosmos DB page, or a $top query, need not hold the first
// rows in key order. The form of the opaque ETag is this profile's own.
//
// integration's TABLEKIT_PROFILE=cosmos puts a Profile in every table
// client of a test Env, so that whole suites run through it.
package cosmos

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/tablekit/tablekit/internal/pipeline"
)

// Limits of Cosmos DB for Table that Table storage does not have.
const (
	MaxRowKeyBytes = 255
	MaxBatchBytes  = 2 << 20
)

// ReservedNames are property names Cosmos DB for Table does not support.
var ReservedNames = []string{"Id", "rid", "etag", "ResourceId"}

// Profile is the policy. Put it in PerRetryPolicies; one Profile may serve
// many clients (its ETag map is shared, as one account's would be).
type Profile struct {
	mu     sync.Mutex
	toReal map[string]string
}

// New returns a Profile.
func New() *Profile { return &Profile{toReal: map[string]string{}} }

// opaque is the opaque ETag standing for a real one.
func (p *Profile) opaque(real string) string {
	sum := sha256.Sum256([]byte(real))
	o := `W/"` + hex.EncodeToString(sum[:16]) + `"`
	p.mu.Lock()
	p.toReal[o] = real
	p.mu.Unlock()
	return o
}

func (p *Profile) real(etag string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.toReal[etag]; ok {
		return r
	}
	return etag // "*", or one this profile never gave out
}

// Do implements policy.Policy.
func (p *Profile) Do(req *policy.Request) (*http.Response, error) {
	switch {
	case p == nil || p.toReal == nil:
		return nil, errors.New("cosmos: use New: the zero Profile has no state")
	case req == nil || req.Raw() == nil:
		return nil, errors.New("cosmos: nil request")
	}
	raw := req.Raw()
	if resp := p.refuse(req); resp != nil {
		return resp, nil
	}
	if m := raw.Header.Get("If-Match"); m != "" {
		raw.Header.Set("If-Match", p.real(m))
	}
	if isBatch(raw.URL) {
		if body := pipeline.ReadBody(req); body != nil {
			out := ifMatchLine.ReplaceAllFunc(body, func(line []byte) []byte {
				v := strings.TrimSpace(string(line[len("If-Match:"):]))
				return []byte("If-Match: " + p.real(v))
			})
			if !bytes.Equal(out, body) {
				if err := req.SetBody(nopCloser{bytes.NewReader(out)}, raw.Header.Get("Content-Type")); err != nil {
					return nil, err
				}
			}
		}
	}
	resp, err := req.Next()
	if err != nil || resp == nil {
		return resp, err
	}
	return p.rewrite(raw, resp)
}

var (
	ifMatchLine  = regexp.MustCompile(`(?m)^If-Match:[^\r\n]*`)
	etagLine     = regexp.MustCompile(`(?m)^ETag: ?(W/"[^\r\n]*")`)
	odataETag    = regexp.MustCompile(`"odata\.etag":"((?:[^"\\]|\\.)*)"`)
	rkInURL      = regexp.MustCompile(`RowKey='((?:[^']|'')*)'`)
	reservedJSON = regexp.MustCompile(`"(Id|rid|etag|ResourceId)"\s*:`)
)

func isBatch(u *url.URL) bool { return strings.HasSuffix(u.Path, "/$batch") }

// refuse answers a request that breaks a Cosmos DB limit, or nil.
func (p *Profile) refuse(req *policy.Request) *http.Response {
	raw := req.Raw()
	var body []byte
	if raw.Method == http.MethodPost || raw.Method == http.MethodPut || raw.Method == http.MethodPatch || raw.Method == "MERGE" {
		body = pipeline.ReadBody(req)
	}
	if isBatch(raw.URL) && len(body) > MaxBatchBytes {
		return badRequest(raw, "RequestBodyTooLarge", fmt.Sprintf("The batch is %d bytes; Cosmos DB takes at most %d.", len(body), MaxBatchBytes))
	}
	// The request's own URL path is decoded already; the operations of a
	// $batch carry theirs percent-encoded in the body. Either way the key
	// is an OData literal, in which '' stands for '.
	var rks []string
	for _, m := range rkInURL.FindAllStringSubmatch(raw.URL.Path, -1) {
		rks = append(rks, strings.ReplaceAll(m[1], "''", "'"))
	}
	for _, m := range rkInURL.FindAllStringSubmatch(string(body), -1) {
		rk, err := url.PathUnescape(m[1])
		if err != nil {
			rk = m[1]
		}
		rks = append(rks, strings.ReplaceAll(rk, "''", "'"))
	}
	for _, rk := range rks {
		if len(rk) > MaxRowKeyBytes {
			return badRequest(raw, "InvalidInput", fmt.Sprintf("A RowKey of %d bytes; Cosmos DB takes at most %d.", len(rk), MaxRowKeyBytes))
		}
	}
	if len(body) > 0 {
		if m := reservedJSON.FindSubmatch(body); m != nil {
			return badRequest(raw, "PropertyNameInvalid", fmt.Sprintf("The property name %s is reserved by Cosmos DB.", m[1]))
		}
		for _, rk := range rowKeysInJSON(body) {
			if len(rk) > MaxRowKeyBytes {
				return badRequest(raw, "InvalidInput", fmt.Sprintf("A RowKey of %d bytes; Cosmos DB takes at most %d.", len(rk), MaxRowKeyBytes))
			}
		}
	}
	return nil
}

var rowKeyJSON = regexp.MustCompile(`"RowKey"\s*:\s*("(?:[^"\\]|\\.)*")`)

func rowKeysInJSON(body []byte) []string {
	var out []string
	for _, m := range rowKeyJSON.FindAllSubmatch(body, -1) {
		var s string
		if json.Unmarshal(m[1], &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// rewrite makes the answer's ETags opaque and a query's order not sorted.
func (p *Profile) rewrite(req *http.Request, resp *http.Response) (*http.Response, error) {
	if e := resp.Header.Get("ETag"); e != "" {
		resp.Header.Set("ETag", p.opaque(e))
	}
	ct := resp.Header.Get("Content-Type")
	if resp.Body == nil || !(strings.Contains(ct, "json") || strings.Contains(ct, "multipart")) {
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	body = odataETag.ReplaceAllFunc(body, func(m []byte) []byte {
		sub := odataETag.FindSubmatch(m)
		var real string
		if json.Unmarshal(append(append([]byte{'"'}, sub[1]...), '"'), &real) != nil {
			return m
		}
		o, _ := json.Marshal(p.opaque(real))
		return append([]byte(`"odata.etag":`), o...)
	})
	if strings.Contains(ct, "multipart") {
		body = etagLine.ReplaceAllFunc(body, func(m []byte) []byte {
			sub := etagLine.FindSubmatch(m)
			return []byte("ETag: " + p.opaque(string(sub[1])))
		})
	}
	if req.Method == http.MethodGet && strings.Contains(ct, "json") {
		body = reversePage(body)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return resp, nil
}

// reversePage reverses the "value" array of a query's page, keeping every
// other member and each entity's bytes as they are.
func reversePage(body []byte) []byte {
	var page map[string]json.RawMessage
	if json.Unmarshal(body, &page) != nil {
		return body
	}
	v, ok := page["value"]
	if !ok {
		return body
	}
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil || len(items) < 2 {
		return body
	}
	for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
		items[i], items[j] = items[j], items[i]
	}
	// Rebuild the array in place of the old one, bytes of the rest kept.
	start := bytes.Index(body, v)
	if start < 0 {
		return body
	}
	var out bytes.Buffer
	out.Write(body[:start])
	out.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			out.WriteByte(',')
		}
		out.Write(it)
	}
	out.WriteByte(']')
	out.Write(body[start+len(v):])
	return out.Bytes()
}

func badRequest(req *http.Request, code, msg string) *http.Response {
	b, _ := json.Marshal(map[string]any{"odata.error": map[string]any{"code": code, "message": map[string]string{"lang": "en-US", "value": msg}}})
	h := http.Header{}
	h.Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	h.Set("x-ms-error-code", code)
	return &http.Response{Status: "400 Bad Request", StatusCode: http.StatusBadRequest, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(b)), ContentLength: int64(len(b)), Request: req}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }
