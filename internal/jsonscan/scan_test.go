package jsonscan

import (
	"errors"
	"testing"
)

// TestMembersStops: an error from the member callback ends the scan at
// once and comes back as is, so a reader that has what it wants reads no
// further (what follows may be malformed).
func TestMembersStops(t *testing.T) {
	stop := errors.New("stop")
	s := New([]byte(`{"A":1,"B":"x", garbage`))
	var seen []string
	err := s.Members(func(name []byte, _ bool) error {
		var p Prop
		if err := s.Value(&p); err != nil {
			return err
		}
		seen = append(seen, string(name)+"="+string(p.Val))
		if string(name) == "B" {
			return stop
		}
		return nil
	})
	if err != stop || len(seen) != 2 || seen[1] != "B=x" {
		t.Fatalf("got %v, %v", seen, err)
	}
}

// TestValue checks each kind, and that a nested value is skipped whole
// with its text as Val.
func TestValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		kind Kind
		val  string
	}{
		{`"a\"b"`, String, `a\"b`}, {`-1.5e3,`, Number, `-1.5e3`}, {`true`, True, `true`},
		{`false`, False, `false`}, {`null`, Null, `null`}, {`{"a":[1,"]"]} `, Nested, `{"a":[1,"]"]}`},
	} {
		s := New([]byte(tc.in))
		var p Prop
		if err := s.Value(&p); err != nil || p.Kind != tc.kind || string(p.Val) != tc.val {
			t.Errorf("Value(%s) = %v %q, %v", tc.in, p.Kind, p.Val, err)
		}
	}
	for _, bad := range []string{``, `tru`, `x`, `{"a":`, `"open`} {
		s := New([]byte(bad))
		var p Prop
		var se *SyntaxError
		if err := s.Value(&p); !errors.As(err, &se) {
			t.Errorf("Value(%q) = %v, want a *SyntaxError", bad, err)
		}
	}
}
