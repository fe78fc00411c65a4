package tablename

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	valid := []string{"abc", "A12", "logins20140731x9k2", strings.Repeat("a", 63), "Tables1", "tablesx"}
	for _, n := range valid {
		if r := Check(n); r != "" {
			t.Errorf("Check(%q) = %q, want valid", n, r)
		}
	}
	invalid := map[string]string{
		"":                      "3 to 63",
		"ab":                    "3 to 63",
		strings.Repeat("a", 64): "3 to 63",
		"1abc":                  "start with a letter",
		"ab_c":                  `'_'`,
		"ab-c":                  `'-'`,
		"abé":                   "non-ASCII byte 0xc3",
		"tables":                "reserved",
		"TaBleS":                "reserved",
		"a\x00b":                `'\x00'`,
	}
	for n, want := range invalid {
		if r := Check(n); !strings.Contains(r, want) {
			t.Errorf("Check(%q) = %q, want a reason with %q", n, r, want)
		}
	}
}

func TestCheckPrefix(t *testing.T) {
	for _, p := range []string{"a", "logins", "tables", strings.Repeat("a", 40)} {
		if r := CheckPrefix(p, 23); r != "" {
			t.Errorf("CheckPrefix(%q, 23) = %q, want valid", p, r)
		}
	}
	invalid := map[string]string{
		"":                      "empty",
		"1a":                    "start with a letter",
		"a_b":                   `'_'`,
		strings.Repeat("a", 41): "longer than 40",
	}
	for p, want := range invalid {
		if r := CheckPrefix(p, 23); !strings.Contains(r, want) {
			t.Errorf("CheckPrefix(%q, 23) = %q, want a reason with %q", p, r, want)
		}
	}
}

// FuzzCheck compares Check with the rule written out directly.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"abc", "1ab", "tables", "a_b", "", strings.Repeat("z", 63)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		want := len(name) >= 3 && len(name) <= 63 && !strings.EqualFold(name, "tables")
		for i, c := range []byte(name) {
			letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
			digit := '0' <= c && c <= '9'
			if !letter && !(digit && i > 0) {
				want = false
			}
		}
		if got := Check(name) == ""; got != want {
			t.Fatalf("Check(%q) valid = %v, want %v", name, got, want)
		}
	})
}
