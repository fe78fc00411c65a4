package wtoken

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNewTokens(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		tok := New()
		if len(tok) != tokenLen || !isB64(tok) || seen[tok] {
			t.Fatalf("token %q", tok)
		}
		seen[tok] = true
	}
}

func TestChainRoundTrip(t *testing.T) {
	for _, c := range []Chain{
		{Tokens: []string{"AAAAAAAA"}},
		{Root: RootOf(`W/"x"`), Tokens: []string{"AAAAAAAA", "b-b_b-b_"}},
	} {
		got, ok := Parse(c.String())
		if !ok || got.String() != c.String() || got.Root != c.Root || len(got.Tokens) != len(c.Tokens) {
			t.Fatalf("%+v → %q → %+v %v", c, c.String(), got, ok)
		}
	}
	for _, bad := range []string{"", "short", "......AAAAAAA", "......AAAAAAA!", "ABC!EFAAAAAAAA", "......" + strings.Repeat("A", 8*(MaxTokens+1))} {
		if _, ok := Parse(bad); ok {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	if _, ok := Parse("......"); !ok {
		t.Error("an empty chain is valid")
	}
}

func TestNextKeepsAtMostMaxTokens(t *testing.T) {
	base := Base{ETag: "e0", Known: true}
	var c Chain
	for i := range MaxTokens + 3 {
		tok := New()
		c = Next(base, tok)
		if c.Tokens[0] != tok || len(c.Tokens) != min(i+1, MaxTokens) {
			t.Fatalf("round %d: %+v", i, c)
		}
		if (c.Root != "") != (i < MaxTokens) {
			t.Fatalf("round %d: root %q", i, c.Root)
		}
		if i == 0 && c.Root != RootOf("e0") {
			t.Fatalf("first write on a version without a chain: root %q", c.Root)
		}
		base = Base{ETag: "e" + tok, Chain: c, Known: true}
		if len(c.String()) > rootLen+MaxTokens*tokenLen {
			t.Fatalf("chain of %d characters", len(c.String()))
		}
	}
}

// TestJudge plays histories of writes on one entity and judges a write W
// from what is stored afterwards.
func TestJudge(t *testing.T) {
	w := "WWWWWWWW"
	p, q, r := "PPPPPPPP", "QQQQQQQQ", "RRRRRRRR"
	withChain := Base{ETag: "e0", Chain: Chain{Tokens: []string{p}}, Known: true}
	noChain := Base{ETag: "e0", Known: true}
	unread := Base{ETag: "e0"}
	insert := Base{}
	cases := []struct {
		name   string
		base   Base
		stored Chain
		has    bool
		want   Verdict
	}{
		{"applied, on top", withChain, Next(withChain, w), true, Applied},
		{"applied, writes since", withChain, Chain{Tokens: []string{r, q, w, p}}, true, Applied},
		{"another won the base", withChain, Chain{Tokens: []string{q, p}}, true, NotApplied},
		{"another won, more since", withChain, Chain{Tokens: []string{r, q, p}}, true, NotApplied},
		{"only untokened writes since", withChain, Chain{Tokens: []string{p}}, true, NotApplied},
		{"base token cut off", withChain, Chain{Tokens: []string{r, q}}, true, Unknown},
		{"chain stripped by a replace", withChain, Chain{}, false, Unknown},
		{"no chain at base, another won", noChain, Next(noChain, q), true, NotApplied},
		{"no chain at base, applied", noChain, Next(noChain, w), true, Applied},
		{"no chain at base, another base's root", noChain, Next(Base{ETag: "e1", Known: true}, q), true, Unknown},
		{"no chain at base, root cut", noChain, Chain{Tokens: []string{q}}, true, Unknown},
		{"chain not read", unread, Chain{Tokens: []string{q}}, true, Unknown},
		{"chain not read, applied", unread, Next(unread, w), true, Applied},
		{"insert, applied", insert, Next(insert, w), true, Applied},
		{"insert, another's", insert, Next(insert, q), true, Unknown},
	}
	for _, c := range cases {
		if got := Judge(c.base, w, c.stored, c.has); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFindAndSet(t *testing.T) {
	cases := []struct {
		body, value, want string
	}{
		{`{}`, "v", `{"TkWrite":"v"}`},
		{`{ }`, "v", `{ "TkWrite":"v"}`},
		{`{"a":1}`, "v", `{"a":1,"TkWrite":"v"}`},
		{`{"a":1 }`, "v", `{"a":1 ,"TkWrite":"v"}`},
		{`{"TkWrite":"old","a":1}`, "v", `{"a":1,"TkWrite":"v"}`},
		{`{"a":1,"TkWrite":"old"}`, "v", `{"a":1,"TkWrite":"v"}`},
		{`{"a":"x\"TkWrite\":1","b":2}`, "v", `{"a":"x\"TkWrite\":1","b":2,"TkWrite":"v"}`},
		{`{"TkWrite@odata.type":"Edm.String","TkWrite":"old","b":true}`, "", `{"b":true}`},
		{`{"TkWrite":"old"}`, "", `{}`},
		{`{"a":1}`, "", `{"a":1}`},
		{`{"a":null, "TkWrite" : "old" , "c":-1.5e3}`, "v", `{"a":null,"c":-1.5e3,"TkWrite":"v"}`},
	}
	for _, c := range cases {
		got, ok := Set(nil, []byte(c.body), c.value)
		if !ok || string(got) != c.want {
			t.Errorf("Set(%s, %q) = %s %v, want %s", c.body, c.value, got, ok, c.want)
			continue
		}
		if !json.Valid(got) {
			t.Errorf("Set(%s) is not JSON: %s", c.body, got)
		}
		v, found := Find(got)
		if found != (c.value != "") || v != c.value {
			t.Errorf("Find(%s) = %q %v", got, v, found)
		}
	}
	// Not a flat object: left alone, reported.
	for _, bad := range []string{`{"TkWrite":{"x":1}}`, `["TkWrite"]`, `{"TkWrite":"x"`, `{"a":[1],"TkWrite":"x"}`} {
		got, ok := Set(nil, []byte(bad), "v")
		if ok || string(got) != bad {
			t.Errorf("Set(%s) = %s %v", bad, got, ok)
		}
	}
	// Set appends to dst.
	got, _ := Set([]byte("prefix"), []byte(`{"TkWrite":"x","a":1}`), "v")
	if string(got) != `prefix{"a":1,"TkWrite":"v"}` {
		t.Errorf("dst: %s", got)
	}
}

// FuzzSet: Set never panics; on a flat object it yields JSON holding the
// value exactly once, which Find reads back, and keeps every other member.
func FuzzSet(f *testing.F) {
	f.Add([]byte(`{"PartitionKey":"p","RowKey":"r","TkWrite":"......AAAAAAAA"}`), "......BBBBBBBB")
	f.Add([]byte(`{}`), "")
	f.Add([]byte(`{"a":"\"TkWrite\""}`), "x")
	f.Fuzz(func(t *testing.T, body []byte, value string) {
		if !isB64(strings.ReplaceAll(value, ".", "")) {
			return // chains only
		}
		out, ok := Set(nil, body, value)
		if !ok {
			if string(out) != string(body) {
				t.Fatalf("refused but changed: %s → %s", body, out)
			}
			return
		}
		if !json.Valid(body) {
			return // members only checks the top level
		}
		if !json.Valid(out) {
			t.Fatalf("Set(%s, %q) = %s, not JSON", body, value, out)
		}
		var in, got map[string]json.RawMessage
		if json.Unmarshal(body, &in) != nil || json.Unmarshal(out, &got) != nil {
			return
		}
		delete(in, Property)
		delete(in, Property+"@odata.type")
		if v, found := Find(out); found != (value != "") || v != value {
			t.Fatalf("Find after Set(%q): %q %v in %s", value, v, found, out)
		}
		if value != "" {
			delete(got, Property)
		}
		if len(in) != len(got) {
			t.Fatalf("members changed: %s → %s", body, out)
		}
	})
}
