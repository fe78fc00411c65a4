package keys_test

import (
	"math/rand/v2"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Characters the random generators draw from. Every list has the compound
// separator and escape, multibyte and supplementary characters, and the
// characters on both sides of the places where UTF-16 order and code point
// order disagree.
var (
	// validChars may all appear in keys.
	validChars = []rune{
		' ', '!', '"', '$', '\'', '(', '-', '.', '0', '1', '9', ':', '>', '@',
		'A', 'Z', '[', ']', '_', '`', 'a', 'b', 'z', '{', '~',
		0xA0, 0xE9, 0x100, 0x7FF, 0x800, 0x4E2D, 0xD7FF,
		0xE000, 0xF8FF, 0xFFFD, 0xFFFE, 0xFFFF,
		0x10000, 0x1F600, 0x10FFFE, 0x10FFFF,
	}
	// forbiddenChars may not appear in keys.
	forbiddenChars = []rune{0x00, 0x01, '\t', '\n', 0x1F, '/', '\\', '#', '?', 0x7F, 0x80, 0x9F}
	// allChars is both.
	allChars = append(append([]rune{}, validChars...), forbiddenChars...)
)

// newRand returns a generator with a fixed seed, so that failures repeat.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5EED)) }

// randString returns a string of up to maxLen characters from chars.
func randString(r *rand.Rand, chars []rune, maxLen int) string {
	n := r.IntN(maxLen + 1)
	var b strings.Builder
	for range n {
		b.WriteRune(chars[r.IntN(len(chars))])
	}
	return b.String()
}

// randBytes returns a string of arbitrary bytes, often not valid UTF-8.
func randBytes(r *rand.Rand, maxLen int) string {
	n := r.IntN(maxLen + 1)
	b := make([]byte, n)
	for i := range b {
		switch r.IntN(4) {
		case 0:
			b[i] = byte(r.IntN(256))
		case 1:
			b[i] = " !~.#"[r.IntN(5)]
		default:
			b[i] = byte(0x80 + r.IntN(0x80))
		}
	}
	return string(b)
}

// randParts returns up to maxParts parts from chars.
func randParts(r *rand.Rand, chars []rune, maxParts, maxLen int) []string {
	parts := make([]string, 1+r.IntN(maxParts))
	for i := range parts {
		parts[i] = randString(r, chars, maxLen)
	}
	return parts
}

// mutate returns a string related to s (a prefix, an extension or a
// one-character change), so that comparisons often meet long common
// prefixes.
func mutate(r *rand.Rand, s string, chars []rune) string {
	runes := []rune(s)
	switch r.IntN(4) {
	case 0:
		return string(runes[:r.IntN(len(runes)+1)])
	case 1:
		return s + randString(r, chars, 3)
	case 2:
		if len(runes) > 0 {
			runes[r.IntN(len(runes))] = chars[r.IntN(len(chars))]
		}
		return string(runes)
	}
	return randString(r, chars, len(runes)+2)
}

// compare16 is the reference for the service's order: compare the UTF-16
// encodings code unit by code unit.
func compare16(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			if ua[i] < ub[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(ua) < len(ub):
		return -1
	case len(ua) > len(ub):
		return 1
	}
	return 0
}

// compareTuples compares two tuples element by element with cmp; a tuple
// that is a prefix of the other sorts first.
func compareTuples(a, b []string, cmp func(string, string) int) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := cmp(a[i], b[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// sign normalises a comparison result to -1, 0 or +1.
func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// hasForbidden reports whether s contains a character keys forbid or is not
// valid UTF-8.
func hasForbidden(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	return strings.ContainsFunc(s, func(r rune) bool {
		return r < 0x20 || r >= 0x7F && r <= 0x9F || strings.ContainsRune(`/\#?`, r)
	})
}
