package compound

import (
	"strconv"
	"time"

	"github.com/tablekit/tablekit/keys"
)

// Part encodes values of type V as one part of a compound key, so that the
// keys sort as the values do, and decodes them back. Build one with Int,
// Signed, Text, Escaped, Time, NewestFirst or Custom; the zero Part is
// refused by New.
type Part[V any] struct {
	name   string
	format func(V) (string, error)
	parse  func(string) (V, error)
	// window, when set, returns the part strings [lo, hi) of exactly the
	// values v with from ≤ v < to in V's own order ("" for no bound on
	// that side), or empty; nil means format's order is V's.
	window func(from, to V) (lo, hi string, empty bool)
}

// Name says what the part encodes, for errors.
func (p Part[V]) Name() string { return p.name }

func (p Part[V]) ok() bool { return p.format != nil && p.parse != nil }

// Int encodes non-negative integers as width zero-padded digits (the
// guide's 000123, keys.PadChecked): a negative number, or one with more
// than width digits, is an error rather than a key that sorts wrong.
func Int(width int) Part[int64] {
	return Part[int64]{
		name: "Int(" + strconv.Itoa(width) + ")",
		format: func(n int64) (string, error) {
			return keys.PadChecked(n, width)
		},
		parse: func(s string) (int64, error) {
			if len(s) != width || width < 1 {
				return 0, syntax("Int", s)
			}
			for i := 0; i < len(s); i++ {
				if s[i] < '0' || s[i] > '9' {
					return 0, syntax("Int", s)
				}
			}
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return 0, syntax("Int", s)
			}
			return n, nil
		},
	}
}

// Signed encodes any int64 in 20 characters that sort numerically across
// signs (keys.OrderedInt).
func Signed() Part[int64] {
	return Part[int64]{
		name:   "Signed",
		format: func(n int64) (string, error) { return keys.OrderedInt(n), nil },
		parse:  keys.ParseOrderedInt,
	}
}

// Text uses a string as it is: readable keys, for values known to hold no
// character a key forbids ('/', '\', '#', '?', control characters) —
// anything else is an error. Spaces and '!' are fine: the compound key
// escapes them.
func Text() Part[string] {
	return Part[string]{
		name: "Text",
		format: func(s string) (string, error) {
			if err := keys.Validate(s); err != nil {
				return "", err
			}
			return s, nil
		},
		parse: func(s string) (string, error) {
			if err := keys.Validate(s); err != nil {
				return "", err
			}
			return s, nil
		},
	}
}

// Escaped stores any string, escaping the characters a key forbids in an
// order-preserving way (keys.Escape).
func Escaped() Part[string] {
	return Part[string]{
		name:   "Escaped",
		format: func(s string) (string, error) { return keys.Escape(s), nil },
		parse:  keys.Unescape,
	}
}

// Time encodes instants oldest first, as 19-digit .NET ticks
// (keys.TicksKeyChecked): 100 ns precision, UTC.
func Time() Part[time.Time] {
	return Part[time.Time]{name: "Time", format: keys.TicksKeyChecked, parse: keys.ParseTicksKey, window: oldestFirstWindow}
}

// NewestFirst encodes instants newest first, as the guide's inverted ticks
// (keys.InvertedTicksChecked): a range of children lists the latest first,
// and $top n of it reads the n latest (§6.7). Its keys sort against time:
// Relation.ChildrenIn reads a time window in time's terms.
func NewestFirst() Part[time.Time] {
	return Part[time.Time]{name: "NewestFirst", format: keys.InvertedTicksChecked, parse: keys.ParseInvertedTicks, window: newestFirstWindow}
}

// ceilTicks is the first tick at or after t: the ticks of the instants
// from t on are ceilTicks(t) and above. Instants before DateTime's range
// give 0, after it keys.MaxTicks+1.
func ceilTicks(t time.Time) int64 {
	switch {
	case t.Before(keys.FromTicks(0)):
		return 0
	case t.After(keys.FromTicks(keys.MaxTicks)):
		return keys.MaxTicks + 1
	}
	k := keys.Ticks(t)
	if t.Nanosecond()%100 != 0 {
		k++
	}
	return k
}

// tickWindow is the ticks [lo, hi) of the instants from ≤ t < to; a zero
// to is no bound (a zero from, the first tick, is none already).
func tickWindow(from, to time.Time) (lo, hi int64, empty bool) {
	lo, hi = ceilTicks(from), ceilTicks(to)
	if to.IsZero() {
		hi = keys.MaxTicks + 1
	}
	return lo, hi, hi <= lo
}

func oldestFirstWindow(from, to time.Time) (string, string, bool) {
	lo, hi, empty := tickWindow(from, to)
	if empty {
		return "", "", true
	}
	upper := ""
	if hi <= keys.MaxTicks {
		upper = keys.Pad(hi, keys.TicksLength)
	}
	return keys.Pad(lo, keys.TicksLength), upper, false
}

// newestFirstWindow: the ticks lo … hi−1 are the inverted keys
// MaxTicks−(hi−1) … MaxTicks−lo, that is [inv(hi−1), inv(lo−1)).
func newestFirstWindow(from, to time.Time) (string, string, bool) {
	lo, hi, empty := tickWindow(from, to)
	if empty {
		return "", "", true
	}
	upper := ""
	if lo > 0 {
		upper = keys.Pad(keys.MaxTicks-(lo-1), keys.TicksLength)
	}
	return keys.Pad(keys.MaxTicks-(hi-1), keys.TicksLength), upper, false
}

// Custom is a part with the caller's encoding. format must make strings
// that sort as the values do and contain no character a key forbids;
// parse must reverse it.
func Custom[V any](name string, format func(V) (string, error), parse func(string) (V, error)) Part[V] {
	return Part[V]{name: name, format: format, parse: parse}
}

func syntax(fn, s string) error {
	return &keys.KeyError{Func: fn, Rule: keys.RuleSyntax, Value: s, Pos: -1, Part: -1}
}
