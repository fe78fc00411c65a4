//go:build !race

// Allocation counts differ under the race detector, so this test is built
// only without it (a skipped test fails CI).

package keys_test

import (
	"testing"

	"github.com/tablekit/tablekit/keys"
)

// The allocation counts the benchmarks report, as a test: builders make one
// allocation (the key), checks and comparisons none.
func TestAllocations(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("allocation counts differ under coverage instrumentation")
	}
	tests := []struct {
		name string
		want float64
		f    func()
	}{
		{"Pad", 1, func() { sinkString = keys.Pad(123, 8) }},
		{"OrderedInt", 1, func() { sinkString = keys.OrderedInt(-5) }},
		{"InvertedTicks", 1, func() { sinkString = keys.InvertedTicks(benchTime) }},
		{"InvertedTicksSeq", 1, func() { sinkString = keys.InvertedTicksSeq(benchTime, 9) }},
		{"ParseInvertedTicks", 0, func() { sinkTime, sinkErr = keys.ParseInvertedTicks("2519954711999999999") }},
		{"Ticks", 0, func() { sinkInt = int(keys.Ticks(benchTime)) }},
		{"Compound", 1, func() { sinkString = keys.Compound("New York", "a!b", "2012") }},
		{"SplitCompound", 1, func() { sinkParts, sinkErr = keys.SplitCompound("empid 000123 2012") }},
		{"CompoundPrefix", 1, func() { sinkString, sinkString = keys.CompoundPrefix("empid", "000123") }},
		{"PrefixRange", 1, func() { _, sinkString = keys.PrefixRange("email_a") }},
		{"Compare", 0, func() { sinkInt = keys.Compare("a\uFFFF", "a\U00010000") }},
		{"Bucket10", 0, func() { sinkString = keys.Bucket("x", 10) }},
		{"Validate", 0, func() { sinkErr = keys.Validate("email_jonesj@contoso.com") }},
		{"EscapeNoop", 0, func() { sinkString = keys.Escape("empid_000123_2012") }},
		{"Escape", 1, func() { sinkString = keys.Escape("a/b") }},
		{"UnescapeNoop", 0, func() { sinkString, sinkErr = keys.Unescape("empid_000123_2012") }},
	}
	for _, tt := range tests {
		if got := testing.AllocsPerRun(100, tt.f); got != tt.want {
			t.Errorf("%s: %v allocations, want %v", tt.name, got, tt.want)
		}
	}
}
