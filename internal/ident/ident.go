// Package ident holds the rules for property names: Check, the rule of the
// Table service for the names it stores (design guide §1), which the entity
// codec applies to every name it writes; and CheckFilter, which the filter
// builder (§2) adds on top for the names a $filter can reference.
//
// The service's rule, from the REST documentation ("Understanding the Table
// service data model", property names): a name is case-sensitive, at most
// 255 characters, and follows the C# identifier rules; C# identifiers that
// are not valid XML names cannot be used, because names travel in XML
// payloads too. That is the whole rule: OData keywords (and, eq, true, null,
// INF …, in any case) are valid names, and other SDKs and the service store
// them.
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

// Check returns why the service refuses name as a property name, or "".
//
// A valid name is a C# identifier (ECMA-334: a letter — Unicode Lu, Ll, Lt,
// Lm, Lo, Nl — or '_', then letters, decimal digits Nd, connector
// punctuation Pc, combining marks Mn and Mc, and formatting characters Cf)
// whose every character is also allowed in an XML 1.0 (fifth edition) name,
// of at most 255 UTF-16 code units. For example "µ" (a letter below U+00C0
// that XML excludes) and "a\u200Bb" (a formatting character XML excludes)
// are refused; "and", "NaN" and "x\uFEFF" are valid.
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
		if i == 0 {
			if !isIdentStart(r) {
				return "property name must start with a letter or underscore (a C# identifier)"
			}
			if !isXMLNameStart(r) {
				return "character " + strconv.QuoteRune(r) + " cannot start an XML name, which the service requires of property names"
			}
			continue
		}
		if !isIdentPart(r) {
			return "character " + strconv.QuoteRune(r) + " is not allowed in a property name (a C# identifier)"
		}
		if !isXMLNameChar(r) {
			return "character " + strconv.QuoteRune(r) + " is not allowed in an XML name, which the service requires of property names"
		}
	}
	return ""
}

// filterKeywords are the words of the OData filter grammar that a property
// name cannot be written as in a $filter: the service reads them as
// operators or literals (Azurite answers 400 for "and eq 1"), in any case
// (Azurite reads keywords without regard to case), and the grammar has no
// way to quote a name.
var filterKeywords = [...]string{
	"and", "or", "not",
	"eq", "ne", "gt", "ge", "lt", "le",
	"true", "false", "null",
	"INF", "NaN",
}

// CheckFilter returns why a $filter cannot reference name, or "". Every
// name it accepts is valid for the service (Check); it also refuses
//   - the OData keywords in any case, which the filter grammar reads as
//     operators or literals: such a property can be stored, read and
//     written, but only filtered on the client;
//   - formatting characters (Unicode Cf, such as U+FEFF): JavaScript's trim,
//     which Azurite's filter parser applies, takes U+FEFF for white space,
//     which would let one name split into several tokens.
func CheckFilter(name string) string {
	if r := Check(name); r != "" {
		return r
	}
	for _, w := range filterKeywords {
		if strings.EqualFold(name, w) {
			return "property name " + strconv.Quote(name) + " is an OData keyword, which a filter cannot reference (the service stores it; filter on the client)"
		}
	}
	for _, r := range name {
		if r >= utf8.RuneSelf && unicode.Is(unicode.Cf, r) {
			return "property name " + strconv.Quote(name) + " holds the formatting character " + strconv.QuoteRune(r) + ", which a filter cannot reference safely (filter on the client)"
		}
	}
	return ""
}

// isIdentStart: the C# identifier-start characters, a letter (Unicode Lu,
// Ll, Lt, Lm, Lo, Nl) or '_'.
func isIdentStart(r rune) bool {
	return r == '_' || isLetter(r)
}

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Lm, unicode.Lo, unicode.Nl)
}

// isIdentPart: the C# identifier-part characters: letters, decimal digits
// (Nd), connector punctuation (Pc, which includes '_'), combining marks (Mn,
// Mc) and formatting characters (Cf).
func isIdentPart(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	return isLetter(r) || unicode.In(r, unicode.Nd, unicode.Pc, unicode.Mn, unicode.Mc, unicode.Cf)
}

// isXMLNameStart is XML 1.0 (fifth edition) NameStartChar, without ':'
// (which no C# identifier holds).
func isXMLNameStart(r rune) bool {
	switch {
	case r < utf8.RuneSelf:
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || r == '_'
	case r < 0xC0:
		return false
	}
	for _, rg := range xmlNameStartRanges {
		if r < rg[0] {
			return false
		}
		if r <= rg[1] {
			return true
		}
	}
	return false
}

// xmlNameStartRanges are the non-ASCII ranges of NameStartChar, in order.
var xmlNameStartRanges = [...][2]rune{
	{0xC0, 0xD6}, {0xD8, 0xF6}, {0xF8, 0x2FF}, {0x370, 0x37D}, {0x37F, 0x1FFF},
	{0x200C, 0x200D}, {0x2070, 0x218F}, {0x2C00, 0x2FEF}, {0x3001, 0xD7FF},
	{0xF900, 0xFDCF}, {0xFDF0, 0xFFFD}, {0x10000, 0xEFFFF},
}

// isXMLNameChar is XML 1.0 (fifth edition) NameChar, without ':', '-' and
// '.' (which no C# identifier holds).
func isXMLNameChar(r rune) bool {
	switch {
	case r < utf8.RuneSelf:
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	case r == 0xB7, 0x300 <= r && r <= 0x36F, r == 0x203F, r == 0x2040:
		return true
	}
	return isXMLNameStart(r)
}
