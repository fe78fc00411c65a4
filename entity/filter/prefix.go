package filter

import "github.com/tablekit/tablekit/keys"

// The Table service (and Azurite) compare strings ordinally by UTF-16 code
// unit, not by Unicode code point as Go does. The two orders differ for
// U+E000–U+FFFF against supplementary characters: in UTF-16 a supplementary
// character starts with a surrogate (0xD800–0xDBFF) and so sorts BELOW
// U+E000, while in Go's byte order it sorts above U+FFFF. Package keys owns
// that order; the tests of this package check it independently (against
// unicode/utf16 code units, and over every short string of boundary
// characters for prefix ranges).

// compareUTF16 compares a and b as the service does. It returns -1, 0 or +1.
func compareUTF16(a, b string) int { return keys.Compare(a, b) }

// prefixSuccessor returns the smallest valid string that is greater, in
// UTF-16 order, than every string starting with prefix; ok is false when no
// such string exists (prefix is empty or made only of U+FFFF).
//
// The last character that can grow is incremented and everything after it is
// dropped:
//   - U+FFFF is the largest code unit: it is dropped and the character before
//     it is incremented instead;
//   - U+D7FF is followed by the surrogates, which cannot stand alone: the
//     smallest valid string there is U+10000 (D800 DC00);
//   - a supplementary character below U+10FFFF grows to the next code point
//     (the low surrogate grows, or the high one with the low reset to DC00);
//   - U+10FFFF (DBFF DFFF) cannot grow within the surrogates: the smallest
//     valid code unit above DBFF that can stand alone is U+E000.
func prefixSuccessor(prefix string) (string, bool) {
	_, to := keys.PrefixRange(prefix)
	return to, to != ""
}
