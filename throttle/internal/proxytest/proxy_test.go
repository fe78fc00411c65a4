package proxytest

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/tablekit/tablekit/internal/batch"
)

func newRequest(t *testing.T, method, url, contentType string, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req
}

// The Proxy counts a request as the service's scale targets do, reading
// it on its own: a $batch (as package entity sends it) is its number of
// operations in entities of the partition of its first operation, keys
// with quotes, spaces and slashes included; a single-entity request is
// one entity of the partition in its URL, or for an insert in its JSON
// body; a query or a table request names no partition. The body is left
// for the backend.
func TestProxyCountsAsTheService(t *testing.T) {
	const host = "https://acct.table.core.windows.net"
	var ops []batch.Operation
	for i := range 37 {
		op := batch.Operation{Method: batch.MethodReplace, PartitionKey: "O'Brien /x", RowKey: string(rune('a' + i%26)), Body: []byte(`{"A":1}`)}
		switch i % 4 {
		case 1:
			op.Method = batch.MethodMerge
		case 2:
			op.Method, op.IfMatch, op.Body = batch.MethodDelete, "*", nil
		}
		ops = append(ops, op)
	}
	body, ct := batch.Request(nil, host+"/", "orders", "x1", ops)
	inserts, ict := batch.Request(nil, host+"/", "orders", "x2", []batch.Operation{
		{Method: batch.MethodInsert, Body: []byte(`{"RowKey":"1","PartitionKey":"p\"q"}`)},
		{Method: batch.MethodInsert, Body: []byte(`{"PartitionKey":"p\"q","RowKey":"2"}`)},
	})
	for _, c := range []struct {
		name     string
		req      *http.Request
		want     request
		wantBody []byte
	}{
		{"batch of 37", newRequest(t, http.MethodPost, host+"/$batch", ct, body), request{account: "acct", table: "orders", key: "O'Brien /x", entities: 37}, body},
		{"batch of inserts", newRequest(t, http.MethodPost, host+"/$batch", ict, inserts), request{account: "acct", table: "orders", key: `p"q`, entities: 2}, inserts},
		{"upsert", newRequest(t, http.MethodPut, host+"/orders(PartitionKey='a%2Fb',RowKey='1')", "application/json", []byte("{}")), request{account: "acct", table: "orders", key: "a/b", entities: 1}, []byte("{}")},
		{"point read", newRequest(t, http.MethodGet, "http://127.0.0.1:10002/devstoreaccount1/orders(PartitionKey='it''s',RowKey='1')", "", nil), request{account: "127.0.0.1/devstoreaccount1", table: "orders", key: "it's", entities: 1}, nil},
		{"insert", newRequest(t, http.MethodPost, host+"/orders", "application/json", []byte(`{"RowKey":"1","PartitionKey":"k"}`)), request{account: "acct", table: "orders", key: "k", entities: 1}, []byte(`{"RowKey":"1","PartitionKey":"k"}`)},
		{"query", newRequest(t, http.MethodGet, host+"/orders()?$filter=x", "", nil), request{account: "acct", entities: 1}, nil},
		{"tables", newRequest(t, http.MethodGet, host+"/Tables", "", nil), request{account: "acct", entities: 1}, nil},
	} {
		got, err := read(c.req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if c.wantBody != nil {
			if b, _ := io.ReadAll(c.req.Body); !bytes.Equal(b, c.wantBody) {
				t.Errorf("%s: the backend would read %d bytes, want the %d sent", c.name, len(b), len(c.wantBody))
			}
		}
	}
}

// Each bucket holds a second of its rate and starts full; a request is
// admitted while its bucket holds its cost, or for a cost deeper than the
// bucket when the bucket is full, and then costs it all — a transaction
// of 100 entities at 50 entities/s leaves the partition two seconds in
// debt; a refused request costs nothing; the account counts requests.
func TestProxyBuckets(t *testing.T) {
	p, err := New(Config{PartitionRate: 50, AccountRate: 4})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	big := request{account: "a", table: "t", key: "k", entities: 100}
	if r := p.decide("c", big, t0); r != "" {
		t.Fatalf("the first transaction was refused by the %s", r)
	}
	for _, at := range []time.Duration{time.Second, 1900 * time.Millisecond} {
		if r := p.decide("c", big, t0.Add(at)); r != "partition" {
			t.Fatalf("a transaction %v after one of 100 entities at 50/s: %q, want refused by the partition", at, r)
		}
	}
	if r := p.decide("c", big, t0.Add(2*time.Second)); r != "" {
		t.Fatalf("after 2 s the partition is full again, but: %q", r)
	}
	// Another partition is not in debt; the account's 4 requests a
	// second (one taken just above) run out first.
	small := request{account: "a", table: "t", key: "other", entities: 1}
	now := t0.Add(2 * time.Second)
	for range 3 {
		if r := p.decide("c", small, now); r != "" {
			t.Fatalf("another partition: %q", r)
		}
	}
	if r := p.decide("c", small, now); r != "account" {
		t.Fatalf("the account's fifth request in its second: %q, want refused by the account", r)
	}
	p.SetRates(50, 1000)
	if r := p.decide("c", small, now.Add(time.Second)); r != "" {
		t.Fatalf("after the account's limit was raised: %q", r)
	}
	var admitted, refused int
	for _, e := range p.Events() {
		if e.Admitted {
			admitted++
		} else {
			refused++
		}
	}
	if admitted != 6 || refused != 3 {
		t.Fatalf("events: %d admitted, %d refused", admitted, refused)
	}
}

// The Proxy's refusal is the storage service's 503 ServerBusy with the
// XML error body, its message naming the account when the account's limit
// was met; azcore reads it as a *azcore.ResponseError with ErrorCode
// ServerBusy. Over HTTP (Handler), a refused request never reaches the
// service behind, and an admitted one does.
func TestProxyAnswersServerBusy(t *testing.T) {
	req := newRequest(t, http.MethodPut, "https://acct.table.core.windows.net/t(PartitionKey='p',RowKey='r')", "application/json", []byte("{}"))
	req.Header.Set("x-ms-version", "2019-02-02")
	for refused, msg := range map[string]string{"partition": msgPartition, "account": msgAccount} {
		resp := serverBusy(req, refused, time.Unix(1000, 0))
		err := runtime.NewResponseError(resp)
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != http.StatusServiceUnavailable || re.ErrorCode != "ServerBusy" {
			t.Fatalf("%s: azcore reads %v", refused, err)
		}
		if !strings.Contains(err.Error(), msg) || resp.Header.Get("x-ms-version") != "2019-02-02" || resp.Header.Get("Content-Type") != "application/xml" {
			t.Fatalf("%s: %v, headers %v", refused, err, resp.Header)
		}
	}

	p, err := New(Config{PartitionRate: 1})
	if err != nil {
		t.Fatal(err)
	}
	reached := 0
	front := httptest.NewServer(p.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		w.WriteHeader(http.StatusNoContent)
	})))
	defer front.Close()
	codes := map[int]int{}
	for range 3 {
		resp, err := http.DefaultClient.Do(newRequest(t, http.MethodPut, front.URL+"/devstoreaccount1/t(PartitionKey='p',RowKey='r')", "application/json", []byte("{}")))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusServiceUnavailable {
			if b, _ := io.ReadAll(resp.Body); !bytes.Contains(b, []byte("<Code>ServerBusy</Code>")) {
				t.Fatalf("body %q", b)
			}
		}
		resp.Body.Close()
		codes[resp.StatusCode]++
	}
	if codes[http.StatusNoContent] != 1 || codes[http.StatusServiceUnavailable] != 2 || reached != 1 {
		t.Fatalf("codes %v, %d reached the service: want 1 admitted, 2 refused", codes, reached)
	}
}

// The Backend answers a $batch with one 204 per operation, in the reply
// format package batch reads.
func TestBackendAnswersTransactions(t *testing.T) {
	ops := make([]batch.Operation, 12)
	for i := range ops {
		ops[i] = batch.Operation{Method: batch.MethodReplace, PartitionKey: "p", RowKey: string(rune('a' + i)), Body: []byte("{}")}
	}
	body, ct := batch.Request(nil, "https://acct.table.core.windows.net/", "t", "x", ops)
	resp, err := (&Backend{}).Do(newRequest(t, http.MethodPost, "https://acct.table.core.windows.net/$batch", ct, body))
	if err != nil {
		t.Fatal(err)
	}
	reply, _ := io.ReadAll(resp.Body)
	results, err := batch.ParseResponse(resp.Header.Get("Content-Type"), reply)
	if err != nil || resp.StatusCode != http.StatusAccepted || len(results) != 12 {
		t.Fatalf("status %d, %d results, %v", resp.StatusCode, len(results), err)
	}
	for i, r := range results {
		if r.StatusCode != http.StatusNoContent {
			t.Fatalf("operation %d: %d", i, r.StatusCode)
		}
	}
}
