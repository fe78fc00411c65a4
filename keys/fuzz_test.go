package keys_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tablekit/tablekit/keys"
)

// FuzzCompound: round trip, validity and tuple order of compound keys. The
// parts come from splitting two inputs at '|', so the fuzzer controls their
// number as well as their contents.
func FuzzCompound(f *testing.F) {
	for _, seed := range [][2]string{
		{"empid|000123|2012", "empid|000123|2013"},
		{"New York|a!b", "New York|a!b|"},
		{" | !|!!", " |  |!"},
		{"", "|"},
		{"a", "a "},
		{"a!", "a\x00"},
		{"O'Brien|\U0001F600", "O'Brien|\uFFFF"},
		{"\xff|\xfe", "\x80"},
		{"x\uD7FF|y", "x\U00010000|y"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, x, y string) {
		a, b := strings.Split(x, "|"), strings.Split(y, "|")
		ka, kb := keys.Compound(a...), keys.Compound(b...)
		for _, c := range []struct {
			parts []string
			key   string
		}{{a, ka}, {b, kb}} {
			back, err := keys.SplitCompound(c.key)
			if err != nil || !slices.Equal(back, c.parts) {
				t.Fatalf("SplitCompound(Compound(%q)) = %q, %v", c.parts, back, err)
			}
			valid := !slices.ContainsFunc(c.parts, hasForbidden)
			if err := keys.ValidateLimit(c.key, len(c.key)); (err == nil) != valid {
				t.Fatalf("Compound(%q) = %q: validity %v, want %v", c.parts, c.key, err, valid)
			}
		}
		// Order holds for parts without control characters.
		if slices.ContainsFunc(append(slices.Clone(a), b...), hasControl) {
			return
		}
		if want, got := compareTuples(a, b, strings.Compare), strings.Compare(ka, kb); want != got {
			t.Fatalf("byte order: %q vs %q is %d, keys %q vs %q is %d", a, b, want, ka, kb, got)
		}
		if !utf8.ValidString(x) || !utf8.ValidString(y) {
			return
		}
		if want, got := compareTuples(a, b, compare16), keys.Compare(ka, kb); want != got {
			t.Fatalf("service order: %q vs %q is %d, keys %q vs %q is %d", a, b, want, ka, kb, got)
		}
		// CompoundPrefix of a holds b's key exactly when a is a prefix of b.
		from, to := keys.CompoundPrefix(a...)
		want := len(b) >= len(a) && slices.Equal(b[:len(a)], a)
		if in := keys.Compare(from, kb) <= 0 && keys.Compare(kb, to) < 0; in != want {
			t.Fatalf("CompoundPrefix(%q) = [%q, %q) and key %q of %q: in %v, want %v", a, from, to, kb, b, in, want)
		}
	})
}

// hasControl reports whether s has a byte below U+0020, the bytes that sort
// below the compound separator.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 })
}

// FuzzSplitCompound: whatever SplitCompound accepts, Compound gives back.
func FuzzSplitCompound(f *testing.F) {
	for _, s := range []string{"", " ", "!", "! ", "!!", "a b", "a! b", "a!b", "a!! !", "New! York a!!b", "\xff !"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		parts, err := keys.SplitCompound(key)
		if err != nil {
			if parts != nil {
				t.Fatalf("SplitCompound(%q) returned parts and an error", key)
			}
			return
		}
		if again := keys.Compound(parts...); again != key {
			t.Fatalf("Compound(SplitCompound(%q)) = %q (parts %q)", key, again, parts)
		}
	})
}

// FuzzPrefixRange: s has the prefix exactly when from <= s < to in the
// service's order.
func FuzzPrefixRange(f *testing.F) {
	for _, seed := range [][2]string{
		{"email_a", "email_b"},
		{"email_a", "email_abc"},
		{"", "anything"},
		{"a\uFFFF", "a\U00010000"},
		{"a\U0010FFFF", "a\uE000"},
		{"a\U0010FFFF", "b"},
		{"a\uD7FF", "a\U00010000"},
		{"\uFFFF", "\uFFFF\uFFFF"},
		{"a~", "a\x7f"},
		{"\xff", "\xff\xfe"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, prefix, s string) {
		from, to := keys.PrefixRange(prefix)
		if from != prefix {
			t.Fatalf("PrefixRange(%q) from = %q", prefix, from)
		}
		if !utf8.ValidString(prefix) {
			return // no key has such a prefix; the range is only defined for text
		}
		if to == "" && strings.Trim(prefix, "\uFFFF") != "" {
			t.Fatalf("PrefixRange(%q) is unbounded", prefix)
		}
		if to != "" && (!utf8.ValidString(to) || keys.Compare(from, to) >= 0) {
			t.Fatalf("PrefixRange(%q) = [%q, %q) is empty or not UTF-8", prefix, from, to)
		}
		for _, c := range []string{s, prefix + s} {
			if !utf8.ValidString(c) {
				continue
			}
			want := strings.HasPrefix(c, prefix)
			in := keys.Compare(from, c) <= 0 && (to == "" || keys.Compare(c, to) < 0)
			if in != want {
				t.Fatalf("PrefixRange(%q) = [%q, %q): %q in %v, has prefix %v", prefix, from, to, c, in, want)
			}
		}
	})
}

