package keys

import "unicode/utf8"

// MaxKeyLength is the longest PartitionKey or RowKey Validate accepts, in
// UTF-16 code units: 1 KiB of UTF-16, 512 code units. A character outside
// the Basic Multilingual Plane (U+10000 and up) counts as two.
//
// Why 512 and not 1024: the Table service REST reference ("Understanding the
// Table service data model", learn.microsoft.com/rest/api/storageservices)
// says a key is "a string value that may be up to 1 KiB in size"; the
// service stores strings as UTF-16 (its entity-size formula counts
// "Len(PartitionKey + RowKey) * 2 bytes", and a 64 KiB String property is
// documented as 32 K characters), so 1 KiB is 512 code units. Azurite
// 3.37.0 enforces exactly that: keys longer than 512 JavaScript (UTF-16)
// characters are rejected with InvalidInput (DEFAULT_KEY_MAX_LENGTH = 512 in
// dist/src/table/utils/constants.js). The "Scalability and performance
// targets for Table storage" page says instead "a string up to 1024
// characters in size". 512 is the limit every backend accepts; use
// ValidateLimit to check against another one.
const MaxKeyLength = 512

// Validate reports whether key can be used as a PartitionKey or RowKey
// (design guide §1): valid UTF-8, none of the characters '/', '\', '#',
// '?', U+0000–U+001F and U+007F–U+009F, and at most MaxKeyLength UTF-16 code
// units. The empty string is a valid key (the service accepts it).
//
// The error is a *KeyError matching ErrInvalidKey; the first offending
// character is reported (Rule RuleInvalidUTF8 or RuleForbiddenChar, with
// Pos and Char), else the length (RuleTooLong, with Got and Limit).
func Validate(key string) error {
	return validate("Validate", key, MaxKeyLength)
}

// ValidateLimit is Validate with a length limit of max UTF-16 code units
// instead of MaxKeyLength.
func ValidateLimit(key string, max int) error {
	return validate("ValidateLimit", key, max)
}

func validate(fn, key string, max int) error {
	n := 0
	for i := 0; i < len(key); {
		c := key[i]
		if c < utf8.RuneSelf {
			if forbiddenASCII(c) {
				return posErr(fn, RuleForbiddenChar, key, i)
			}
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(key[i:])
		if r == utf8.RuneError && size == 1 {
			return posErr(fn, RuleInvalidUTF8, key, i)
		}
		if r <= 0x9F {
			return posErr(fn, RuleForbiddenChar, key, i)
		}
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		i += size
	}
	if n > max {
		e := newErr(fn, RuleTooLong, key)
		e.Got, e.Limit = n, max
		return e
	}
	return nil
}

// Bit masks of the ASCII bytes a key may not contain: U+0000–U+001F, '#',
// '/' and '?' in forbiddenLow (bytes 0–63); '\' and U+007F in forbiddenHigh
// (bytes 64–127, bit c-64).
const (
	forbiddenLow  uint64 = 1<<0x20 - 1 | 1<<'#' | 1<<'/' | 1<<'?'
	forbiddenHigh uint64 = 1<<('\\'-64) | 1<<(0x7F-64)
)

// forbiddenASCII reports whether an ASCII byte may not appear in a key.
func forbiddenASCII(c byte) bool {
	if c < 64 {
		return forbiddenLow>>c&1 != 0
	}
	return forbiddenHigh>>(c-64)&1 != 0
}

// UTF16Len returns the length of s in UTF-16 code units, the unit in which
// the service measures strings. Each byte that is not valid UTF-8 counts as
// one (it travels as U+FFFD).
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}
