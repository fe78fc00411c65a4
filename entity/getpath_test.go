package entity_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/tracing"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
)

// Get is tablekit's own point query on the client's pipeline, carried by
// aztables' GetEntity: a GET of the keys' path, every key the service
// allows included.

// getServer answers every request with one entity, or 404 for a RowKey
// "missing", and records the requests.
type getServer struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (s *getServer) Do(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	if strings.Contains(req.URL.Path, "RowKey='missing'") {
		body := `{"odata.error":{"code":"ResourceNotFound","message":{"lang":"en-US","value":"The specified resource does not exist."}}}`
		return &http.Response{StatusCode: http.StatusNotFound, Header: http.Header{"Content-Type": {"application/json"}, "X-Ms-Error-Code": {"ResourceNotFound"}}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	}
	body := `{"PartitionKey":"","RowKey":"Ü'p k","Name":"from the body","Age":41}`
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}, "Etag": {`W/"datetime'2024-01-01T00%3A00%3A00.0000000Z'"`}}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

// spans records the names of the spans a client starts and the error
// status they end with.
type spans struct {
	mu    sync.Mutex
	names []string
	errs  []string
}

func (s *spans) provider() tracing.Provider {
	return tracing.NewProvider(func(name, version string) tracing.Tracer {
		return tracing.NewTracer(func(ctx context.Context, spanName string, _ *tracing.SpanOptions) (context.Context, tracing.Span) {
			s.mu.Lock()
			s.names = append(s.names, spanName)
			s.mu.Unlock()
			return ctx, tracing.NewSpan(tracing.SpanImpl{SetStatus: func(code tracing.SpanStatus, desc string) {
				if code == tracing.SpanStatusError {
					s.mu.Lock()
					s.errs = append(s.errs, spanName)
					s.mu.Unlock()
				}
			}})
		}, nil)
	}, nil)
}

// TestGetRequestAsSent: a Get, as the transport sees it, is one GET of the
// keys' path escaped as the writes escape it (an empty PartitionKey
// included, which aztables' GetEntity refuses and which was read with a
// $filter query), the SAS query kept, Accept asking for the metadata the
// type needs; the entity is decoded from the body sent, the ETag taken
// from the header; tracing names the call Client.GetEntity, and a 404 is
// ErrNotFound naming the keys, and an error in the trace.
func TestGetRequestAsSent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := &getServer{}
	sp := &spans{}
	opts := entity.ClientOptions(&aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: srv, TracingProvider: sp.provider()}})
	client, err := aztables.NewClientWithNoCredential("https://acct.table.core.windows.net/People?sv=2019-02-02&sig=s", opts)
	if err != nil {
		t.Fatal(err)
	}
	people, err := entity.NewTable[Person](client) // an ETag field: minimal metadata
	if err != nil {
		t.Fatal(err)
	}
	bench, err := entity.NewTable[BenchPerson](client) // none: no metadata
	if err != nil {
		t.Fatal(err)
	}
	sp.names = nil // NewTable's probes: carriers sent nowhere
	p, err := people.Get(ctx, "", "Ü'p k")
	if err != nil || p.Name != "from the body" || p.Age != 41 || p.ETag != `W/"datetime'2024-01-01T00%3A00%3A00.0000000Z'"` {
		t.Fatalf("Get: %+v, %v", p, err)
	}
	if _, err := bench.Get(ctx, "p", "r"); err != nil {
		t.Fatalf("Get without metadata: %v", err)
	}
	_, err = people.Get(ctx, "a'b", "missing")
	var se *entity.ServiceError
	if !errors.Is(err, entity.ErrNotFound) || !errors.As(err, &se) || se.StatusCode != 404 || se.Op != "Get" || se.PartitionKey != "a'b" || se.RowKey != "missing" || se.Table != "People" {
		t.Fatalf("Get of a missing entity: %#v", err)
	}
	want := []struct{ path, accept string }{
		{"/People(PartitionKey='',RowKey='%C3%9C%27%27p%20k')", "application/json;odata=minimalmetadata"},
		{"/People(PartitionKey='p',RowKey='r')", "application/json;odata=nometadata"},
		{"/People(PartitionKey='a%27%27b',RowKey='missing')", "application/json;odata=minimalmetadata"},
	}
	if len(srv.reqs) != len(want) {
		t.Fatalf("%d requests, want %d", len(srv.reqs), len(want))
	}
	for i, w := range want {
		r := srv.reqs[i]
		if r.Method != http.MethodGet || r.URL.EscapedPath() != w.path || r.URL.Query().Get("sig") != "s" || r.URL.Query().Has("$filter") || r.Header.Get("Accept") != w.accept || r.ContentLength > 0 {
			t.Errorf("request %d: %s %s?%s Accept %q; want GET %s, Accept %q", i, r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get("Accept"), w.path, w.accept)
		}
	}
	var calls int
	for _, n := range sp.names {
		if n == "Client.GetEntity" {
			calls++
		}
	}
	if calls != 3 || len(sp.names) != 6 || len(sp.errs) == 0 || sp.errs[len(sp.errs)-1] != "Client.GetEntity" {
		t.Errorf("spans %q, errors in %q; want 3 Client.GetEntity, each with its HTTP GET, the last one failed", sp.names, sp.errs)
	}
}

