package faults

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// Resource is the kind of resource a Deleting policy holds.
type Resource uint8

// Resources whose names a Deleting policy holds.
const (
	Table Resource = iota + 1
	Queue
	Container
)

// code is the error code the service answers a create of r's name with
// while it deletes it.
func (r Resource) code() string {
	switch r {
	case Table:
		return "TableBeingDeleted"
	case Queue:
		return "QueueBeingDeleted"
	case Container:
		return "ContainerBeingDeleted"
	}
	return ""
}

// Deleting is a pipeline policy that answers creates as Azure Storage does
// while it deletes a table, queue or container: for about 40 seconds after
// the delete, a create of the same name is refused with 409
// TableBeingDeleted, QueueBeingDeleted or ContainerBeingDeleted. Azurite
// deletes at once and never answers so. While a name is held, every try
// of a create of it gets that answer without being sent; other requests
// pass. Put it in PerRetryPolicies, so that it sees every try, and delete
// the resource through a client without it:
//
//	d := faults.NewDeleting()
//	svc, _ := env.With(d).NewTableService(nil)
//	// … delete the table with env's clients, then:
//	d.Hold(faults.Table, name, 2*time.Second)
//	// a create of name through svc is refused for 2 s.
//
// It is safe for concurrent use.
type Deleting struct {
	mu      sync.Mutex
	held    map[held]time.Time // until when
	refused atomic.Int64
}

type held struct {
	r    Resource
	name string
}

// NewDeleting returns a Deleting that holds no name.
func NewDeleting() *Deleting { return &Deleting{held: map[held]time.Time{}} }

// Hold makes creates of the resource r named name be refused for d from
// now (a table's name in any case: the service's are not case-sensitive).
// d <= 0 releases the name.
func (p *Deleting) Hold(r Resource, name string, d time.Duration) {
	if r == Table {
		name = strings.ToLower(name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if d <= 0 {
		delete(p.held, held{r, name})
		return
	}
	p.held[held{r, name}] = time.Now().Add(d)
}

// Refused returns how many tries it refused.
func (p *Deleting) Refused() int64 { return p.refused.Load() }

// Do implements policy.Policy.
func (p *Deleting) Do(req *policy.Request) (*http.Response, error) {
	r, name := createOf(req)
	if r == 0 {
		return req.Next()
	}
	p.mu.Lock()
	until, ok := p.held[held{r, name}]
	p.mu.Unlock()
	if !ok || !time.Now().Before(until) {
		return req.Next()
	}
	p.refused.Add(1)
	code := r.code()
	var body []byte
	header := http.Header{"X-Ms-Error-Code": {code}}
	if r == Table {
		header.Set("Content-Type", "application/json;odata=minimalmetadata")
		body, _ = json.Marshal(map[string]any{"odata.error": map[string]any{"code": code, "message": map[string]string{"lang": "en-US", "value": "The specified table is being deleted."}}})
	} else {
		header.Set("Content-Type", "application/xml")
		body = []byte(`<?xml version="1.0" encoding="utf-8"?><Error><Code>` + code + `</Code><Message>The specified resource is being deleted.</Message></Error>`)
	}
	return &http.Response{
		Status: "409 Conflict", StatusCode: http.StatusConflict, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: header, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req.Raw(),
	}, nil
}

// createOf returns the kind and name of the resource req creates, or 0:
// a table's POST …/Tables (its name in the body, lower-cased), a queue's
// PUT …/NAME, a container's PUT …/NAME?restype=container.
func createOf(req *policy.Request) (Resource, string) {
	raw := req.Raw()
	q := raw.URL.Query()
	last := path.Base(raw.URL.Path)
	switch {
	case raw.Method == http.MethodPost && last == "Tables":
		body := req.Body()
		if body == nil {
			return 0, ""
		}
		b, err := io.ReadAll(body)
		_ = req.RewindBody()
		var t struct{ TableName string }
		if err != nil || json.Unmarshal(b, &t) != nil || t.TableName == "" {
			return 0, ""
		}
		return Table, strings.ToLower(t.TableName)
	case raw.Method != http.MethodPut || q.Has("comp"):
		return 0, ""
	case q.Get("restype") == "container":
		return Container, last
	case !q.Has("restype") && raw.Header.Get("x-ms-blob-type") == "" && raw.Header.Get("x-ms-copy-source") == "" &&
		strings.Count(strings.Trim(raw.URL.Path, "/"), "/") <= 1:
		// PUT /queue (host-style) or /account/queue (path-style); a blob's
		// PUT has one more segment, or a blob type.
		return Queue, last
	}
	return 0, ""
}
