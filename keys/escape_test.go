package keys_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tablekit/tablekit/keys"
)

func TestEscapeExamples(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"a/b c", "a.1b Wc"},
		{"x.y", "x.0y"},
		{"#?", "\"1>1"},
		{`"\[]`, "\"0[1[0]"},
		{"~\x7f\u0080\u009f", "~0~1~2~X"},
		{"\x00\t\n\x1f ", " 0 9 A V W"},
		{"é中\U0001F600\u00A0", "é中\U0001F600\u00A0"},
		{"bad\xff", "bad~~FF"},
		{"\xc3", "~~C3"},
		{"'!$", "'!$"},
	}
	for _, tt := range tests {
		got := keys.Escape(tt.in)
		if got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
		back, err := keys.Unescape(got)
		if err != nil || back != tt.in {
			t.Errorf("Unescape(%q) = %q, %v; want %q", got, back, err, tt.in)
		}
	}
}

// Property: Unescape(Escape(s)) == s for any string, and Escape(s) has no
// forbidden character.
func TestEscapeRoundTrip(t *testing.T) {
	r := newRand(50)
	for i := range 50000 {
		var s string
		if i%4 == 0 {
			s = randBytes(r, 10)
		} else {
			s = randString(r, allChars, 10)
		}
		e := keys.Escape(s)
		back, err := keys.Unescape(e)
		if err != nil || back != s {
			t.Fatalf("Unescape(Escape(%q)) = %q, %v (escaped %q)", s, back, err, e)
		}
		if err := keys.ValidateLimit(e, len(e)); err != nil {
			t.Fatalf("Escape(%q) = %q: %v", s, e, err)
		}
		if !strings.ContainsFunc(s, func(r rune) bool { return strings.ContainsRune(" \".>[~", r) }) && !hasForbidden(s) && e != s {
			t.Fatalf("Escape(%q) = %q changed a string that needs no escaping", s, e)
		}
	}
}

// Property: for valid UTF-8, a < b exactly when Escape(a) < Escape(b), in
// Go's order and in the service's order.
func TestEscapeOrder(t *testing.T) {
	r := newRand(51)
	for range 80000 {
		a := randString(r, allChars, 6)
		b := mutate(r, a, allChars)
		ea, eb := keys.Escape(a), keys.Escape(b)
		if strings.Compare(a, b) != strings.Compare(ea, eb) {
			t.Fatalf("Go order: %q vs %q but %q vs %q", a, b, ea, eb)
		}
		if compare16(a, b) != keys.Compare(ea, eb) {
			t.Fatalf("service order: %q vs %q but %q vs %q", a, b, ea, eb)
		}
	}
	// Every character below U+00A0, in order, escapes in order.
	prev := ""
	for c := rune(0); c < 0xA0; c++ {
		e := keys.Escape(string(c))
		if e <= prev {
			t.Fatalf("Escape(%U) = %q does not sort after %q", c, e, prev)
		}
		prev = e
	}
	if prev >= keys.Escape("\u00A0") {
		t.Fatal("the last escape code sorts after U+00A0")
	}
}

func TestUnescapeErrors(t *testing.T) {
	tests := []struct {
		s   string
		pos int
	}{
		{"a/b", 1}, // a character Escape always escapes
		{"a#", 1},
		{"a\tb", 1},
		{"a\u0085", 1}, // C1
		{"a\x7f", 1},   // DEL
		{"a\xff", 1},   // invalid UTF-8
		{"a ", 1},      // lead at the end
		{"a b", 1},     // a raw space (spaces are " W")
		{" X", 0},      // beyond U+0020
		{"\"2", 0},     // '"' run has two members
		{".a", 0},
		{">", 0},
		{"[2", 0},
		{"~Y", 0}, // beyond U+009F
		{"~~", 0}, // invalid byte, no digits
		{"~~4", 0},
		{"~~41", 0}, // an ASCII byte is never escaped this way
		{"~~ff", 0}, // lower-case hex
		{"ok.0~~G0", 4},
		{"é\u0080x", 2},
		{"x\"0y[", 4},
		{"\uFFFD\\", 3},
		{"abc ?", 3},
	}
	for _, tt := range tests {
		got, err := keys.Unescape(tt.s)
		var ke *keys.KeyError
		if got != "" || !errors.As(err, &ke) || ke.Rule != keys.RuleSyntax || ke.Pos != tt.pos || !errors.Is(err, keys.ErrInvalidKey) {
			t.Errorf("Unescape(%q) = %q, %v; want a syntax error at %d", tt.s, got, err, tt.pos)
		}
	}
	// Escapes of bytes that form valid UTF-8 together are not canonical.
	for _, s := range []string{"~~C3~~A9", "a~~E4~~B8~~AD"} {
		if got, err := keys.Unescape(s); !errors.Is(err, keys.ErrInvalidKey) {
			t.Errorf("Unescape(%q) = %q, %v; want an error (not what Escape writes)", s, got, err)
		}
	}
}

// Property: whatever Unescape accepts, Escape gives back.
func TestUnescapeCanonical(t *testing.T) {
	chars := []rune{' ', '0', '1', '9', 'A', 'W', 'X', 'Z', '"', '.', '>', '[', '~', 'a', 'é', 0x10000, 0x7F, '/'}
	r := newRand(52)
	accepted := 0
	for range 100000 {
		s := randString(r, chars, 6)
		u, err := keys.Unescape(s)
		if err != nil {
			continue
		}
		accepted++
		if e := keys.Escape(u); e != s {
			t.Fatalf("Escape(Unescape(%q)) = %q", s, e)
		}
		if !utf8.ValidString(s) {
			t.Fatalf("Unescape accepted invalid UTF-8 %q", s)
		}
	}
	if accepted < 1000 {
		t.Fatalf("only %d strings accepted: the property was barely tested", accepted)
	}
}