// TestGetEveryKey reads, on the service, entities named by every awkward
// key (empty, quotes, spaces, characters that need escaping) written with
// a raw client's transaction, compares them with a raw read, and gets
// ErrNotFound for each missing key pair.
func TestGetEveryKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	people := kitTable[Person](t)
	raw := people.Client()
	for _, pk := range awkwardKeys {
		for _, rk := range []string{"", "Ü'p k", "x+y&z=1;$@!*(),"} {
			want := Person{Dept: pk, ID: rk, Name: "n " + pk + "/" + rk, Age: 7}
			if err := people.Insert(ctx, &want); err != nil {
				t.Fatalf("insert %q/%q: %v", pk, rk, err)
			}
			got, err := people.Get(ctx, pk, rk)
			if err != nil || got.Name != want.Name || got.Age != 7 || got.ETag != want.ETag || got.Dept != pk || got.ID != rk {
				t.Fatalf("Get %q/%q: %+v, %v; want %+v", pk, rk, got, err, want)
			}
			stored := rawRow(t, raw, pk, rk)
			if stored == nil || stored["Name"] != want.Name || stored["odata.etag"] != got.ETag {
				t.Fatalf("raw read of %q/%q: %v; Get gave %+v", pk, rk, stored, got)
			}
			if _, err := people.Get(ctx, pk, rk+"-missing"); !errors.Is(err, entity.ErrNotFound) {
				t.Fatalf("Get of missing %q/%q: %v", pk, rk+"-missing", err)
			}
		}
	}
}

// TestGetWithoutThePolicies: on a client built without ClientOptions, Get
// is aztables' GetEntity, and empty keys, which GetEntity refuses, are
// still read (with a query); a missing entity is ErrNotFound either way.
func TestGetWithoutThePolicies(t *testing.T) {
	ctx := context.Background()
	people, err := entity.NewTable[Person](plainClient(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range [][2]string{{"", ""}, {"", "r"}, {"p", ""}, {"O'Brien", "r"}} {
		p := Person{Dept: k[0], ID: k[1], Name: "n " + k[0] + "/" + k[1]}
		if err := people.Insert(ctx, &p); err != nil {
			t.Fatalf("insert %q: %v", k, err)
		}
		got, err := people.Get(ctx, k[0], k[1])
		if err != nil || got.Name != p.Name || got.ETag != p.ETag {
			t.Fatalf("Get %q: %+v, %v; want %+v", k, got, err, p)
		}
		if _, err := people.Get(ctx, k[0], k[1]+"-missing"); !errors.Is(err, entity.ErrNotFound) {
			t.Fatalf("Get of missing %q: %v", k, err)
		}
	}
}
