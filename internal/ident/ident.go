// Package ident holds the one rule for property names that the entity codec
// (names it stores, design guide §1) and the filter builder (names it
// queries, §2) both apply, so that no entity can have a property that a
// filter cannot name.
package ident

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tablekit/tablekit/keys"
)

// MaxLength is the longest property name the service accepts, in UTF-16
// code units (the service counts .NET characters).
const MaxLength = 255

// reservedWords would change the meaning of a filter if used as a property
// name: the operators and literal keywords of the OData grammar ("true eq
// true" must not match every row). They are compared case-insensitively
// because Azurite reads keywords without regard to case.
var reservedWords = [...]string{
	"and", "or", "not",
	"eq", "ne", "gt", "ge", "lt", "le",
	"true", "false", "null",
	"INF", "NaN",
}

// Check returns why name is not a valid property name, or "".
//
// The rule is the service's, a C# identifier (a letter or underscore, then
// letters, digits, combining marks and connector punctuation; Unicode letters
// count) of at most 255 characters, made tokenizer-proof in two ways:
//   - format characters (Unicode Cf, such as U+FEFF or the bidi overrides),
//     which C# allows after the first character, are refused: JavaScript's
//     trim (Azurite) treats U+FEFF as white space, which would let a name
//     split into several tokens of a filter;
//   - the OData keywords are refused.
func Check(name string) string {
	if name == "" {
		return "empty property name"
	}
	if !utf8.ValidString(name) {
		return "property name is not valid UTF-8"
	}
	if n := keys.UTF16Len(name); n > MaxLength {
		return "property name longer than 255 characters (" + strconv.Itoa(n) + ")"
	}
	for i, r := range name {
		if r == '_' || isLetter(r) {
			continue
		}
		if i == 0 {
			return "property name must start with a letter or underscore"
		}
		if !isIdentPart(r) {
			return "character " + strconv.QuoteRune(r) + " is not allowed in a property name"
		}
	}
	for _, w := range reservedWords {
		if strings.EqualFold(name, w) {
			return "property name " + strconv.Quote(name) + " is an OData keyword"
		}
	}
	return ""
}

// isLetter: the C# identifier-start letters, Unicode Lu, Ll, Lt, Lm, Lo, Nl.
func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Lm, unicode.Lo, unicode.Nl)
}

// isIdentPart: letters, decimal digits (Nd), combining marks (Mn, Mc) and
// connector punctuation (Pc, which includes '_'). Cf is deliberately absent.
func isIdentPart(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	return isLetter(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc)
}
