package throttle

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/tablekit/tablekit/internal/batch"
)

// FuzzWorkOf: any request — method, URL and body — is read without a
// panic, costs at least one unit, and keeps its body for sending.
func FuzzWorkOf(f *testing.F) {
	f.Add("GET", "http://127.0.0.1:1/devstoreaccount1/orders(PartitionKey='O''Brien',RowKey='1')", "")
	f.Add("POST", "http://127.0.0.1:1/devstoreaccount1/$batch", batchBody)
	f.Add("POST", "https://acct.table.core.windows.net/orders", `{"RowKey":"1","PartitionKey":"p\"q"}`)
	f.Add("POST", "http://127.0.0.1:1", "")
	f.Add("POST", "http://127.0.0.1:1/$batch", " HTTP/1.1\r\n")
	f.Add("PUT", "https://acct.table.core.windows.net/t(PartitionKey='a)b',RowKey='')", "{}")
	f.Fuzz(func(t *testing.T, method, rawURL, body string) {
		u, err := url.Parse(rawURL)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return
		}
		req, err := runtime.NewRequest(t.Context(), method, rawURL)
		if err != nil {
			return
		}
		if body != "" {
			if err := req.SetBody(streaming.NopCloser(bytes.NewReader([]byte(body))), "application/json"); err != nil {
				t.Fatal(err)
			}
		}
		w := workOf(req)
		if w.entities < 1 || w.account == "" {
			t.Fatalf("work %+v", w)
		}
		if body != "" {
			var got bytes.Buffer
			got.ReadFrom(req.Body())
			if got.String() != body {
				t.Fatal("the body was not rewound")
			}
		}
	})
}

// FuzzWorkOfKeys: the PartitionKey of every operation tablekit sends — a
// $batch of any number of updates, deletes or inserts, a single-entity
// update or delete, an insert — is read back exactly, with the batch's
// operation count, whatever the keys hold.
func FuzzWorkOfKeys(f *testing.F) {
	f.Add("O'Brien", "1", uint8(3), false)
	f.Add("", "", uint8(1), true)
	f.Add("a)b',RowKey='x", "Ü p", uint8(100), false)
	f.Add(`"PartitionKey":"x"`, "PartitionKey='y'", uint8(2), true)
	f.Add("%27%29", " HTTP/1.1", uint8(5), false)
	f.Fuzz(func(t *testing.T, pk, rk string, n uint8, insert bool) {
		if !utf8.ValidString(pk) || !utf8.ValidString(rk) || n == 0 || n > 100 {
			return
		}
		ops := make([]batch.Operation, n)
		for i := range ops {
			ops[i] = batch.Operation{Method: batch.MethodMerge, PartitionKey: pk, RowKey: rk, Body: []byte("{}")}
			if (i+int(n))%3 == 2 { // deletes anywhere, the first operation too
				ops[i] = batch.Operation{Method: batch.MethodDelete, PartitionKey: pk, RowKey: rk, IfMatch: "*"}
			}
			if insert {
				body, _ := json.Marshal(map[string]string{"Note": "PartitionKey='" + rk + "'", "RowKey": rk, "PartitionKey": pk})
				ops[i] = batch.Operation{Method: batch.MethodInsert, Body: body}
			}
		}
		const endpoint = "http://127.0.0.1:1/devstoreaccount1/"
		body, ct := batch.Request(nil, endpoint, "orders", "x", ops)
		req, err := runtime.NewRequest(t.Context(), http.MethodPost, endpoint+"$batch")
		if err != nil {
			t.Fatal(err)
		}
		if err := req.SetBody(streaming.NopCloser(bytes.NewReader(body)), ct); err != nil {
			t.Fatal(err)
		}
		if w := workOf(req); w.table != "orders" || w.partition != pk || w.entities != int(n) {
			t.Fatalf("$batch of %d: %+v, want table orders, partition %q", n, w, pk)
		}
		single := endpoint + "orders" + string(batch.AppendKeyPath(nil, pk, rk))
		for _, method := range []string{http.MethodPut, http.MethodDelete, http.MethodGet} {
			req, err := runtime.NewRequest(t.Context(), method, single)
			if err != nil {
				t.Fatal(err)
			}
			if w := workOf(req); w.table != "orders" || w.partition != pk || w.entities != 1 {
				t.Fatalf("%s %s: %+v, want partition %q", method, single, w, pk)
			}
		}
		ins, _ := json.Marshal(map[string]string{"PartitionKey": pk, "RowKey": rk})
		req, err = runtime.NewRequest(t.Context(), http.MethodPost, endpoint+"orders")
		if err != nil {
			t.Fatal(err)
		}
		if err := req.SetBody(streaming.NopCloser(bytes.NewReader(ins)), "application/json"); err != nil {
			t.Fatal(err)
		}
		if w := workOf(req); w.table != "orders" || w.partition != pk {
			t.Fatalf("insert %s: %+v, want partition %q", ins, w, pk)
		}
	})
}
