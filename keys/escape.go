package keys

import (
	"strings"
	"unicode/utf8"
)

// escapeDigits numbers the members of an escaped run: see "Escaping" in the
// package documentation.
const escapeDigits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

const upperHex = "0123456789ABCDEF"

// escapeCode returns the two-byte code of r, or ok == false when r is
// copied unchanged.
func escapeCode(r rune) (lead, follow byte, ok bool) {
	switch {
	case r <= 0x20:
		return ' ', escapeDigits[r], true
	case r == '"' || r == '#':
		return '"', byte('0' + r - '"'), true
	case r == '.' || r == '/':
		return '.', byte('0' + r - '.'), true
	case r == '>' || r == '?':
		return '>', byte('0' + r - '>'), true
	case r == '[' || r == '\\':
		return '[', byte('0' + r - '['), true
	case r >= '~' && r <= 0x9F:
		return '~', escapeDigits[r-'~'], true
	}
	return 0, 0, false
}

// unescapeCode returns the character that lead and follow stand for.
func unescapeCode(lead, follow byte) (rune, bool) {
	idx := strings.IndexByte(escapeDigits, follow)
	if idx < 0 {
		return 0, false
	}
	switch lead {
	case ' ':
		if idx <= 0x20 {
			return rune(idx), true
		}
	case '"', '.', '>', '[':
		if idx <= 1 {
			return rune(lead) + rune(idx), true
		}
	case '~':
		if idx <= 0x9F-'~' {
			return '~' + rune(idx), true
		}
	}
	return 0, false
}

// isEscapeLead reports whether c starts a code in an escaped string.
func isEscapeLead(c byte) bool {
	return c == ' ' || c == '"' || c == '.' || c == '>' || c == '[' || c == '~'
}

// needsEscape reports whether c, an ASCII byte, is escaped by Escape.
func needsEscape(c byte) bool {
	return c <= 0x20 || c == '"' || c == '#' || c == '.' || c == '/' ||
		c == '>' || c == '?' || c == '[' || c == '\\' || c >= '~'
}

// plainPrefix returns the length of the longest prefix of s that Escape
// leaves unchanged, and whether it ends at a character no escaped string
// holds (a C1 control or invalid UTF-8) rather than at an ASCII character
// that has an escape code.
func plainPrefix(s string) (n int, forbidden bool) {
	for n < len(s) {
		c := s[n]
		if c < utf8.RuneSelf {
			if needsEscape(c) {
				return n, false
			}
			n++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[n:])
		if r <= 0x9F || size == 1 { // C1 controls, or invalid UTF-8
			return n, true
		}
		n += size
	}
	return n, false
}

// Escape returns s with every character a key cannot contain, and the
// characters used to escape them, replaced by order-preserving codes: see
// "Escaping" in the package documentation. A string that needs no escaping is returned
// as is, without allocating.
func Escape(s string) string {
	i, _ := plainPrefix(s)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + (len(s)-i)/4 + 2)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if lead, follow, ok := escapeCode(rune(c)); ok {
				b.WriteByte(lead)
				b.WriteByte(follow)
			} else {
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString("~~")
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&0xF])
		case r <= 0x9F:
			lead, follow, _ := escapeCode(r)
			b.WriteByte(lead)
			b.WriteByte(follow)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Unescape reverses Escape. It accepts exactly the strings Escape returns
// — Escape(Unescape(s)) == s whenever it succeeds — and returns a
// *KeyError with RuleSyntax (at the offending byte) for any other: a lead
// character not followed by a valid code, a character Escape would have
// escaped, or invalid UTF-8. A string without escapes is returned as is,
// without allocating.
func Unescape(s string) (string, error) {
	const fn = "Unescape"
	i, forbidden := plainPrefix(s)
	if forbidden {
		return "", posErr(fn, RuleSyntax, s, i)
	}
	if i == len(s) {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	rawBytes := false
	for i < len(s) {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r <= 0x9F || size == 1 {
				return "", posErr(fn, RuleSyntax, s, i)
			}
			b.WriteString(s[i : i+size])
			i += size
			continue
		}
		if !needsEscape(c) {
			b.WriteByte(c)
			i++
			continue
		}
		if !isEscapeLead(c) || i+1 >= len(s) {
			return "", posErr(fn, RuleSyntax, s, i)
		}
		if c == '~' && s[i+1] == '~' {
			v, ok := parseHexByte(s[i+2:])
			if !ok || v < utf8.RuneSelf {
				return "", posErr(fn, RuleSyntax, s, i)
			}
			b.WriteByte(v)
			rawBytes = true
			i += 4
			continue
		}
		r, ok := unescapeCode(c, s[i+1])
		if !ok {
			return "", posErr(fn, RuleSyntax, s, i)
		}
		b.WriteRune(r)
		i += 2
	}
	out := b.String()
	// Bytes written from "~~XX" codes must be ones Escape would write that
	// way, i.e. not part of valid UTF-8 in the result; re-escaping is the
	// exact test, and this path only runs for strings that were not UTF-8.
	if rawBytes && Escape(out) != s {
		return "", newErr(fn, RuleSyntax, s)
	}
	return out, nil
}

// parseHexByte parses two upper-case hex digits at the start of s.
func parseHexByte(s string) (byte, bool) {
	if len(s) < 2 {
		return 0, false
	}
	hi, lo := strings.IndexByte(upperHex, s[0]), strings.IndexByte(upperHex, s[1])
	if hi < 0 || lo < 0 {
		return 0, false
	}
	return byte(hi<<4 | lo), true
}
