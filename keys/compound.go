package keys

import "strings"

// The compound key scheme.
//
// Compound joins parts with a SPACE (U+0020) and escapes, inside a part,
// every space as "! " and every '!' (U+0021) as "!!". Nothing else changes:
//
//	Compound("empid", "000123", "2012")   = "empid 000123 2012"
//	Compound("New York", "a!b")           = "New! York a!!b"
//
// Why order holds. A key cannot contain U+0000–U+001F, so the space is the
// smallest character a valid part can contain, and '!' the next one. After
// escaping, every character of a part is written as a code that begins
// with a character of at least '!': the character itself, or "! " and "!!"
// for the two escaped ones. "! " < "!!" < '"' and every other character is
// at least '"', so the codes keep the order of the characters they stand
// for, and none is a prefix of another: escaping preserves the order of
// parts. The separator sorts below the first
// character of every code, so when one part is a proper prefix of the other,
// the key whose part ends (followed by the separator or by the end of the
// key) sorts first, as the shorter part does. Hence Compound(a...) <
// Compound(b...) exactly when a comes before b element by element, and a
// shorter tuple that is a prefix of a longer one sorts first. (Parts that
// contain control characters below U+0020, which no key may contain, sort
// below the separator and get no order guarantee; they still round-trip.)
//
// The argument only uses the fact that ' ' and '!' are single units below
// every other character of a valid part, which is true for UTF-8 bytes and
// for UTF-16 code units alike: the order holds in Go's byte order, with
// parts compared by bytes, and in the service's UTF-16 order (Compare), with
// parts compared by Compare.
//
// Round trip: SplitCompound(Compound(p...)) returns p for every non-empty
// list of parts, whatever they contain. The one exception is the empty
// list: Compound() is "", the same key as Compound(""), and SplitCompound("")
// returns [""]. The key is valid (Validate) whenever the parts contain no
// forbidden character and it is not too long; CompoundChecked checks both.
const (
	compoundSep    = ' '
	compoundEscape = '!'
)

// Compound returns the order-preserving compound key of parts (design guide
// §6.6). See "The compound key scheme" above.
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
