package keys

import (
	"strings"
	"unicode/utf8"
)

// Compare compares two keys the way the Table service orders them: by
// UTF-16 code units, as the .NET ordinal string comparison does (and as
// Azurite, which compares JavaScript strings, does too). It returns -1, 0 or
// +1, and can be passed to slices.SortFunc to sort keys in service order.
//
// Go's own string order (a < b, strings.Compare, sort.Strings) compares
// UTF-8 bytes, which is Unicode code point order. The two orders agree on
// every pair of strings except where the first difference is between a
// supplementary character (U+10000–U+10FFFF, a surrogate pair D800–DFFF in
// UTF-16) and a character in U+E000–U+FFFF: Go puts the supplementary
// character last, the service puts it first. Keys without characters from
// one of those two ranges sort identically in both orders.
//
// Strings that are not valid UTF-8 cannot be keys; for them Compare falls
// back to byte order from the first invalid byte on.
func Compare(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		switch {
		case len(a) < len(b):
			return -1
		case len(a) > len(b):
			return 1
		}
		return 0
	}
	// Back up to the start of the character that differs.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, sa := utf8.DecodeRuneInString(a[i:])
	rb, sb := utf8.DecodeRuneInString(b[i:])
	if ra == utf8.RuneError && sa == 1 || rb == utf8.RuneError && sb == 1 {
		return strings.Compare(a[i:], b[i:])
	}
	// Two different valid characters (a common prefix of equal bytes ends
	// on a character boundary in both strings).
	ka, kb := rank(ra), rank(rb)
	switch {
	case ka < kb:
		return -1
	case ka > kb:
		return 1
	}
	return strings.Compare(a[i:], b[i:])
}

// rank maps a code point to its position in UTF-16 code unit order:
// U+0000–U+D7FF first, then the supplementary planes (surrogate pairs), then
// U+E000–U+FFFF.
func rank(r rune) rune {
	switch {
	case r < 0xD800:
		return r
	case r >= 0x10000:
		return r - 0x10000 + 0xD800 // 0xD800 … 0x10D7FF
	default:
		return r - 0xE000 + 0x10D800 // 0x10D800 … 0x10F7FF
	}
}

// PrefixRange returns the half-open range [from, to) that holds exactly the
// strings starting with prefix, for a filter such as the design guide's
// "RowKey ge 'email_a' and RowKey lt 'email_b'" (§2, §6.1): s has the prefix
// if and only if from <= s < to in the service's order (see Compare).
//
// from is prefix itself. to is prefix with its last character replaced by
// the next character in UTF-16 order, after dropping trailing U+FFFF
// characters, which have no successor: PrefixRange("email_a") is
// ("email_a", "email_b"), PrefixRange("a\uFFFF") is ("a\uFFFF", "b").
//
// to == "" means the range has NO upper bound: it happens exactly when the
// prefix is empty or consists only of U+FFFF characters. Leave out the "lt"
// condition then (filter.RowKeyRange does).
//
// The range is exact in Go's byte order too, except when the prefix ends in
// U+FFFF or the character replaced is U+D7FF or U+10FFFF: there UTF-16 order
// and code point order disagree on the successor (U+D7FF is followed by
// U+10000 in UTF-16 order, U+10FFFF by U+E000, and U+FFFF is the largest
// code unit), and the result is the one that is right for the service,
// where ranges are evaluated. Use Compare, not <, to test membership in Go.
//
// to may contain a character that a key cannot contain (PrefixRange("a.")
// ends at "a/"); that is harmless in a filter literal. A prefix that is not
// valid UTF-8 is read with each bad byte as U+FFFD, as it would travel on
// the wire.
func PrefixRange(prefix string) (from, to string) {
	for end := len(prefix); end > 0; {
		r, size := utf8.DecodeLastRuneInString(prefix[:end])
		start := end - size
		if r == 0xFFFF {
			end = start
			continue
		}
		next := successor(r)
		var b strings.Builder
		b.Grow(start + utf8.RuneLen(next))
		b.WriteString(prefix[:start])
		b.WriteRune(next)
		return prefix, b.String()
	}
	return prefix, ""
}

// successor returns the character after r in UTF-16 order; r must not be
// U+FFFF (the last one).
func successor(r rune) rune {
	switch r {
	case 0xD7FF:
		return 0x10000
	case 0x10FFFF:
		return 0xE000
	}
	return r + 1
}
