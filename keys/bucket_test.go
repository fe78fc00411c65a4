package keys_test

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/tablekit/tablekit/keys"
)

// Golden values, computed independently (FNV-1a 64 and fmix64 in Python). They must never change: buckets are stored in keys.
func TestBucketGolden(t *testing.T) {
	tests := []struct {
		value string
		n     int
		want  string
	}{
		// FNV-1a 0xfa4e516c677222c4, mixed 0xf8c0d4fa6b938531.
		{"employee-000123", 100, "93"},
		// FNV-1a 0xcbf29ce484222325 (the offset basis), mixed 0xefd01f60ba992926.
		{"", 10, "2"},
		// FNV-1a 0xaf63dc4c8601ec8c, mixed 0x82a2a958a9bece5b.
		{"a", 16, "11"},
		// FNV-1a 0x773f2473fde48117, mixed 0xc606630fe7238572.
		{"Sales", 7, "1"},
		// FNV-1a 0x32c6d7a54d35dacb, mixed 0xa39532c7ab051e8d.
		{"user-42", 1000, "453"},
		// FNV-1a 0xfeff073875020288, mixed 0xda89b0991f06f386.
		{"\U0001F600", 3, "0"},
		{"anything", 1, "0"},
		{"anything", 0, "0"},  // n < 1 is one bucket
		{"anything", -5, "0"}, // n < 1 is one bucket
	}
	for _, tt := range tests {
		if got := keys.Bucket(tt.value, tt.n); got != tt.want {
			t.Errorf("Bucket(%q, %d) = %q, want %q", tt.value, tt.n, got, tt.want)
		}
	}
}

func TestBucketWidthAndRange(t *testing.T) {
	for _, n := range []int{1, 2, 9, 10, 11, 16, 99, 100, 101, 1000, 1 << 20} {
		ids := slices.Collect(keys.Buckets(n))
		if len(ids) != n {
			t.Fatalf("Buckets(%d) has %d ids", n, len(ids))
		}
		width := len(fmt.Sprint(n - 1))
		if !slices.IsSorted(ids) {
			t.Errorf("Buckets(%d) is not sorted", n)
		}
		step := max(1, n/5000)
		for i := 0; i < n; i += step {
			if id := ids[i]; id != fmt.Sprintf("%0*d", width, i) {
				t.Fatalf("Buckets(%d)[%d] = %q", n, i, id)
			}
		}
		if last := ids[n-1]; last != fmt.Sprint(n-1) {
			t.Fatalf("the last of Buckets(%d) is %q", n, last)
		}
		for i := range 2000 {
			b := keys.Bucket(fmt.Sprint("value-", i), n)
			if _, ok := slices.BinarySearch(ids, b); !ok {
				t.Fatalf("Bucket(value-%d, %d) = %q is not among Buckets(%d)", i, n, b, n)
			}
		}
	}
	if ids := slices.Collect(keys.Buckets(0)); !slices.Equal(ids, []string{"0"}) {
		t.Errorf("Buckets(0) = %q", ids)
	}
	if ids := slices.Collect(keys.Buckets(-3)); !slices.Equal(ids, []string{"0"}) {
		t.Errorf("Buckets(-3) = %q", ids)
	}
	// Stopping early.
	var first []string
	for id := range keys.Buckets(1000) {
		first = append(first, id)
		if len(first) == 3 {
			break
		}
	}
	if !slices.Equal(first, []string{"000", "001", "002"}) {
		t.Errorf("first three of Buckets(1000) = %q", first)
	}
}

func TestBucketChecked(t *testing.T) {
	if got, err := keys.BucketChecked("employee-000123", 100); got != "93" || err != nil {
		t.Errorf("BucketChecked = %q, %v", got, err)
	}
	for _, n := range []int{0, -1, -1 << 62} {
		got, err := keys.BucketChecked("x", n)
		var ke *keys.KeyError
		if got != "" || !errors.As(err, &ke) || ke.Rule != keys.RuleBucketCount || ke.Got != n || !errors.Is(err, keys.ErrInvalidKey) {
			t.Errorf("BucketChecked(x, %d) = %q, %v", n, got, err)
		}
	}
}

// Uniformity: sequential ids and similar strings spread evenly, for powers
// of two (where unmixed FNV-1a mod n would use only the low bits of each
// byte) and other counts. The
// chi-square statistic of 100,000 values must stay below the 99.9th
// percentile of its distribution; the inputs are fixed, so the test is
// deterministic.
func TestBucketUniform(t *testing.T) {
	inputs := map[string]func(i int) string{
		"sequential": func(i int) string { return fmt.Sprintf("user%06d", i) },
		"high bits":  func(i int) string { return string(rune('a'+i%16)) + string(rune('q'+i/16%8)) + fmt.Sprint(i/128) },
		"random":     nil,
	}
	r := newRand(30)
	for name, gen := range inputs {
		// The same 100,000 values for every count of buckets.
		const total = 100000
		values := make([]string, total)
		for i := range values {
			if gen == nil {
				values[i] = strconv.FormatUint(r.Uint64(), 16)
			} else {
				values[i] = gen(i)
			}
		}
		for _, n := range []int{2, 7, 10, 16, 64, 100, 256} {
			counts := make([]int, n)
			for _, v := range values {
				b, err := strconv.Atoi(keys.Bucket(v, n))
				if err != nil || b < 0 || b >= n {
					t.Fatalf("Bucket(%q, %d) = %q", v, n, keys.Bucket(v, n))
				}
				counts[b]++
			}
			expected := float64(total) / float64(n)
			chi := 0.0
			for _, c := range counts {
				d := float64(c) - expected
				chi += d * d / expected
			}
			// 99.9th percentile of chi-square with k = n-1 degrees of
			// freedom, Wilson–Hilferty approximation, z = 3.09.
			k := float64(n - 1)
			limit := k * cube(1-2/(9*k)+3.09*sqrt(2/(9*k)))
			if chi > limit {
				t.Errorf("%s, n=%d: chi-square %.1f above %.1f; counts %v", name, n, chi, limit, counts)
			}
		}
	}
}

func cube(x float64) float64 { return x * x * x }

func sqrt(x float64) float64 {
	z := x
	for range 50 {
		z = (z + x/z) / 2
	}
	return z
}
