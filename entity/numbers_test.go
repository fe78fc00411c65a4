package entity_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
)

// TestUnannotatedIntegers reads numbers at the extremes, without
// annotation and annotated Edm.Double, into a property bag and into a
// float64 field: an integer in Int32 range is an Int32, any other number
// a Double — never another number than the one written. An integer that
// no Double holds exactly (2^53+1, Int64's maximum) is a *DecodeError that
// says so; the shortest spelling of a Double (9223372036854776000 for
// 2^63, as JavaScript and Azurite write it) is that Double.
func TestUnannotatedIntegers(t *testing.T) {
	for _, c := range []struct {
		lit  string
		want any // int32, float64, or nil for a refusal
	}{
		{"2147483647", int32(math.MaxInt32)},
		{"-2147483648", int32(math.MinInt32)},
		{"2147483648", float64(1 << 31)},
		{"-2147483649", float64(-1<<31 - 1)},
		{"999999999999999", float64(999999999999999)},
		{"9007199254740992", float64(1 << 53)},
		{"-9007199254740992", float64(-1 << 53)},
		{"9007199254740993", nil},
		{"9007199254740994", float64(1<<53 + 2)},
		{"123456789012345680", float64(123456789012345680)}, // Azurite's spelling of a Double
		{"123456789012345678", nil},
		{"9223372036854775807", nil},
		{"9223372036854775808", float64(1 << 63)},
		{"9223372036854776000", float64(1 << 63)},
		{"-9223372036854775808", float64(-1 << 63)},
		{"-9223372036854775809", nil},
		{"18446744073709551615", nil},
		{"100000000000000000000", float64(1e20)},
		{"1" + strings.Repeat("0", 400), nil},    // beyond a Double
		{"9007199254740993.0", float64(1 << 53)}, // a fraction: a Double as written, rounded
		{"9.223372036854775807e18", float64(1 << 63)},
	} {
		for _, annotated := range []bool{false, true} {
			body := `{"PartitionKey":"p","RowKey":"r","N":` + c.lit + `}`
			if annotated {
				body = `{"PartitionKey":"p","RowKey":"r","N@odata.type":"Edm.Double","N":` + c.lit + `}`
			}
			var d entity.DynamicEntity
			err := entity.Unmarshal([]byte(body), &d)
			var f struct {
				PartitionKey, RowKey string
				N                    float64
			}
			ferr := entity.Unmarshal([]byte(body), &f)
			want := c.want
			if annotated {
				if n, ok := want.(int32); ok {
					want = float64(n)
				}
			}
			if want == nil {
				var de *entity.DecodeError
				for _, e := range []error{err, ferr} {
					if !errors.As(e, &de) || !errors.Is(e, entity.ErrDecode) || de.Property != "N" || !strings.Contains(e.Error(), "no Double holds exactly") {
						t.Errorf("%s (annotated %v): %v, want a *DecodeError about N that no Double holds it exactly", c.lit, annotated, e)
					}
				}
				continue
			}
			if err != nil || d.Properties["N"] != want {
				t.Errorf("%s (annotated %v): bag %#v, %v, want %#v", c.lit, annotated, d.Properties["N"], err, want)
			}
			wantF := want
			if n, ok := want.(int32); ok {
				wantF = float64(n)
			}
			if ferr != nil || f.N != wantF {
				t.Errorf("%s (annotated %v): float64 field %v, %v, want %v", c.lit, annotated, f.N, ferr, wantF)
			}
		}
	}
}
