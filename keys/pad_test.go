package keys_test

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/tablekit/tablekit/keys"
)

func TestPad(t *testing.T) {
	tests := []struct {
		n     int64
		width int
		want  string
	}{
		{123, 8, "00000123"},
		{0, 1, "0"},
		{0, 5, "00000"},
		{7, 0, "7"},
		{7, -3, "7"},
		{123456, 4, "123456"}, // never truncated
		{99999999, 8, "99999999"},
		{math.MaxInt64, 19, "9223372036854775807"},
		{math.MaxInt64, 22, "0009223372036854775807"},
		{-42, 5, "-00042"},
		{-42, 1, "-42"},
		{math.MinInt64, 20, "-09223372036854775808"},
		{math.MinInt64, 0, "-9223372036854775808"},
	}
	for _, tt := range tests {
		if got := keys.Pad(tt.n, tt.width); got != tt.want {
			t.Errorf("Pad(%d, %d) = %q, want %q", tt.n, tt.width, got, tt.want)
		}
	}
	// Widths are clamped to MaxKeyLength.
	if got := keys.Pad(1, 1<<40); len(got) != keys.MaxKeyLength || got[len(got)-2:] != "01" {
		t.Errorf("Pad(1, 1<<40) has length %d (want %d) and ends %q", len(got), keys.MaxKeyLength, got[len(got)-2:])
	}
	if got := keys.Pad(5, 300); len(got) != 300 {
		t.Errorf("Pad(5, 300) has length %d", len(got))
	}
	if got := string(keys.AppendPad([]byte("x="), 5, 3)); got != "x=005" {
		t.Errorf("AppendPad = %q", got)
	}
}

// Property: numbers padded to the same width sort as their values, and the
// key parses back.
func TestPadOrder(t *testing.T) {
	r := newRand(1)
	for range 20000 {
		width := 1 + r.IntN(19)
		limit := int64(math.MaxInt64)
		if width < 19 {
			limit = int64(math.Pow10(width))
		}
		a, b := r.Int64N(limit), r.Int64N(limit)
		if r.IntN(4) == 0 {
			b = a + int64(r.IntN(3)) - 1
			b = max(0, min(b, limit-1))
		}
		ka, kb := keys.Pad(a, width), keys.Pad(b, width)
		if len(ka) != width || len(kb) != width {
			t.Fatalf("Pad(%d|%d, %d) = %q, %q: wrong width", a, b, width, ka, kb)
		}
		if sign(int(cmpInt(a, b))) != sign(keys.Compare(ka, kb)) || (ka < kb) != (a < b) {
			t.Fatalf("order: %d vs %d gave %q vs %q", a, b, ka, kb)
		}
		if v, err := strconv.ParseInt(ka, 10, 64); err != nil || v != a {
			t.Fatalf("Pad(%d, %d) = %q parses as %d, %v", a, width, ka, v, err)
		}
	}
}

func cmpInt(a, b int64) int64 {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestPadChecked(t *testing.T) {
	if got, err := keys.PadChecked(123, 8); got != "00000123" || err != nil {
		t.Errorf("PadChecked(123, 8) = %q, %v", got, err)
	}
	if got, err := keys.PadChecked(99999999, 8); got != "99999999" || err != nil {
		t.Errorf("PadChecked(99999999, 8) = %q, %v", got, err)
	}
	tests := []struct {
		n           int64
		width       int
		rule        keys.Rule
		got, limit  int
		description string
	}{
		{100000000, 8, keys.RuleTooWide, 9, 8, "nine digits in eight"},
		{math.MaxInt64, 18, keys.RuleTooWide, 19, 18, "MaxInt64 in 18"},
		{-1, 8, keys.RuleNegative, 0, 0, "negative"},
		{1, 0, keys.RuleWidth, 0, keys.MaxKeyLength, "width 0"},
		{1, keys.MaxKeyLength + 1, keys.RuleWidth, keys.MaxKeyLength + 1, keys.MaxKeyLength, "width too large"},
	}
	for _, tt := range tests {
		got, err := keys.PadChecked(tt.n, tt.width)
		var ke *keys.KeyError
		if got != "" || !errors.Is(err, keys.ErrInvalidKey) || !errors.As(err, &ke) {
			t.Errorf("%s: PadChecked(%d, %d) = %q, %v; want an ErrInvalidKey", tt.description, tt.n, tt.width, got, err)
			continue
		}
		if ke.Rule != tt.rule || ke.Got != tt.got || ke.Limit != tt.limit || ke.Func != "PadChecked" || ke.Value != strconv.FormatInt(tt.n, 10) {
			t.Errorf("%s: error %+v; want rule %v, got %d, limit %d", tt.description, *ke, tt.rule, tt.got, tt.limit)
		}
	}
}

func TestOrderedInt(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{math.MinInt64, "-0000000000000000000"},
		{math.MinInt64 + 1, "-0000000000000000001"},
		{-123, "-9223372036854775685"},
		{-1, "-9223372036854775807"},
		{0, "00000000000000000000"},
		{123, "00000000000000000123"},
		{math.MaxInt64, "09223372036854775807"},
	}
	var encoded []string
	for _, tt := range tests {
		got := keys.OrderedInt(tt.n)
		if got != tt.want {
			t.Errorf("OrderedInt(%d) = %q, want %q", tt.n, got, tt.want)
		}
		if len(got) != keys.OrderedIntLength {
			t.Errorf("OrderedInt(%d) has length %d", tt.n, len(got))
		}
		if back, err := keys.ParseOrderedInt(got); back != tt.n || err != nil {
			t.Errorf("ParseOrderedInt(%q) = %d, %v", got, back, err)
		}
		encoded = append(encoded, got)
	}
	if !slices.IsSorted(encoded) {
		t.Errorf("boundary values are not sorted: %q", encoded)
	}

	// Property: order and round trip over random values of both signs.
	r := newRand(2)
	for range 20000 {
		a, b := int64(r.Uint64()), int64(r.Uint64())
		if r.IntN(3) == 0 {
			a, b = a>>r.IntN(64), b>>r.IntN(64) // small magnitudes too
		}
		ka, kb := keys.OrderedInt(a), keys.OrderedInt(b)
		if (ka < kb) != (a < b) || (ka == kb) != (a == b) {
			t.Fatalf("OrderedInt order: %d vs %d gave %q vs %q", a, b, ka, kb)
		}
		if back, err := keys.ParseOrderedInt(ka); back != a || err != nil {
			t.Fatalf("ParseOrderedInt(%q) = %d, %v; want %d", ka, back, err, a)
		}
	}
	if got := string(keys.AppendOrderedInt([]byte("n"), -1)); got != "n-9223372036854775807" {
		t.Errorf("AppendOrderedInt = %q", got)
	}
}

