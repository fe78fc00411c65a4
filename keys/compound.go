package keys

import "strings"

// The separator and escape of compound keys: see "Compound keys" in the
// package documentation.
const (
	compoundSep    = ' '
	compoundEscape = '!'
)

// Compound returns the order-preserving compound key of parts (design guide
// §6.6). See "Compound keys" in the package documentation.
func Compound(parts ...string) string {
	n, esc := len(parts)-1, 0
	for _, p := range parts {
		n += len(p)
		esc += countEscapes(p)
	}
	if n+esc <= 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(n + esc)
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(compoundSep)
		}
		if esc == 0 {
			b.WriteString(p)
		} else {
			writeCompoundPart(&b, p)
		}
	}
	return b.String()
}

// AppendCompound appends Compound(parts...) to dst and returns the extended
// buffer.
func AppendCompound(dst []byte, parts ...string) []byte {
	for i, p := range parts {
		if i > 0 {
			dst = append(dst, compoundSep)
		}
		for j := 0; j < len(p); j++ {
			c := p[j]
			if c == compoundSep || c == compoundEscape {
				dst = append(dst, compoundEscape)
			}
			dst = append(dst, c)
		}
	}
	return dst
}

// countEscapes counts the bytes of p that Compound escapes.
func countEscapes(p string) int {
	n := 0
	for i := 0; i < len(p); i++ {
		if c := p[i]; c == compoundSep || c == compoundEscape {
			n++
		}
	}
	return n
}

func writeCompoundPart(b *strings.Builder, p string) {
	start := 0
	for i := 0; i < len(p); i++ {
		if c := p[i]; c == compoundSep || c == compoundEscape {
			b.WriteString(p[start:i])
			b.WriteByte(compoundEscape)
			start = i
		}
	}
	b.WriteString(p[start:])
}

// CompoundChecked is Compound for keys that must be valid: it returns an
// error when a part contains a forbidden character or invalid UTF-8 (a
// *KeyError whose Part is the part's index and Pos the byte offset in the
// part), or when the key would be longer than MaxKeyLength (RuleTooLong,
// Value the key).
func CompoundChecked(parts ...string) (string, error) {
	for i, p := range parts {
		if err := validate("CompoundChecked", p, len(p)*2); err != nil {
			e := err.(*KeyError)
			e.Part = i
			return "", e
		}
	}
	key := Compound(parts...)
	if n := UTF16Len(key); n > MaxKeyLength {
		e := newErr("CompoundChecked", RuleTooLong, key)
		e.Got, e.Limit = n, MaxKeyLength
		return "", e
	}
	return key, nil
}

// SplitCompound returns the parts of a key made by Compound. It accepts
// every string in which each '!' is followed by ' ' or '!', and returns an
// error (a *KeyError with RuleSyntax at the bad '!') for any other; for the
// strings it accepts, Compound(SplitCompound(key)...) == key. Parts without
// escapes share memory with key.
func SplitCompound(key string) ([]string, error) {
	n := 1
	for i := 0; i < len(key); i++ {
		switch key[i] {
		case compoundSep:
			n++
		case compoundEscape:
			if i+1 == len(key) || key[i+1] != compoundSep && key[i+1] != compoundEscape {
				return nil, posErr("SplitCompound", RuleSyntax, key, i)
			}
			i++
		}
	}
	parts := make([]string, 0, n)
	start, escaped := 0, false
	for i := 0; i < len(key); i++ {
		switch key[i] {
		case compoundSep:
			parts = append(parts, compoundPart(key[start:i], escaped))
			start, escaped = i+1, false
		case compoundEscape:
			escaped = true
			i++
		}
	}
	return append(parts, compoundPart(key[start:], escaped)), nil
}

// compoundPart removes the escapes from one part of a well-formed key.
func compoundPart(p string, escaped bool) string {
	if !escaped {
		return p
	}
	var b strings.Builder
	b.Grow(len(p) - 1)
	for i := 0; i < len(p); i++ {
		if p[i] == compoundEscape {
			i++
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// CompoundPrefix returns the range [from, to) of the compound keys whose
// first len(parts) parts are parts: Compound(parts...) itself and every
// Compound(append(parts, more...)...). It is the design guide's "RowKey ge
// 'empid_000123' and RowKey lt 'empid_000124'" (§6.6) for compound keys:
// from is Compound(parts...) and to is from + "!", the character after the
// separator. With no parts it returns ("", ""): every key, with no upper
// bound (to == "" means unbounded, as in PrefixRange).
//
// To range over keys whose last given part merely starts with a string, use
// PrefixRange(Compound(parts...)): escaping preserves prefixes, so
// PrefixRange(Compound("Sales", "Jo")) holds exactly the keys whose first
// part is "Sales" and whose second part starts with "Jo".
func CompoundPrefix(parts ...string) (from, to string) {
	if len(parts) == 0 {
		return "", ""
	}
	n := len(parts)
	for _, p := range parts {
		n += len(p) + countEscapes(p)
	}
	var b strings.Builder
	b.Grow(n)
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(compoundSep)
		}
		writeCompoundPart(&b, p)
	}
	b.WriteByte(compoundEscape)
	to = b.String()
	return to[:len(to)-1], to
}
