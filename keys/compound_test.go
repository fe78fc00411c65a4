package keys_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/keys"
)

func TestCompoundExamples(t *testing.T) {
	tests := []struct {
		parts []string
		want  string
	}{
		{[]string{"empid", "000123", "2012"}, "empid 000123 2012"},
		{[]string{"New York", "a!b"}, "New! York a!!b"},
		{[]string{"a"}, "a"},
		{[]string{"", ""}, " "},
		{[]string{"", "", ""}, "  "},
		{[]string{" "}, "! "},
		{[]string{"!"}, "!!"},
		{[]string{"! !", ""}, "!!! !! "},
		{[]string{"O'Brien", "é", "\U0001F600"}, "O'Brien é \U0001F600"},
		{[]string{""}, ""},
		{nil, ""}, // the one key with two readings: see SplitCompound("")
	}
	for _, tt := range tests {
		got := keys.Compound(tt.parts...)
		if got != tt.want {
			t.Errorf("Compound(%q) = %q, want %q", tt.parts, got, tt.want)
		}
		if app := string(keys.AppendCompound([]byte("x"), tt.parts...)); app != "x"+tt.want {
			t.Errorf("AppendCompound(%q) = %q", tt.parts, app)
		}
		back, err := keys.SplitCompound(got)
		wantBack := tt.parts
		if len(wantBack) == 0 {
			wantBack = []string{""}
		}
		if err != nil || !slices.Equal(back, wantBack) {
			t.Errorf("SplitCompound(%q) = %q, %v; want %q", got, back, err, wantBack)
		}
	}
}

// Property: SplitCompound(Compound(p)) == p for any non-empty list of
// parts, including separators, escapes, forbidden characters and invalid
// UTF-8.
func TestCompoundRoundTrip(t *testing.T) {
	r := newRand(10)
	for i := range 30000 {
		var parts []string
		if i%3 == 0 {
			parts = make([]string, 1+r.IntN(4))
			for j := range parts {
				parts[j] = randBytes(r, 6)
			}
		} else {
			parts = randParts(r, allChars, 5, 6)
		}
		key := keys.Compound(parts...)
		back, err := keys.SplitCompound(key)
		if err != nil || !slices.Equal(back, parts) {
			t.Fatalf("SplitCompound(Compound(%q)) = %q, %v", parts, back, err)
		}
	}
}

// Property: the key is valid whenever the parts contain no forbidden
// character (and it is not too long).
func TestCompoundValid(t *testing.T) {
	r := newRand(11)
	for range 30000 {
		parts := randParts(r, validChars, 6, 10)
		key := keys.Compound(parts...)
		if err := keys.Validate(key); err != nil {
			t.Fatalf("Compound(%q) = %q: %v", parts, key, err)
		}
		checked, err := keys.CompoundChecked(parts...)
		if err != nil || checked != key {
			t.Fatalf("CompoundChecked(%q) = %q, %v", parts, checked, err)
		}
	}
}

// Property: Compound(a) < Compound(b) exactly when a < b element by element,
// in Go's byte order and in the service's order, for parts without control
// characters.
func TestCompoundOrder(t *testing.T) {
	r := newRand(12)
	for i := range 60000 {
		a := randParts(r, validChars, 4, 4)
		b := slices.Clone(a)
		switch i % 4 {
		case 0: // unrelated
			b = randParts(r, validChars, 4, 4)
		case 1: // change one part a little
			j := r.IntN(len(b))
			b[j] = mutate(r, b[j], validChars)
		case 2: // a prefix tuple, or a longer one
			if r.IntN(2) == 0 {
				b = b[:r.IntN(len(b)+1)]
			} else {
				b = append(b, randParts(r, validChars, 2, 3)...)
			}
		case 3: // parts that are prefixes of each other
			j := r.IntN(len(b))
			b[j] += randString(r, []rune{' ', '!', '"', 'a', 0xFFFF, 0x10000}, 2)
			b = b[:j+1]
		}
		if len(b) == 0 {
			continue // the empty tuple has no key of its own
		}
		ka, kb := keys.Compound(a...), keys.Compound(b...)
		if want, got := compareTuples(a, b, strings.Compare), sign(strings.Compare(ka, kb)); want != got {
			t.Fatalf("byte order: %q vs %q is %d, keys %q vs %q is %d", a, b, want, ka, kb, got)
		}
		if want, got := compareTuples(a, b, compare16), keys.Compare(ka, kb); want != got {
			t.Fatalf("service order: %q vs %q is %d, keys %q vs %q is %d", a, b, want, ka, kb, got)
		}
	}
}

