package denormalize

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/entity"
)

// FuzzToken reads resume tokens: never a panic, a token refused matches
// ErrInvalidToken and entity.ErrInvalid, and a token that parses is
// exactly the one its position writes — one spelling per position, so CR
// and LF (which base64 skips) or JSON spelled otherwise are refused
// (testdata/fuzz/FuzzToken/crlf_skipped_by_base64, json_spelled_otherwise).
func FuzzToken(f *testing.F) {
	for _, s := range []string{"", "dn1.", "dn1.e30", token{Part: 3, Page: "abc"}.String(), token{Page: "x\x00y"}.String(), "si1.e30", "dn1.eyJwIjotMX0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := parseToken(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidToken) || !errors.Is(err, entity.ErrInvalid) {
				t.Fatalf("%q: %v matches not both ErrInvalidToken and entity.ErrInvalid", s, err)
			}
			return
		}
		if s != "" && tok.String() != s {
			t.Fatalf("token %q reads as %+v, which writes %q", s, tok, tok.String())
		}
		if tok.Part < 0 {
			t.Fatalf("%q parsed to a negative partition", s)
		}
		again, err := parseToken(tok.String())
		if err != nil || again != tok {
			t.Fatalf("%q: %+v, written %q, read %+v, %v", s, tok, tok.String(), again, err)
		}
	})
}

// FuzzMessage decodes fan-out messages as the processor does and checks
// what handle checks before any request.
func FuzzMessage(f *testing.F) {
	for _, s := range []string{
		`{"pk":"Sales","rk":"empid 000123","targets":{"manager":{"keys":[{"pk":"departments","rk":"Sales"}]}}}`,
		`{"pk":"departments","rk":"Sales","targets":{"costcenter":{"ranges":[{"pk":"Sales","from":"empid ","to":"empid!"}]}}}`,
		`{"pk":"a/b","rk":""}`,
		`{"pk":"departments","rk":"Sales","targets":{"costcenter":{"keys":[{"pk":"Sales","rk":"empid 000001"}]}},"part":2,"parts":3}`,
		`{"pk":"departments","rk":"Sales","part":4,"parts":3}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m fanout
		if json.Unmarshal(b, &m) != nil {
			return
		}
		if err := m.check(); err != nil {
			return
		}
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var again fanout
		if err := json.Unmarshal(out, &again); err != nil || again.check() != nil {
			t.Fatalf("%s: a valid message does not read back: %v", out, err)
		}
	})
}
