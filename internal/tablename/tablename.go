// Package tablename holds the Table service's rule for table names (design
// guide §1, §6.8), for every package that names or creates tables, so that a
// bad name is refused with a clear reason before any request is sent.
package tablename

import "strconv"

// Limits of a table name.
const (
	MinLength = 3
	MaxLength = 63
)

// Check returns why name is not a valid table name, or "".
//
// The service's rule: 3 to 63 characters, ASCII letters and digits only,
// starting with a letter. "tables" is reserved (in any case). Names are
// case-insensitive on the service, but they keep the case they were created
// with.
func Check(name string) string {
	if n := len(name); n < MinLength || n > MaxLength {
		return "table name must have 3 to 63 characters, not " + strconv.Itoa(n)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9':
			if i == 0 {
				return "table name must start with a letter"
			}
		case c >= 0x80:
			return "non-ASCII byte 0x" + strconv.FormatUint(uint64(c), 16) + " at " + strconv.Itoa(i) + " is not allowed in a table name (ASCII letters and digits only)"
		default:
			return "character " + strconv.QuoteRune(rune(c)) + " at " + strconv.Itoa(i) + " is not allowed in a table name (ASCII letters and digits only)"
		}
	}
	if isReserved(name) {
		return `table name "tables" is reserved`
	}
	return ""
}

// CheckPrefix returns why prefix cannot start table names that add room more
// characters after it, or "": it must be non-empty, letters and digits,
// start with a letter, and leave room characters within MaxLength.
func CheckPrefix(prefix string, room int) string {
	if prefix == "" {
		return "table name prefix is empty"
	}
	if max := MaxLength - room; len(prefix) > max {
		return "table name prefix longer than " + strconv.Itoa(max) + " characters (" + strconv.Itoa(len(prefix)) + "): " + strconv.Itoa(room) + " more are added to it"
	}
	// The rest of the name is letters and digits: the prefix obeys the
	// character rules of a whole name.
	padded := prefix
	for len(padded) < MinLength {
		padded += "0"
	}
	if r := Check(padded); r != "" && !isReserved(padded) {
		return r
	}
	return ""
}

func isReserved(name string) bool {
	if len(name) != len("tables") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != "tables"[i] {
			return false
		}
	}
	return true
}
