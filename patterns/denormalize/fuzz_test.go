package denormalize

import (
	"encoding/json"
	"testing"
)

// FuzzToken reads resume tokens: never a panic, and a token that parses
// reads back the same after it is written again.
func FuzzToken(f *testing.F) {
	for _, s := range []string{"", "dn1.", "dn1.e30", token{Part: 3, Page: "abc"}.String(), token{Page: "x\x00y"}.String(), "si1.e30", "dn1.eyJwIjotMX0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := parseToken(s)
		if err != nil {
			return
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
