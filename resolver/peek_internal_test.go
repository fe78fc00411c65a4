package resolver

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/entity"
)

func TestPeek(t *testing.T) {
	for _, tc := range []struct {
		body         string
		want         uint8
		pk, rk, disc string
		discFound    bool
	}{
		{`{"PartitionKey":"a","RowKey":"b","T":"x"}`, wantPK | wantRK | wantDisc, "a", "b", "x", true},
		{` { "T" : "x" , "PartitionKey" : "a" } `, wantPK | wantDisc, "a", "", "x", true},
		{`{"N":{"T":"inner","a":[1,"]}"]},"S":"say \"T\":\"no\"","T":"yes"}`, wantDisc, "", "", "yes", true},
		{`{"A":"back\\","T":"after backslash"}`, wantDisc, "", "", "after backslash", true},
		{`{"\u0054":"escaped key"}`, wantDisc, "", "", "escaped key", true},
		{`{"T":"caf\u00e9"}`, wantDisc, "", "", "café", true},
		{`{"T":null}`, wantDisc, "", "", "", true},
		{`{}`, wantDisc, "", "", "", false},
		// Only what was asked for is recorded; the first occurrence wins.
		{`{"T":"one","T":"two"}`, wantDisc, "", "", "one", true},
		{`{"RowKey":"r","T":"x"}`, wantDisc, "", "", "x", true},
	} {
		h, err := peek([]byte(tc.body), tc.want, "T")
		if err != nil {
			t.Errorf("peek(%s): %v", tc.body, err)
			continue
		}
		pk, _ := h.pk.text()
		rk, _ := h.rk.text()
		disc, _ := h.disc.text()
		if pk != tc.pk || rk != tc.rk || disc != tc.disc || h.disc.found != tc.discFound {
			t.Errorf("peek(%s) = pk %q rk %q disc %q (found %v)", tc.body, pk, rk, disc, h.disc.found)
		}
	}
	for _, bad := range []string{``, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":"b"`, `{"a":"b" "c":1}`, `{"a:1}`, `{"a":{"b":1}`, `{1:2}`, `{"a":"\"}`} {
		if _, err := peek([]byte(bad), wantDisc, "T"); !errors.Is(err, entity.ErrDecode) {
			t.Errorf("peek(%q) = %v, want ErrDecode", bad, err)
		}
	}
	// Peek stops once it has what it wants: what follows is not read.
	if h, err := peek([]byte(`{"T":"x", garbage`), wantDisc, "T"); err != nil || string(h.disc.b) != "x" {
		t.Errorf("early stop: %v", err)
	}
}

// BenchmarkFind measures how the resolver finds a row's type name (and,
// with a RowKey prefix, its RowKey) in a typical body.
func BenchmarkFind(b *testing.B) {
	body := []byte(`{"odata.etag":"W/\"datetime'2026-11-22T11%3A38%3A56.6616826Z'\"","PartitionKey":"Mixed","RowKey":"EMPLOYEE_000001","Age":38,"Email":"jonesj@contoso.com","EmployeeID@odata.type":"Edm.Int64","EmployeeID":"9000000001","EntityType":"EMPLOYEE.v2","FirstName":"Jonathan","LastName":"Jones","Salary":72500.5,"Timestamp":"2026-11-22T11:38:56.6616826Z"}`)
	key := quotedKey("EntityType")
	b.Run("find", func(b *testing.B) {
		for b.Loop() {
			if v, ok := find(body, key); !ok || string(v.b) != "EMPLOYEE.v2" {
				b.Fatal("not found")
			}
		}
	})
	b.Run("find-rowkey-and-type", func(b *testing.B) {
		for b.Loop() {
			rk, ok1 := find(body, rowKeyKey)
			v, ok2 := find(body, key)
			if !ok1 || !ok2 || string(v.b) != "EMPLOYEE.v2" || string(rk.b) != "EMPLOYEE_000001" {
				b.Fatal("not found")
			}
		}
	})
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			if h, err := peek(body, wantDisc, "EntityType"); err != nil || string(h.disc.b) != "EMPLOYEE.v2" {
				b.Fatal(err)
			}
		}
	})
}

func TestFind(t *testing.T) {
	key := quotedKey("T")
	for _, tc := range []struct {
		body string
		want string
		ok   bool
	}{
		{`{"a":"b","T":"x"}`, "x", true},
		{`{"T": "x"}`, "x", true},
		{`{"a":"\"T\":\"no\"","T":"yes"}`, "yes", true}, // inside a string, escaped
		{`{"x\"T":"no","T":"yes"}`, "yes", true},        // the name's quote is escaped
		{`{"a":"back\\","T":"after backslash"}`, "after backslash", true},
		{`{"T" : "x"}`, "", false},    // whitespace: the scan decides
		{`{"\u0054":"x"}`, "", false}, // escaped name: the scan decides
		{`{"a":1}`, "", false},
		{`{"T":`, "", false},
		{`T":"x"`, "", false},
	} {
		v, ok := find([]byte(tc.body), key)
		got, _ := v.text()
		if ok != tc.ok || got != tc.want {
			t.Errorf("find(%s) = %q, %v; want %q, %v", tc.body, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzFind: on a valid flat JSON object, the substring search agrees with
// the scan whenever it decides.
func FuzzFind(f *testing.F) {
	for _, s := range []string{
		`{"a":"b","T":"x"}`, `{"a":"\"T\":\"no\"","T":"yes"}`, `{"x\"T":"no","T":"yes"}`,
		`{"a":"back\\","T":"z"}`, `{"T" : "x"}`, `{"\u0054":"x"}`, `{"T":1,"T":"two"}`, `{"aT":"no","T":true}`, `{"\u0054":"a","T":"b"}`,
	} {
		f.Add([]byte(s))
	}
	key := quotedKey("T")
	f.Fuzz(func(t *testing.T, body []byte) {
		v, ok := find(body, key)
		if !ok || !json.Valid(body) {
			return
		}
		if !flatUnique(body) {
			return // entity bodies are flat, each name once
		}
		h, err := peek(body, wantDisc, "T")
		if err != nil {
			t.Fatalf("peek(%s): %v", body, err)
		}
		if !h.disc.found || string(h.disc.b) != string(v.b) || h.disc.str != v.str {
			t.Fatalf("find(%s) = %q, scan = %q (found %v)", body, v.b, h.disc.b, h.disc.found)
		}
	})
}

// flatUnique reports whether body is a JSON object with no nested values
// and no name twice.
func flatUnique(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		name, ok := tok.(string)
		if err != nil || !ok || seen[name] {
			return false
		}
		seen[name] = true
		var raw json.RawMessage
		if dec.Decode(&raw) != nil || len(raw) == 0 || raw[0] == '{' || raw[0] == '[' {
			return false
		}
	}
	return true
}
