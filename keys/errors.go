package keys

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrInvalidKey is the sentinel every error of this package matches with
// errors.Is: a key, or a value a key was to be built from or parsed into,
// breaks a rule. The error itself is always a *KeyError that says which
// rule, where, and what the limit is.
var ErrInvalidKey = errors.New("keys: invalid key")

// Rule names a rule a value breaks, in words ("forbidden character"). It is
// the one rule type of tablekit: entity.Rule is the same type, so the rules
// of a *KeyError and of an *entity.ValidationError compare and print alike.
type Rule string

// String returns the rule in words.
func (r Rule) String() string { return string(r) }

// The rules a *KeyError can report.
const (
	// RuleForbiddenChar: the key contains '/', '\', '#', '?', or a control
	// character U+0000–U+001F or U+007F–U+009F. Pos and Char locate it.
	RuleForbiddenChar Rule = "forbidden character"
	// RuleInvalidUTF8: the key is not valid UTF-8. Pos is the byte offset of
	// the first bad byte.
	RuleInvalidUTF8 Rule = "invalid UTF-8"
	// RuleTooLong: the key has more UTF-16 code units (Got) than the limit
	// (Limit, MaxKeyLength for Validate).
	RuleTooLong Rule = "too long"
	// RuleNegative: a number that must not be negative is (PadChecked).
	RuleNegative Rule = "negative number"
	// RuleTooWide: a number has more digits (Got) than the width it must
	// fit in (Limit).
	RuleTooWide Rule = "number wider than width"
	// RuleWidth: a requested width is out of range (Got; Limit is the
	// largest width allowed).
	RuleWidth Rule = "width out of range"
	// RuleSeparator: the separator is empty, or part number Part contains
	// it at byte offset Pos of the part (Join).
	RuleSeparator Rule = "separator"
	// RuleBucketCount: a bucket count below 1 (Got).
	RuleBucketCount Rule = "bucket count out of range"
	// RuleTimeRange: a time outside the range of .NET DateTime,
	// 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z.
	RuleTimeRange Rule = "time out of range"
	// RuleSyntax: the string is not of the form the parser expects (wrong
	// length, a non-digit, a malformed escape sequence). Pos locates the
	// first problem when it is at one place.
	RuleSyntax Rule = "syntax"
)

// KeyError reports a broken key rule. It matches ErrInvalidKey with
// errors.Is; use errors.As to read the details.
type KeyError struct {
	// Func is the function that reported the error, e.g. "Validate".
	Func string
	// Rule is the rule that was broken.
	Rule Rule
	// Value is the offending key or input, as given: a number in decimal,
	// a time in RFC 3339 format.
	Value string
	// Pos is the byte offset in Value (or in part number Part, when Part
	// >= 0) of the offending character, or -1 when the error is not at one
	// place.
	Pos int
	// Char is the offending character at Pos (utf8.RuneError for a byte
	// that is not valid UTF-8); 0 when Pos is -1.
	Char rune
	// Part is the index of the offending part for the functions that take
	// several parts (Join, CompoundChecked), or -1.
	Part int
	// Limit is the limit that was broken (a length, width or count), or 0.
	Limit int
	// Got is the measured length, width or count that broke Limit, or 0.
	Got int
}

// Error describes the problem in one line. Long values are shortened.
func (e *KeyError) Error() string {
	if e == nil {
		return "keys: invalid key: <nil>"
	}
	var b strings.Builder
	b.WriteString("keys: ")
	if e.Func != "" {
		b.WriteString(e.Func)
		b.WriteString(": ")
	}
	if e.Part >= 0 {
		b.WriteString("part ")
		b.WriteString(strconv.Itoa(e.Part))
		b.WriteString(": ")
	}
	b.WriteString(string(e.Rule))
	b.WriteString(": ")
	b.WriteString(quoteShort(e.Value))
	switch e.Rule {
	case RuleSeparator:
		if e.Part < 0 {
			b.WriteString(": empty separator")
		}
	case RuleTooLong:
		b.WriteString(" has ")
		b.WriteString(strconv.Itoa(e.Got))
		b.WriteString(" UTF-16 code units, more than ")
		b.WriteString(strconv.Itoa(e.Limit))
	case RuleTooWide:
		b.WriteString(" has ")
		b.WriteString(strconv.Itoa(e.Got))
		b.WriteString(" digits, more than width ")
		b.WriteString(strconv.Itoa(e.Limit))
	case RuleWidth:
		b.WriteString(": width ")
		b.WriteString(strconv.Itoa(e.Got))
		b.WriteString(" is not within 1..")
		b.WriteString(strconv.Itoa(e.Limit))
	case RuleBucketCount:
		b.WriteString(": bucket count ")
		b.WriteString(strconv.Itoa(e.Got))
		b.WriteString(" is less than 1")
	}
	if e.Pos >= 0 {
		b.WriteString(" at byte ")
		b.WriteString(strconv.Itoa(e.Pos))
		// A byte that is not UTF-8 is not a character worth quoting.
		if e.Rule != RuleInvalidUTF8 && e.Char != utf8.RuneError {
			b.WriteString(" (")
			b.WriteString(strconv.QuoteRune(e.Char))
			b.WriteString(", U+")
			hex := strconv.FormatInt(int64(e.Char), 16)
			for i := len(hex); i < 4; i++ {
				b.WriteByte('0')
			}
			b.WriteString(strings.ToUpper(hex))
			b.WriteByte(')')
		}
	}
	return b.String()
}

// Is reports whether target is ErrInvalidKey.
func (e *KeyError) Is(target error) bool { return target == ErrInvalidKey }

// quoteShort quotes v for an error message, keeping at most 64 bytes of it.
func quoteShort(v string) string {
	const max = 64
	if len(v) <= max {
		return strconv.Quote(v)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return strconv.Quote(v[:cut]) + "…"
}

// newErr builds a *KeyError with no position and no part.
func newErr(fn string, rule Rule, value string) *KeyError {
	return &KeyError{Func: fn, Rule: rule, Value: value, Pos: -1, Part: -1}
}

// posErr builds a *KeyError at byte offset pos of value.
func posErr(fn string, rule Rule, value string, pos int) *KeyError {
	e := newErr(fn, rule, value)
	e.Pos = pos
	r, _ := utf8.DecodeRuneInString(value[pos:])
	e.Char = r
	return e
}
