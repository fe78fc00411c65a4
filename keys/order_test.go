package keys_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/keys"
)

func TestCompare(t *testing.T) {
	// Service order: U+D7FF < supplementary < U+E000 … U+FFFF.
	sorted := []string{"", "a", "a\uD7FF", "a\U00010000", "a\U0001F600", "a\U0010FFFF", "a\uE000", "a\uFFFF", "a\uFFFFa", "b"}
	for i := range sorted {
		for j := range sorted {
			want := sign(i - j)
			if got := keys.Compare(sorted[i], sorted[j]); got != want {
				t.Errorf("Compare(%q, %q) = %d, want %d", sorted[i], sorted[j], got, want)
			}
		}
	}
	// Go's order differs exactly there.
	if !("a\uFFFF" < "a\U00010000") || keys.Compare("a\uFFFF", "a\U00010000") != 1 {
		t.Error("the supplementary/U+E000 difference is not where documented")
	}

	// Property: Compare is the UTF-16 code unit order, and agrees with Go's
	// order when no supplementary character meets a U+E000–U+FFFF one.
	r := newRand(20)
	for range 100000 {
		a := randString(r, validChars, 6)
		b := mutate(r, a, validChars)
		got := keys.Compare(a, b)
		if want := compare16(a, b); got != want {
			t.Fatalf("Compare(%q, %q) = %d, UTF-16 order says %d", a, b, got, want)
		}
		if keys.Compare(b, a) != -got {
			t.Fatalf("Compare is not antisymmetric on %q, %q", a, b)
		}
		if !mixesPlanes(a) && !mixesPlanes(b) && got != strings.Compare(a, b) {
			t.Fatalf("Compare(%q, %q) = %d differs from Go order without supplementary characters", a, b, got)
		}
	}
	// Invalid UTF-8 falls back to byte order and stays antisymmetric.
	for range 20000 {
		a, b := randBytes(r, 5), randBytes(r, 5)
		if keys.Compare(a, b) != -keys.Compare(b, a) || (keys.Compare(a, b) == 0) != (a == b) {
			t.Fatalf("Compare on invalid UTF-8 %q, %q", a, b)
		}
	}
	// Sorting with Compare gives the service order.
	shuffled := slices.Clone(sorted)
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	slices.SortFunc(shuffled, keys.Compare)
	if !slices.Equal(shuffled, sorted) {
		t.Errorf("SortFunc(Compare) = %q", shuffled)
	}
}

// mixesPlanes reports whether s has a supplementary character or one in
// U+E000–U+FFFF (where Go and service order can differ).
func mixesPlanes(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r >= 0xE000 })
}

func TestPrefixRangeExamples(t *testing.T) {
	tests := []struct {
		prefix, to string
	}{
		{"email_a", "email_b"},
		{"email_", "email`"},
		{"empid_000123", "empid_000124"},
		{"a", "b"},
		{"a.", "a/"},
		{"a~", "a\x7f"},
		{"a\uD7FF", "a\U00010000"},
		{"a\uE000", "a\uE001"},
		{"a\uFFFE", "a\uFFFF"},
		{"a\uFFFF", "b"},
		{"a\uFFFF\uFFFF", "b"},
		{"a\U0001F600", "a\U0001F601"},
		{"a\U0001FFFF", "a\U00020000"},
		{"a\U0010FFFF", "a\uE000"},
		{"é", "ê"},
		{"\uFFFF", ""},
		{"\uFFFF\uFFFF", ""},
		{"", ""},
	}
	for _, tt := range tests {
		from, to := keys.PrefixRange(tt.prefix)
		if from != tt.prefix || to != tt.to {
			t.Errorf("PrefixRange(%q) = %q, %q; want %q, %q", tt.prefix, from, to, tt.prefix, tt.to)
		}
	}
}

// Property: s has the prefix exactly when from <= s < to (to == "" meaning
// no upper bound), in the service's order; and in Go's order too unless
// the replaced character is one of U+D7FF, U+FFFF, U+10FFFF.
func TestPrefixRange(t *testing.T) {
	edge := []rune{'a', 'b', ' ', 0x7F, 0xD7FF, 0xE000, 0xFFFE, 0xFFFF, 0x10000, 0x10FFFF}
	r := newRand(21)
	for i := range 100000 {
		chars := validChars
		if i%2 == 0 {
			chars = edge
		}
		prefix := randString(r, chars, 4)
		var s string
		switch r.IntN(3) {
		case 0:
			s = prefix + randString(r, chars, 3)
		case 1:
			s = mutate(r, prefix, chars)
		default:
			s = randString(r, chars, 5)
		}
		from, to := keys.PrefixRange(prefix)
		want := strings.HasPrefix(s, prefix)
		in := keys.Compare(from, s) <= 0 && (to == "" || keys.Compare(s, to) < 0)
		if in != want {
			t.Fatalf("PrefixRange(%q) = [%q, %q): %q in range is %v, has prefix is %v", prefix, from, to, s, in, want)
		}
		if to == "" && strings.Trim(prefix, "\uFFFF") != "" {
			t.Fatalf("PrefixRange(%q) is unbounded", prefix)
		}
		if !replacesEdge(prefix) {
			inGo := from <= s && (to == "" || s < to)
			if inGo != want {
				t.Fatalf("PrefixRange(%q) = [%q, %q): %q in range in Go order is %v, has prefix is %v", prefix, from, to, s, inGo, want)
			}
		}
	}
}

// replacesEdge reports whether PrefixRange(prefix) replaces one of the
// characters whose successor differs between UTF-16 and code point order.
func replacesEdge(prefix string) bool {
	p := strings.TrimRight(prefix, "\uFFFF")
	return p != prefix || strings.HasSuffix(p, "\uD7FF") || strings.HasSuffix(p, "\U0010FFFF")
}
