package filter

import "unicode/utf8"

// The Table service (and Azurite) compare strings ordinally by UTF-16 code
// unit, not by Unicode code point as Go does. The two orders differ for
// U+E000–U+FFFF against supplementary characters: in UTF-16 a supplementary
// character starts with a surrogate (0xD800–0xDBFF) and so sorts BELOW
// U+E000, while in Go's byte order it sorts above U+FFFF.
//
// NOTE: keys.PrefixRange (package keys) has the same semantics as
// prefixSuccessor; once it lands, RowKeyPrefix can use it and this copy can
// go. The two must agree on every input, including the U+FFFF and U+10FFFF
// cases below.

// utf16Weight maps a rune to a number that sorts as the rune's first UTF-16
// code unit does, breaking ties between supplementary characters by code
// point (which is their low-surrogate order).
func utf16Weight(r rune) rune {
	if r >= 0xE000 && r <= 0xFFFF {
		return r + 0x200000 // above every supplementary character
	}
	return r
}

// compareUTF16 compares a and b as the service does: ordinally by UTF-16
// code unit. It returns -1, 0 or +1.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			if utf16Weight(ra) < utf16Weight(rb) {
				return -1
			}
			return 1
		}
		a, b = a[na:], b[nb:]
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	}
	return 1
}

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
	end := len(prefix)
	for end > 0 {
		r, size := utf8.DecodeLastRuneInString(prefix[:end])
		start := end - size
		var next rune
		switch {
		case r == 0xFFFF:
			end = start
			continue
		case r == 0xD7FF:
			next = 0x10000
		case r == utf8.MaxRune:
			next = 0xE000
		default:
			next = r + 1
		}
		return prefix[:start] + string(next), true
	}
	return "", false
}
