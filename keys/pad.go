package keys

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// zeros holds enough '0' characters for any padding this package writes.
const zeros = "0000000000000000000000000000000000000000000000000000000000000000"

// Pad formats n in decimal, left-padded with zeros to width digits, so that
// numbers padded to the same width sort as strings in numeric order (design
// guide §2: 123 becomes "00000123" with width 8).
//
// Pad never truncates and never fails: a number with more digits than width
// is returned with all its digits (Pad(123456, 4) is "123456"), so distinct
// numbers always give distinct keys — but such a key no longer sorts with
// the others. Use PadChecked to get an error instead.
//
// A negative n is written as '-' followed by its magnitude padded to width
// digits (Pad(-42, 5) is "-00042"). Negative numbers made this way do NOT
// sort correctly, neither among themselves nor against positive ones; use
// OrderedInt for keys that mix signs. width is the number of digits, not
// counting the sign; a width below 1 means no padding, and a width above
// MaxKeyLength is treated as MaxKeyLength (such a key could not be valid
// anyway).
func Pad(n int64, width int) string {
	var buf [24]byte
	b := AppendPad(buf[:0], n, width)
	return string(b)
}

// AppendPad appends Pad(n, width) to dst and returns the extended buffer.
func AppendPad(dst []byte, n int64, width int) []byte {
	width = max(0, min(width, MaxKeyLength))
	var u uint64
	if n < 0 {
		dst = append(dst, '-')
		u = uint64(-(n + 1)) + 1 // |n| without overflow for math.MinInt64
	} else {
		u = uint64(n)
	}
	return appendPadUint(dst, u, width)
}

// appendPadUint appends u in decimal, left-padded with zeros to width.
func appendPadUint(dst []byte, u uint64, width int) []byte {
	n := digitCount(u)
	for pad := width - n; pad > 0; {
		k := min(pad, len(zeros))
		dst = append(dst, zeros[:k]...)
		pad -= k
	}
	var buf [20]byte
	i := len(buf)
	for u >= 100 {
		q := u / 100
		d := (u - q*100) * 2
		i -= 2
		buf[i], buf[i+1] = digitPairs[d], digitPairs[d+1]
		u = q
	}
	if u >= 10 {
		i -= 2
		buf[i], buf[i+1] = digitPairs[u*2], digitPairs[u*2+1]
	} else {
		i--
		buf[i] = byte('0' + u)
	}
	return append(dst, buf[i:]...)
}

// digitPairs holds "00" to "99", for formatting two digits at a time.
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// PadChecked is Pad for keys that must sort: it returns an error (a
// *KeyError matching ErrInvalidKey) instead of a key that would sort wrongly
// or be invalid — when n is negative (RuleNegative; see OrderedInt), when n
// has more than width digits (RuleTooWide), or when width is not within
// 1..MaxKeyLength (RuleWidth).
func PadChecked(n int64, width int) (string, error) {
	if width < 1 || width > MaxKeyLength {
		e := newErr("PadChecked", RuleWidth, strconv.FormatInt(n, 10))
		e.Got, e.Limit = width, MaxKeyLength
		return "", e
	}
	if n < 0 {
		return "", newErr("PadChecked", RuleNegative, strconv.FormatInt(n, 10))
	}
	if d := digitCount(uint64(n)); d > width {
		e := newErr("PadChecked", RuleTooWide, strconv.FormatInt(n, 10))
		e.Got, e.Limit = d, width
		return "", e
	}
	return Pad(n, width), nil
}

// digitCount returns the number of decimal digits of u (1 for 0).
func digitCount(u uint64) int {
	d := 1
	for u >= 10 {
		u /= 10
		d++
	}
	return d
}

// OrderedIntLength is the length of every key OrderedInt returns.
const OrderedIntLength = 20

// OrderedInt encodes any int64 as a 20-character key whose string order is
// the numeric order, across negative and positive values:
//
//   - n >= 0 is Pad(n, 20): "0" followed by 19 digits (123 is
//     "00000000000000000123");
//   - n < 0 is '-' followed by the 19 digits of n + 2^63, which is in
//     0 … 2^63-1 (-1 is "-9223372036854775807", math.MinInt64 is
//     "-0000000000000000000").
//
// '-' sorts before '0', so every negative key sorts before every
// non-negative one, and within each sign the fixed-width digits sort
// numerically. The keys are plain ASCII, so Go order and service order
// agree. ParseOrderedInt reverses it.
func OrderedInt(n int64) string {
	var buf [OrderedIntLength]byte
	return string(AppendOrderedInt(buf[:0], n))
}

// AppendOrderedInt appends OrderedInt(n) to dst and returns the extended
// buffer.
func AppendOrderedInt(dst []byte, n int64) []byte {
	if n < 0 {
		dst = append(dst, '-')
		return appendPadUint(dst, uint64(n-math.MinInt64), OrderedIntLength-1)
	}
	return appendPadUint(dst, uint64(n), OrderedIntLength)
}

// ParseOrderedInt returns the number OrderedInt encoded as s. It accepts
// exactly the strings OrderedInt returns; anything else is a *KeyError with
// RuleSyntax.
func ParseOrderedInt(s string) (int64, error) {
	const fn = "ParseOrderedInt"
	if len(s) != OrderedIntLength {
		return 0, newErr(fn, RuleSyntax, s)
	}
	neg := s[0] == '-'
	start := 0
	if neg {
		start = 1
	}
	v, pos := parseDigits(s[start:])
	if pos >= 0 {
		return 0, posErr(fn, RuleSyntax, s, start+pos)
	}
	if neg {
		if v > math.MaxInt64 {
			return 0, newErr(fn, RuleSyntax, s)
		}
		return int64(v) + math.MinInt64, nil
	}
	if v > math.MaxInt64 {
		return 0, newErr(fn, RuleSyntax, s)
	}
	return int64(v), nil
}

// parseDigits parses s, at most 20 ASCII digits, as an unsigned number.
// It returns the byte offset of the first non-digit, or -1, and reports
// overflow of uint64 as offset len(s)-1 (so callers treat it as a syntax
// error at the last digit).
func parseDigits(s string) (uint64, int) {
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, i
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, i
		}
		v = v*10 + d
	}
	return v, -1
}

// Join joins parts with sep, the design guide's readable compound key
// (§6.6): Join("_", "empid", Pad(123, 6), "2012") is "empid_000123_2012".
// It returns an error (a *KeyError with RuleSeparator) when sep is empty or
// the key would not split back into the parts (a part contains sep, or runs
// into it: Join("__", "a_", "b")); it does not otherwise check the parts.
//
// The result sorts in tuple order only if, at each position, all parts have
// the same length (fixed-width codes, Pad numbers) or sep sorts below
// every character the parts contain. For arbitrary parts use Compound,
// which escapes and always preserves tuple order.
func Join(sep string, parts ...string) (string, error) {
	if sep == "" {
		return "", newErr("Join", RuleSeparator, sep)
	}
	n := len(sep) * max(len(parts)-1, 0)
	for i, p := range parts {
		if j := strings.Index(p, sep); j >= 0 {
			e := posErr("Join", RuleSeparator, p, j)
			e.Part = i
			return "", e
		}
		n += len(p)
	}
	var b strings.Builder
	b.Grow(n)
	for i, p := range parts {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(p)
	}
	key := b.String()
	// With a separator of several characters, parts can also run into it:
	// Join("__", "a_", "b") and Join("__", "a", "_b") are both "a___b".
	if got := strings.Split(key, sep); len(parts) > 0 && !slices.Equal(got, parts) {
		return "", newErr("Join", RuleSeparator, key)
	}
	return key, nil
}