func TestSplitCompoundErrors(t *testing.T) {
	for _, tt := range []struct {
		key string
		pos int
	}{
		{"!", 0},
		{"a!", 1},
		{"a!b", 1},
		{"a !! !x", 5},
		{"!!!", 2},
	} {
		parts, err := keys.SplitCompound(tt.key)
		var ke *keys.KeyError
		if parts != nil || !errors.As(err, &ke) || ke.Rule != keys.RuleSyntax || ke.Pos != tt.pos || ke.Char != '!' || !errors.Is(err, keys.ErrInvalidKey) {
			t.Errorf("SplitCompound(%q) = %q, %v; want a syntax error at %d", tt.key, parts, err, tt.pos)
		}
	}
	// Every accepted string is the key of its parts.
	r := newRand(13)
	for range 30000 {
		key := randString(r, []rune{' ', '!', 'a', 'é', 0x10000}, 10)
		parts, err := keys.SplitCompound(key)
		if err != nil {
			continue
		}
		if again := keys.Compound(parts...); again != key {
			t.Fatalf("Compound(SplitCompound(%q)) = %q", key, again)
		}
	}
}

func TestCompoundChecked(t *testing.T) {
	tests := []struct {
		parts []string
		rule  keys.Rule
		part  int
		pos   int
	}{
		{[]string{"ok", "a/b"}, keys.RuleForbiddenChar, 1, 1},
		{[]string{"tab\there"}, keys.RuleForbiddenChar, 0, 3},
		{[]string{"x", "y", "\x80"}, keys.RuleInvalidUTF8, 2, 0},
		{[]string{"a", "b#"}, keys.RuleForbiddenChar, 1, 1},
		{[]string{strings.Repeat("a", 300), strings.Repeat("b", 300)}, keys.RuleTooLong, -1, -1},
		// 257 characters that escaping doubles to 514.
		{[]string{strings.Repeat(" ", 257)}, keys.RuleTooLong, -1, -1},
	}
	for _, tt := range tests {
		key, err := keys.CompoundChecked(tt.parts...)
		var ke *keys.KeyError
		if key != "" || !errors.As(err, &ke) || !errors.Is(err, keys.ErrInvalidKey) {
			t.Errorf("CompoundChecked(%.20q) = %.20q, %v", tt.parts, key, err)
			continue
		}
		if ke.Rule != tt.rule || ke.Part != tt.part || ke.Pos != tt.pos || ke.Func != "CompoundChecked" {
			t.Errorf("CompoundChecked(%.20q): %+v; want rule %v part %d pos %d", tt.parts, *ke, tt.rule, tt.part, tt.pos)
		}
	}
	for _, parts := range [][]string{{strings.Repeat(" ", 256)}, {strings.Repeat(" ", 255), "", ""}} {
		if key, err := keys.CompoundChecked(parts...); err != nil || len(key) != keys.MaxKeyLength {
			t.Errorf("a compound key of exactly MaxKeyLength: %d, %v", len(key), err)
		}
	}
}

// Property: CompoundPrefix(p...) holds exactly the keys whose first
// len(p) parts are p.
func TestCompoundPrefix(t *testing.T) {
	from, to := keys.CompoundPrefix("empid", "000123")
	if from != "empid 000123" || to != "empid 000123!" {
		t.Errorf("CompoundPrefix = %q, %q", from, to)
	}
	if from, to := keys.CompoundPrefix(); from != "" || to != "" {
		t.Errorf("CompoundPrefix() = %q, %q; want unbounded", from, to)
	}
	chars := []rune{' ', '!', '"', 'a', 'b', 0xFFFF, 0x10000}
	r := newRand(14)
	for range 60000 {
		prefix := randParts(r, chars, 3, 3)
		other := randParts(r, chars, 4, 3)
		if r.IntN(2) == 0 { // share some parts, then differ or extend
			k := r.IntN(len(prefix) + 1)
			other = append(slices.Clone(prefix[:k]), other...)
		}
		from, to := keys.CompoundPrefix(prefix...)
		key := keys.Compound(other...)
		want := len(other) >= len(prefix) && slices.Equal(other[:len(prefix)], prefix)
		inService := keys.Compare(from, key) <= 0 && keys.Compare(key, to) < 0
		inGo := from <= key && key < to
		if inService != want || inGo != want {
			t.Fatalf("CompoundPrefix(%q) = [%q, %q): key %q of %q: in range %v (Go %v), want %v", prefix, from, to, key, other, inService, inGo, want)
		}
		// PrefixRange of a compound key: the last part is a prefix.
		pfrom, pto := keys.PrefixRange(keys.Compound(prefix...))
		last := len(prefix) - 1
		want = len(other) >= len(prefix) && slices.Equal(other[:last], prefix[:last]) && strings.HasPrefix(other[last], prefix[last])
		in := keys.Compare(pfrom, key) <= 0 && (pto == "" || keys.Compare(key, pto) < 0)
		if in != want {
			t.Fatalf("PrefixRange(Compound(%q)) = [%q, %q): key %q of %q: in range %v, want %v", prefix, pfrom, pto, key, other, in, want)
		}
	}
}
