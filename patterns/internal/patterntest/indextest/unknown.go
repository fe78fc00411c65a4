package indextest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// FailWrites is a per-retry pipeline policy that fails, before sending,
// the next writes (any table request but a read) to partitions whose
// PartitionKey starts with a prefix: a connection that drops under each
// try of one request, azcore's retries included, so that the caller gets
// a transport error for a request the service never saw.
type FailWrites struct {
	Prefix string
	mu     sync.Mutex
	left   int
	failed int
}

// Arm makes the next n matching tries fail.
func (f *FailWrites) Arm(n int) {
	f.mu.Lock()
	f.left = n
	f.mu.Unlock()
}

// Failed is how many tries it failed.
func (f *FailWrites) Failed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

// Do implements policy.Policy.
func (f *FailWrites) Do(req *policy.Request) (*http.Response, error) {
	f.mu.Lock()
	armed := f.left > 0
	f.mu.Unlock()
	if armed && f.matches(req) {
		f.mu.Lock()
		if f.left > 0 {
			f.left--
			f.failed++
			f.mu.Unlock()
			return nil, fmt.Errorf("indextest: connection dropped before the request was sent: %w", syscall.ECONNRESET)
		}
		f.mu.Unlock()
	}
	return req.Next()
}

func (f *FailWrites) matches(req *policy.Request) bool {
	r := req.Raw()
	if r.Method == http.MethodGet || r.Method == http.MethodHead || strings.Contains(r.URL.Path, "/Tables") || strings.Contains(r.URL.Path, "/messages") {
		return false
	}
	if strings.Contains(r.URL.Path, "(PartitionKey='"+f.Prefix) {
		return true
	}
	if !strings.HasSuffix(r.URL.Path, "$batch") || req.Body() == nil {
		return false
	}
	body, err := io.ReadAll(req.Body())
	_ = req.RewindBody()
	if err != nil {
		return false
	}
	b := string(body)
	return strings.Contains(b, "PartitionKey='"+f.Prefix) || strings.Contains(b, "PartitionKey=%27"+f.Prefix) || strings.Contains(b, `"PartitionKey":"`+f.Prefix)
}

// ReleaseUnknown runs, for the placements kept by a worker (Other, Wide),
// a Modify of an order from "pending" to "shipped" and a Delete of one,
// after the order's entry or list was written, as subtests. The worker's
// writes to the index's partitions then fail before sending, every try of
// one request (patterntest.FaultyRetries retries, so that the request
// ends in a transport error: for a delete, entity.ErrOutcomeUnknown). The
// worker must settle or retry: once the queue drained, with no message
// poisoned, Check finds nothing, "pending" lists nothing, and the
// modified order is listed under "shipped".
func ReleaseUnknown(t *testing.T, a Adapter) {
	for _, p := range []Placement{Other, Wide} {
		if !a.hasPlacement(p) {
			continue
		}
		for _, op := range []string{"Modify", "Delete"} {
			t.Run(p.String()+"/"+op, func(t *testing.T) {
				t.Parallel()
				releaseUnknown(t, &a, Layout{Placement: p}, op)
			})
		}
	}
}

func releaseUnknown(t *testing.T, a *Adapter, l Layout, op string) {
	ctx := context.Background()
	st := a.NewStore(t)
	f := &FailWrites{Prefix: "status_"}
	e := patterntest.Faulty(a.Env, f)
	p := Processor(t, e)
	s := a.Open(t, e, st, l, p)
	o := Order(PK(0), 1, "pending")
	if err := s.Insert(ctx, o); err != nil {
		t.Fatal(err)
	}
	Drain(t, p)
	var err error
	if op == "Modify" {
		err = s.Modify(ctx, o.PartitionKey, o.RowKey, func(e *entity.DynamicEntity) error {
			e.Properties["Status"] = "shipped"
			return nil
		})
	} else {
		err = s.Delete(ctx, o.PartitionKey, o.RowKey)
	}
	if err != nil {
		t.Fatal(err)
	}
	tries := patterntest.FaultyRetries + 1
	f.Arm(tries)
	Drain(t, p)
	if n := f.Failed(); n != tries {
		t.Errorf("%d tries failed, want %d: the fault did not hit the worker", n, tries)
	}
	NoDrift(t, "after the drain", s)
	pk := o.PartitionKey
	if l.Placement == Wide {
		pk = ""
	}
	for _, c := range []struct {
		value string
		want  []drift.Key
	}{
		{"pending", nil},
		{"shipped", map[bool][]drift.Key{true: {{PartitionKey: o.PartitionKey, RowKey: o.RowKey}}}[op == "Modify"]},
	} {
		got, err := s.Listed(ctx, pk, c.value)
		if err != nil || len(got) != len(c.want) || len(got) == 1 && got[0] != c.want[0] {
			t.Errorf("%q lists %v, %v; want %v", c.value, got, err, c.want)
		}
	}
}