func TestParseOrderedIntErrors(t *testing.T) {
	for _, s := range []string{
		"",
		"123",
		"0000000000000000012",            // 19 characters
		"000000000000000000123",          // 21
		"10000000000000000000",           // above MaxInt64
		"09223372036854775808",           // MaxInt64 + 1
		"-9223372036854775808",           // 2^63 after the sign
		"-999999999999999999a",           // not a digit
		"+0000000000000000001",           // no plus sign
		"0000000000000000000-",           // sign at the end
		"00000000000000000 12",           // space
		"0000000000000000001\u0660"[:20], // cut multibyte
	} {
		v, err := keys.ParseOrderedInt(s)
		var ke *keys.KeyError
		if err == nil || !errors.As(err, &ke) || ke.Rule != keys.RuleSyntax || v != 0 {
			t.Errorf("ParseOrderedInt(%q) = %d, %v; want a syntax error", s, v, err)
		}
	}
}

func TestJoin(t *testing.T) {
	got, err := keys.Join("_", "empid", "000123", "2012")
	if got != "empid_000123_2012" || err != nil {
		t.Errorf("Join = %q, %v", got, err)
	}
	if got, err := keys.Join("_"); got != "" || err != nil {
		t.Errorf("Join with no parts = %q, %v", got, err)
	}
	if got, err := keys.Join("--", "a", "", "b"); got != "a----b" || err != nil {
		t.Errorf("Join(--) = %q, %v", got, err)
	}
	_, err = keys.Join("_", "empid", "jones_j", "2012")
	var ke *keys.KeyError
	if !errors.As(err, &ke) || !errors.Is(err, keys.ErrInvalidKey) {
		t.Fatalf("Join with the separator in a part: %v", err)
	}
	if ke.Rule != keys.RuleSeparator || ke.Part != 1 || ke.Pos != 5 || ke.Char != '_' || ke.Value != "jones_j" {
		t.Errorf("error fields: %+v", *ke)
	}
	if _, err := keys.Join("", "a", "b"); !errors.Is(err, keys.ErrInvalidKey) {
		t.Errorf("Join with an empty separator: %v", err)
	}
	// A part that runs into a separator of several characters would give
	// ("a_", "b") the key of ("a", "_b"): it is refused; the key splits
	// back only as the latter.
	if got, err := keys.Join("__", "a", "_b"); got != "a___b" || err != nil {
		t.Errorf("Join(__, a, _b) = %q, %v", got, err)
	}
	for _, parts := range [][]string{{"a_", "b"}, {"x", "y_", "z"}} {
		if got, err := keys.Join("__", parts...); !errors.Is(err, keys.ErrInvalidKey) {
			t.Errorf("Join(__, %q) = %q, %v; want an error", parts, got, err)
		}
	}
	if got, err := keys.Join("__", "a-", "b"); got != "a-__b" || err != nil {
		t.Errorf("Join(__, a-, b) = %q, %v", got, err)
	}
}
