package batch

import (
	"bufio"
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// readRequest reads a $batch body back into its operations' requests, as
// a service would.
func readRequest(t *testing.T, contentType string, body []byte) []*http.Request {
	t.Helper()
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/mixed" {
		t.Fatalf("content type %q: %v", contentType, err)
	}
	outer := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	cs, err := outer.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	_, csParams, err := mime.ParseMediaType(cs.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	inner := multipart.NewReader(cs, csParams["boundary"])
	var out []*http.Request
	for {
		part, err := inner.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if part.Header.Get("Content-Type") != "application/http" || part.Header.Get("Content-Transfer-Encoding") != "binary" {
			t.Fatalf("part headers %v", part.Header)
		}
		req, err := http.ReadRequest(bufio.NewReader(part))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(b))
		out = append(out, req)
	}
	if _, err := outer.NextPart(); err != io.EOF {
		t.Fatalf("more than one changeset: %v", err)
	}
	return out
}

// keysOf parses "(PartitionKey='…',RowKey='…')" at the end of an escaped
// path back into the keys.
func keysOf(t testing.TB, escapedPath string) (pk, rk string, ok bool) {
	t.Helper()
	path, err := url.PathUnescape(escapedPath)
	if err != nil {
		t.Fatalf("unescape %q: %v", escapedPath, err)
	}
	i := strings.Index(path, "(PartitionKey='")
	if i < 0 || !strings.HasSuffix(path, "')") {
		return "", "", false
	}
	inner := path[i+len("(PartitionKey='") : len(path)-2]
	// The first ' not doubled ends the PartitionKey literal.
	j := 0
	for j < len(inner) {
		if inner[j] == '\'' {
			if j+1 < len(inner) && inner[j+1] == '\'' {
				j += 2
				continue
			}
			break
		}
		j++
	}
	if !strings.HasPrefix(inner[j:], "',RowKey='") {
		return "", "", false
	}
	pk = strings.ReplaceAll(inner[:j], "''", "'")
	rk = strings.ReplaceAll(inner[j+len("',RowKey='"):], "''", "'")
	return pk, rk, true
}

func TestRequestReadsBack(t *testing.T) {
	ops := []Operation{
		{Method: MethodInsert, PartitionKey: "Ü'p k", RowKey: "ignored", Body: []byte(`{"PartitionKey":"Ü'p k","RowKey":"a"}`)},
		{Method: MethodMerge, PartitionKey: "Ü'p k", RowKey: "", IfMatch: `W/"datetime'2024-01-01T00%3A00%3A00Z'"`, Body: []byte(`{"A":1}`)},
		{Method: MethodReplace, PartitionKey: "Ü'p k", RowKey: "''", IfMatch: "*", Body: []byte(`{}`)},
		{Method: MethodReplace, PartitionKey: "Ü'p k", RowKey: "x+y&z=1;%", Body: []byte(`{"B":true}`)},
		{Method: MethodDelete, PartitionKey: "Ü'p k", RowKey: "d", IfMatch: "*"},
	}
	body, ct := Request(nil, "https://acct.table.core.windows.net/", "Tbl1", "0123-abc", ops)
	reqs := readRequest(t, ct, body)
	if len(reqs) != len(ops) {
		t.Fatalf("%d operations read back", len(reqs))
	}
	for i, r := range reqs {
		op := ops[i]
		if r.Method != op.Method || r.URL.Host != "acct.table.core.windows.net" || r.Header.Get("DataServiceVersion") != "3.0" {
			t.Errorf("op %d: %s %s %v", i, r.Method, r.URL, r.Header)
		}
		if r.Header.Get("If-Match") != op.IfMatch {
			t.Errorf("op %d: If-Match %q", i, r.Header.Get("If-Match"))
		}
		b, _ := io.ReadAll(r.Body)
		if string(b) != string(op.Body) {
			t.Errorf("op %d: body %q", i, b)
		}
		if op.Method == MethodInsert {
			if r.URL.EscapedPath() != "/Tbl1" || r.Header.Get("Prefer") != "return-no-content" {
				t.Errorf("insert: %s %v", r.URL.EscapedPath(), r.Header)
			}
			continue
		}
		pk, rk, ok := keysOf(t, r.URL.EscapedPath())
		if !ok || pk != op.PartitionKey || rk != op.RowKey {
			t.Errorf("op %d: path %s reads back as %q %q %v", i, r.URL.EscapedPath(), pk, rk, ok)
		}
	}
	// An endpoint with or without its slash, and a path prefix (Azurite's
	// account segment).
	b1, _ := Request(nil, "http://127.0.0.1:10002/devstoreaccount1/", "t", "id", ops[4:])
	b2, _ := Request(nil, "http://127.0.0.1:10002/devstoreaccount1", "t", "id", ops[4:])
	if !bytes.Equal(b1, b2) || !bytes.Contains(b1, []byte("DELETE http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='%C3%9C%27%27p%20k',RowKey='d') HTTP/1.1")) {
		t.Fatalf("%s", b1)
	}
}

// FuzzKeyPath: any pair of keys written into an operation's URL reads back
// exactly, through URL unescaping and the OData literal rule.
func FuzzKeyPath(f *testing.F) {
	for _, k := range [][2]string{{"", ""}, {"'", "''"}, {"Ü'p k", "a"}, {"%27", "%"}, {"a',RowKey='b", "c"}, {"+&=;$", "\t"}} {
		f.Add(k[0], k[1])
	}
	f.Fuzz(func(t *testing.T, pk, rk string) {
		b := AppendKeyPath([]byte("/t"), pk, rk)
		u, err := url.Parse("http://h" + string(b))
		if err != nil {
			t.Fatalf("keys %q %q: URL %s: %v", pk, rk, b, err)
		}
		gpk, grk, ok := keysOf(t, u.EscapedPath())
		if !ok || gpk != pk || grk != rk {
			t.Fatalf("keys %q %q → %s → %q %q %v", pk, rk, b, gpk, grk, ok)
		}
	})
}
