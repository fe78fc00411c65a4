package entity_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
)

// Single-entity writes go out as tablekit's own requests on the client's
// pipeline, so every key the service allows can be written by every call.

// rawRow reads one entity with a raw aztables query (GetEntity refuses an
// empty PartitionKey): its properties as the service sent them, or nil.
func rawRow(t *testing.T, client *aztables.Client, pk, rk string) map[string]any {
	t.Helper()
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	f := "PartitionKey eq " + q(pk) + " and RowKey eq " + q(rk)
	pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &f})
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatalf("raw read of %q/%q: %v", pk, rk, err)
		}
		for _, raw := range page.Entities {
			var e aztables.EDMEntity
			if err := e.UnmarshalJSON(raw); err != nil {
				t.Fatal(err)
			}
			props := map[string]any{}
			for k, v := range e.Properties {
				props[k] = v
			}
			props["odata.etag"] = e.ETag
			return props
		}
	}
	return nil
}

// TestSingleEntityWritesEveryKey runs every single-entity write on
// entities named by awkward keys — empty, quotes, spaces, characters that
// need escaping — and reads each result back with a raw aztables client.
// aztables refused the empty PartitionKey in Upsert, Update, UpdateAny,
// Delete and Modify.
func TestSingleEntityWritesEveryKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	people := kitTable[Person](t)
	raw := people.Client()
	for _, pk := range awkwardKeys {
		for _, rk := range []string{"", "Ü'p k", "x+y&z=1;$@!*(),"} {
			name := fmt.Sprintf("%q/%q", pk, rk)
			step := func(what string, err error, want map[string]any) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %s: %v", name, what, err)
				}
				got := rawRow(t, raw, pk, rk)
				if want == nil {
					if got != nil {
						t.Fatalf("%s: %s: still stored: %v", name, what, got)
					}
					return
				}
				if got == nil {
					t.Fatalf("%s: %s: nothing stored", name, what)
				}
				for k, v := range want {
					if fmt.Sprint(got[k]) != fmt.Sprint(v) {
						t.Fatalf("%s: %s: %s = %v, want %v (stored %v)", name, what, k, got[k], v, got)
					}
				}
			}
			p := Person{Dept: pk, ID: rk, Name: "v1", Age: 1}
			step("Insert", people.Insert(ctx, &p), map[string]any{"Name": "v1", "Age": 1, "odata.etag": p.ETag})
			p.Age = 2
			step("Update", people.Update(ctx, &p, entity.Merge), map[string]any{"Name": "v1", "Age": 2, "odata.etag": p.ETag})
			r := Person{Dept: pk, ID: rk, Name: "v3"}
			step("UpdateAny", people.UpdateAny(ctx, &r, entity.Replace), map[string]any{"Name": "v3", "Age": nil, "odata.etag": r.ETag})
			u := Person{Dept: pk, ID: rk, Age: 4}
			step("Upsert merge", people.Upsert(ctx, &u, entity.Merge), map[string]any{"Name": "v3", "Age": 4, "odata.etag": u.ETag})
			u = Person{Dept: pk, ID: rk, Name: "v5"}
			step("Upsert replace", people.Upsert(ctx, &u, entity.Replace), map[string]any{"Name": "v5", "Age": nil, "odata.etag": u.ETag})
			m, err := people.Modify(ctx, pk, rk, func(p *Person) error { p.Age = 6; return nil }, entity.ModifyOptions{})
			step("Modify", err, map[string]any{"Name": "v5", "Age": 6, "odata.etag": m.ETag})
			got, err := people.Get(ctx, pk, rk)
			if err != nil || got.ETag != m.ETag || got.Age != 6 {
				t.Fatalf("%s: Get: %+v %v", name, got, err)
			}
			// A stale ETag is refused, by Update and by Delete alike.
			if err := people.Update(ctx, &p, entity.Merge); !errors.Is(err, entity.ErrPreconditionFailed) {
				t.Fatalf("%s: Update with a stale ETag: %v", name, err)
			}
			if err := people.Delete(ctx, pk, rk, p.ETag); !errors.Is(err, entity.ErrPreconditionFailed) {
				t.Fatalf("%s: Delete with a stale ETag: %v", name, err)
			}
			step("DeleteEntity", people.DeleteEntity(ctx, &got), nil)
			if err := people.Insert(ctx, &Person{Dept: pk, ID: rk}); err != nil {
				t.Fatalf("%s: Insert again: %v", name, err)
			}
			deleted, err := people.DeleteIfExists(ctx, pk, rk)
			if !deleted {
				t.Fatalf("%s: DeleteIfExists: %v %v", name, deleted, err)
			}
			step("DeleteIfExists", err, nil)
			if deleted, err := people.DeleteIfExists(ctx, pk, rk); deleted || err != nil {
				t.Fatalf("%s: DeleteIfExists of nothing: %v %v", name, deleted, err)
			}
			if err := people.Delete(ctx, pk, rk, entity.AnyETag); !errors.Is(err, entity.ErrNotFound) {
				t.Fatalf("%s: Delete of nothing: %v", name, err)
			}
		}
	}
}

