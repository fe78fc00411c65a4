package entity

import (
	"errors"
	"net/http"
	"testing"
)

func ptr(s string) *string { return &s }

func sameCont(a, b continuation) bool {
	eq := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eq(a.pk, b.pk) && eq(a.rk, b.rk)
}

// TestContinuationKeepsEmptyHeaders: a continuation header that is present
// but empty names an empty key and keeps the query going; only absent
// headers end it.
func TestContinuationKeepsEmptyHeaders(t *testing.T) {
	cases := []struct {
		header http.Header
		want   continuation
	}{
		{http.Header{}, continuation{}},
		{http.Header{"X-Ms-Continuation-Nextpartitionkey": {""}, "X-Ms-Continuation-Nextrowkey": {"b"}}, continuation{ptr(""), ptr("b")}},
		{http.Header{"X-Ms-Continuation-Nextpartitionkey": {"x"}, "X-Ms-Continuation-Nextrowkey": {""}}, continuation{ptr("x"), ptr("")}},
		{http.Header{"X-Ms-Continuation-Nextpartitionkey": {""}, "X-Ms-Continuation-Nextrowkey": {""}}, continuation{ptr(""), ptr("")}},
		{http.Header{"X-Ms-Continuation-Nextpartitionkey": {"1!4!eA--"}}, continuation{pk: ptr("1!4!eA--")}},
	}
	for _, c := range cases {
		got := continuationOf(c.header)
		if !sameCont(got, c.want) {
			t.Errorf("%v: got %v %v", c.header, got.pk, got.rk)
		}
		if got.done() != (c.want.pk == nil && c.want.rk == nil) {
			t.Errorf("%v: done() = %v", c.header, got.done())
		}
		// Every continuation survives a token, empty values included.
		back, err := decodeToken(got.encode(42), 42)
		if err != nil || !sameCont(back, got) {
			t.Errorf("%v: token round trip gave %v %v, %v", c.header, back.pk, back.rk, err)
		}
	}
}

// FuzzDecodeToken: any string is either refused with ErrInvalidToken (and
// ErrInvalid: nothing is sent) or is a continuation that encodes back to the
// same token — one spelling per continuation, CR and LF (which base64
// skips) included (testdata/fuzz/FuzzDecodeToken/crlf_skipped_by_base64).
func FuzzDecodeToken(f *testing.F) {
	for _, c := range []continuation{{ptr(""), ptr("b")}, {ptr("x"), ptr("")}, {ptr(""), ptr("")}, {pk: ptr("1!4!eA--")}, {rk: ptr("r")}} {
		f.Add(c.encode(7))
	}
	f.Add("")
	f.Add("AQ")
	f.Fuzz(func(t *testing.T, token string) {
		c, err := decodeToken(token, 7)
		if err != nil {
			if !errors.Is(err, ErrInvalidToken) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("token %q: %v matches not both ErrInvalidToken and ErrInvalid", token, err)
			}
			return
		}
		if token == "" {
			if !c.done() {
				t.Fatal("the empty token must start the query")
			}
			return
		}
		if again := c.encode(7); again != token {
			t.Fatalf("token %q decodes to a continuation that encodes as %q", token, again)
		}
	})
}