// FuzzEscape: round trip, validity and order of Escape.
func FuzzEscape(f *testing.F) {
	for _, seed := range [][2]string{
		{"", "a"},
		{"a/b c", "a/b"},
		{"x.y", "x/y"},
		{"#?\\\"", "\"#"},
		{"~\x7f\u0080\u009f\u00a0", "~"},
		{"\x00\x1f ", "!"},
		{"bad\xff", "bad\xfe"},
		{"é中\U0001F600", "\uFFFF"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ea, eb := keys.Escape(a), keys.Escape(b)
		for _, c := range [][2]string{{a, ea}, {b, eb}} {
			back, err := keys.Unescape(c[1])
			if err != nil || back != c[0] {
				t.Fatalf("Unescape(Escape(%q)) = %q, %v (escaped %q)", c[0], back, err, c[1])
			}
			if err := keys.ValidateLimit(c[1], len(c[1])); err != nil {
				t.Fatalf("Escape(%q) = %q: %v", c[0], c[1], err)
			}
		}
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			return
		}
		if strings.Compare(a, b) != strings.Compare(ea, eb) {
			t.Fatalf("Go order: %q vs %q but %q vs %q", a, b, ea, eb)
		}
		if compare16(a, b) != keys.Compare(ea, eb) {
			t.Fatalf("service order: %q vs %q but %q vs %q", a, b, ea, eb)
		}
	})
}

// FuzzUnescape: whatever Unescape accepts, Escape gives back.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{"", "plain", "a.1b Wc", " 0", "\"1", "~X", "~~FF", "~~C3~~A9", "~~41", ".", "a b", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := keys.Unescape(s)
		if err != nil {
			if u != "" {
				t.Fatalf("Unescape(%q) returned %q and an error", s, u)
			}
			return
		}
		if e := keys.Escape(u); e != s {
			t.Fatalf("Escape(Unescape(%q)) = %q (unescaped %q)", s, e, u)
		}
	})
}

// FuzzParseInvertedTicks: what parses prints back the same, for both the
// inverted and the forward form.
func FuzzParseInvertedTicks(f *testing.F) {
	for _, s := range []string{
		"2519954711999999999", "0000000000000000000", "3155378975999999999", "3155378976000000000",
		"9999999999999999999", "251995471199999999", "25199547119999999990", "-251995471199999999",
		"2519954711999999999_4294967295", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if tm, err := keys.ParseInvertedTicks(s); err == nil {
			if back := keys.InvertedTicks(tm); back != s {
				t.Fatalf("InvertedTicks(ParseInvertedTicks(%q)) = %q", s, back)
			}
		} else if !tm.IsZero() {
			t.Fatalf("ParseInvertedTicks(%q) failed with a time", s)
		}
		if tm, err := keys.ParseTicksKey(s); err == nil {
			if back := keys.TicksKey(tm); back != s {
				t.Fatalf("TicksKey(ParseTicksKey(%q)) = %q", s, back)
			}
		}
		if tm, seq, err := keys.ParseInvertedTicksSeq(s); err == nil {
			if back := keys.InvertedTicksSeq(tm, seq); back != s {
				t.Fatalf("InvertedTicksSeq(ParseInvertedTicksSeq(%q)) = %q", s, back)
			}
		}
		if v, err := keys.ParseOrderedInt(s); err == nil {
			if back := keys.OrderedInt(v); back != s {
				t.Fatalf("OrderedInt(ParseOrderedInt(%q)) = %q", s, back)
			}
		}
	})
}

// FuzzCompare: Compare is the UTF-16 order for text, and antisymmetric and
// consistent with equality for any bytes.
func FuzzCompare(f *testing.F) {
	for _, seed := range [][2]string{
		{"a", "b"}, {"a\uFFFF", "a\U00010000"}, {"\uE000", "\U0010FFFF"}, {"é", "e"}, {"\xff", "\xfe"}, {"a\xc3", "a\xc3\xa9"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		c := keys.Compare(a, b)
		if keys.Compare(b, a) != -c || (c == 0) != (a == b) {
			t.Fatalf("Compare(%q, %q) = %d, reversed %d", a, b, c, keys.Compare(b, a))
		}
		if utf8.ValidString(a) && utf8.ValidString(b) && c != compare16(a, b) {
			t.Fatalf("Compare(%q, %q) = %d, UTF-16 order %d", a, b, c, compare16(a, b))
		}
	})
}

// FuzzPad: Pad is the sign, zeros and every digit of n, and PadChecked
// agrees with it whenever the number fits.
func FuzzPad(f *testing.F) {
	f.Add(int64(123), 8)
	f.Add(int64(-1), 3)
	f.Add(int64(-9223372036854775808), 0)
	f.Add(int64(99999999), 8)
	f.Add(int64(5), 100000)
	f.Fuzz(func(t *testing.T, n int64, width int) {
		p := keys.Pad(n, width)
		abs := strings.TrimPrefix(strconv.FormatInt(n, 10), "-")
		want := strings.Repeat("0", max(0, min(width, keys.MaxKeyLength)-len(abs))) + abs
		if n < 0 {
			want = "-" + want
		}
		if p != want {
			t.Fatalf("Pad(%d, %d) = %q, want %q", n, width, p, want)
		}
		c, err := keys.PadChecked(n, width)
		fits := n >= 0 && width >= 1 && width <= keys.MaxKeyLength && len(abs) <= width
		if fits != (err == nil) || fits && c != p {
			t.Fatalf("PadChecked(%d, %d) = %q, %v; Pad gives %q", n, width, c, err, p)
		}
	})
}