// TestSingleEntityLostReplyEveryKey: lost replies are settled by reading
// back on tablekit's own request path as before, for entities named by an
// empty PartitionKey and by one holding a quote.
func TestSingleEntityLostReplyEveryKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{})
	people := faultyTable[Person](t, f, 2).WithWriteTokens()
	for _, pk := range []string{"", "Ü'p k"} {
		rk := "r'" + pk
		p := Person{Dept: pk, ID: rk, Name: "v1", Age: 1}
		f.LoseNext(1, isInsert)
		if err := people.Insert(ctx, &p); err != nil {
			t.Fatalf("%q: Insert whose reply was lost: %v", pk, err)
		}
		p.Age = 2
		f.LoseNext(1, isUpdate)
		if err := people.Update(ctx, &p, entity.Merge); err != nil {
			t.Fatalf("%q: Update whose reply was lost: %v", pk, err)
		}
		if got, err := people.Get(ctx, pk, rk); err != nil || got.ETag != p.ETag || got.Age != 2 {
			t.Fatalf("%q: after Update: %+v %v; ETag written back %q", pk, got, err, p.ETag)
		}
		f.LoseNext(1, isUpdate)
		m, err := people.Modify(ctx, pk, rk, func(p *Person) error { p.Age++; return nil }, entity.ModifyOptions{})
		if err != nil || m.Age != 3 {
			t.Fatalf("%q: Modify whose reply was lost: %+v %v", pk, m, err)
		}
		f.LoseNext(1, isUpdate)
		if err := people.Upsert(ctx, &Person{Dept: pk, ID: rk, Name: "v4"}, entity.Merge); err != nil {
			t.Fatalf("%q: Upsert whose reply was lost: %v", pk, err)
		}
		f.LoseNext(1, isUpdate)
		if err := people.UpdateAny(ctx, &Person{Dept: pk, ID: rk, Name: "v5"}, entity.Merge); err != nil {
			t.Fatalf("%q: UpdateAny whose reply was lost: %v", pk, err)
		}
		got, err := people.Get(ctx, pk, rk)
		if err != nil || got.Name != "v5" || got.Age != 3 {
			t.Fatalf("%q: stored %+v %v", pk, got, err)
		}
		// The resend of an applied delete finds nothing: unknown, never
		// "not found" (which would say nothing was deleted).
		f.LoseNext(1, isDelete)
		if err := people.Delete(ctx, pk, rk, got.ETag); !errors.Is(err, entity.ErrOutcomeUnknown) || errors.Is(err, entity.ErrNotFound) {
			t.Fatalf("%q: Delete whose reply was lost: %v", pk, err)
		}
		if row := rawRow(t, people.Client(), pk, rk); row != nil {
			t.Fatalf("%q: not deleted: %v", pk, row)
		}
	}
	if s := f.Stats(); s.LostReplies != 12 {
		t.Fatalf("faults: %+v", s)
	}
}

// recorder is a transport that answers every request with 204 and an
// ETag, and records it.
type recorder struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return &http.Response{StatusCode: http.StatusNoContent, Header: http.Header{"Etag": {`W/"datetime'2024-01-01T00%3A00%3A00.0000000Z'"`}}, Body: http.NoBody, Request: req}, nil
}

// TestSingleEntityRequestsAsSent: the requests tablekit builds for
// single-entity writes, as the transport sees them: method, escaped keys
// in the path, the SAS query kept, If-Match and Prefer; a merge to Cosmos
// DB's Table API goes as POST with X-HTTP-Method: MERGE, as aztables
// sends it there.
func TestSingleEntityRequestsAsSent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, endpoint := range []string{"https://acct.table.core.windows.net", "https://acct.table.cosmos.azure.com"} {
		rec := &recorder{}
		opts := entity.ClientOptions(&aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: rec}})
		client, err := aztables.NewClientWithNoCredential(endpoint+"/People?sv=2019-02-02&sig=s", opts)
		if err != nil {
			t.Fatal(err)
		}
		people, err := entity.NewTable[Person](client)
		if err != nil {
			t.Fatal(err)
		}
		p := Person{Dept: "", ID: "Ü'p k", ETag: "W/\"x\"", Name: "n"}
		_ = people.Insert(ctx, &p)
		p.ETag = `W/"x"`
		_ = people.Update(ctx, &p, entity.Merge)
		_ = people.UpdateAny(ctx, &p, entity.Replace)
		_ = people.Upsert(ctx, &p, entity.Merge)
		_ = people.Delete(ctx, "", "Ü'p k", `W/"x"`)
		keys := "/People(PartitionKey='',RowKey='%C3%9C%27%27p%20k')"
		merge := "PATCH"
		if strings.Contains(endpoint, "cosmos") {
			merge = "POST"
		}
		want := []struct{ method, path, ifMatch, prefer, xMethod string }{
			{"POST", "/People", "", "return-no-content", ""},
			{merge, keys, `W/"x"`, "", map[bool]string{true: "MERGE"}[merge == "POST"]},
			{"PUT", keys, "*", "", ""},
			{merge, keys, "", "", map[bool]string{true: "MERGE"}[merge == "POST"]},
			{"DELETE", keys, `W/"x"`, "", ""},
		}
		if len(rec.reqs) != len(want) {
			t.Fatalf("%s: %d requests, want %d", endpoint, len(rec.reqs), len(want))
		}
		for i, w := range want {
			r := rec.reqs[i]
			if r.Method != w.method || r.URL.EscapedPath() != w.path || r.URL.Query().Get("sig") != "s" ||
				r.Header.Get("If-Match") != w.ifMatch || r.Header.Get("Prefer") != w.prefer || r.Header.Get("X-HTTP-Method") != w.xMethod {
				t.Errorf("%s: request %d: %s %s?%s %v; want %+v", endpoint, i, r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header, w)
			}
		}
	}
}
