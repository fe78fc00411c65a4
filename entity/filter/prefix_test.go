package filter

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

// boundary runes: around the surrogate gap, the BMP end and the last code point.
var boundary = []rune{0, 'a', 'b', 0x7f, 0xd7fe, 0xd7ff, 0xe000, 0xfffe, 0xffff,
	0x10000, 0x103ff, 0x10400, 0x10fffe, 0x10ffff}

func cmpUnits(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

func TestCompareUTF16(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	gen := func() string {
		n := r.IntN(4)
		var b strings.Builder
		for range n {
			b.WriteRune(boundary[r.IntN(len(boundary))])
		}
		return b.String()
	}
	for range 20000 {
		a, b := gen(), gen()
		if got, want := compareUTF16(a, b), cmpUnits(a, b); got != want {
			t.Fatalf("compareUTF16(%q, %q) = %d, want %d", a, b, got, want)
		}
	}
	// The case Go's own order gets wrong.
	if compareUTF16("\U00010000", "\uE000") != -1 || !("\U00010000" > "\uE000") {
		t.Fatal("supplementary characters must sort below U+E000 in UTF-16 order")
	}
}

func TestPrefixSuccessor(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"", "", false},
		{"a", "b", true},
		{"emp_", "emp`", true},
		{"abc", "abd", true},
		{"\x00", "\x01", true},
		{"\uffff", "", false},
		{"\uffff\uffff", "", false},
		{"a\uffff", "b", true},
		{"a\uffff\uffff", "b", true},
		{"\ufffe", "\uffff", true},
		{"a\ud7ff", "a\U00010000", true},
		{"a\U00010000", "a\U00010001", true},
		{"a\U000103ff", "a\U00010400", true}, // low surrogate DFFF: the high one grows
		{"a\U0010fffe", "a\U0010ffff", true},
		{"a\U0010ffff", "a\ue000", true},
		{"\U0010ffff\uffff", "\ue000", true},
		{"x\U0010ffff\U0010ffff", "x\U0010ffff\ue000", true},
	}
	for _, c := range cases {
		got, ok := prefixSuccessor(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("prefixSuccessor(%+q) = %+q, %v; want %+q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestPrefixRangeExact checks, over every short string of boundary runes,
// that s has the prefix exactly when prefix <= s < next in UTF-16 order: the
// range holds every prefixed string (next is big enough) and nothing else
// (next is the smallest such bound).
func TestPrefixRangeExact(t *testing.T) {
	var all []string
	var gen func(s string, n int)
	gen = func(s string, n int) {
		all = append(all, s)
		if n == 0 {
			return
		}
		for _, r := range boundary {
			gen(s+string(r), n-1)
		}
	}
	gen("", 3)
	for _, p := range all {
		if len([]rune(p)) > 2 {
			continue
		}
		next, ok := prefixSuccessor(p)
		for _, s := range all {
			in := cmpUnits(s, p) >= 0 && (!ok || cmpUnits(s, next) < 0)
			if in != strings.HasPrefix(s, p) {
				t.Fatalf("prefix %+q next %+q (%v): %+q in range = %v, has prefix = %v", p, next, ok, s, in, !in)
			}
		}
	}
}

func TestRowKeyRangeUnbounded(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"email_a", "email_b", "RowKey ge 'email_a' and RowKey lt 'email_b'"},
		{"O'Brien", "O'Brieo", "RowKey ge 'O''Brien' and RowKey lt 'O''Brieo'"},
		{"x", "", "RowKey ge 'x'"},
		{"", "", "RowKey ge ''"},
	} {
		got, err := RowKeyRange(c.from, c.to).Build()
		if err != nil || got != c.want {
			t.Errorf("RowKeyRange(%q, %q) = %q, %v; want %q", c.from, c.to, got, err, c.want)
		}
	}
}
