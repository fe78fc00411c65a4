package keys_test

import (
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
)

// The design guide's own examples.
func TestGuideExamples(t *testing.T) {
	// §6.7: 2014-07-31T18:00:00Z, by hand.
	// Days from 1970-01-01 to 2014-01-01: 44 years with 11 leap days
	// (1972 … 2012) = 44*365 + 11 = 16071; 2014-07-31 is day 212 of the
	// year (31+28+31+30+31+30+31), index 211: 16282 days. Unix seconds:
	// 16282*86400 + 18*3600 = 1406829600. Days from 0001-01-01 to
	// 1970-01-01: 719162, i.e. 62135596800 s. Ticks: (1406829600 +
	// 62135596800) * 10^7 = 635424264000000000. Inverted:
	// 3155378975999999999 - 635424264000000000 = 2519954711999999999.
	logTime := time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC)

	join := func(sep string, parts ...string) string {
		s, err := keys.Join(sep, parts...)
		if err != nil {
			t.Fatalf("Join: %v", err)
		}
		return s
	}
	first := func(a, _ string) string { return a }
	second := func(_, b string) string { return b }

	tests := []struct {
		name, got, want string
	}{
		{"§2 Pad(123, 8)", keys.Pad(123, 8), "00000123"},
		{"§6.1 secondary index key", join("_", "empid", keys.Pad(223, 6)), "empid_000223"},
		{"§6.6 compound key", join("_", "empid", keys.Pad(123, 6), "2012"), "empid_000123_2012"},
		{"§6.1 range from", first(keys.PrefixRange("email_a")), "email_a"},
		{"§6.1 range to", second(keys.PrefixRange("email_a")), "email_b"},
		{"§6.6 range from", first(keys.PrefixRange("empid_000123")), "empid_000123"},
		{"§6.6 range to", second(keys.PrefixRange("empid_000123")), "empid_000124"},
		{"§2 range filter", build(filter.RowKeyRange("S", "T")), "RowKey ge 'S' and RowKey lt 'T'"},
		{"§6.7 ticks", keys.TicksKey(logTime), "0635424264000000000"},
		{"§6.7 inverted ticks", keys.InvertedTicks(logTime), "2519954711999999999"},
		{"§6.7 inverted ticks of DateTime.MinValue", keys.InvertedTicks(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)), "3155378975999999999"},
		{"§6.7 inverted ticks of DateTime.MaxValue", keys.InvertedTicks(time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)), "0000000000000000000"},
		{"§6.12 bucket", keys.Bucket("employee-000123", 100), "93"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}

	// .NET's DateTime.UnixEpoch.Ticks.
	if got := keys.Ticks(time.Unix(0, 0)); got != 621355968000000000 {
		t.Errorf("Ticks(Unix epoch) = %d, want 621355968000000000", got)
	}
	// And back again (§6.7 "and back again").
	back, err := keys.ParseInvertedTicks("2519954711999999999")
	if err != nil || !back.Equal(logTime) || back.Location() != time.UTC {
		t.Errorf("ParseInvertedTicks = %v, %v; want %v in UTC", back, err, logTime)
	}
}

// build is the $filter text of f, or the error's text.
func build(f filter.Expr) string {
	s, err := f.Build()
	if err != nil {
		return "error: " + err.Error()
	}
	return s
}
