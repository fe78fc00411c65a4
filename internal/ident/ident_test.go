package ident

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	valid := []string{"Name", "_x", "Ünïcödé", "日本語", "a1_b2", "x\u0301", strings.Repeat("n", 255), strings.Repeat("日", 255)}
	for _, n := range valid {
		if r := Check(n); r != "" {
			t.Errorf("Check(%q) = %q, want valid", n, r)
		}
	}
	invalid := map[string]string{
		"":                       "empty",
		"1abc":                   "start",
		"has space":              "not allowed",
		"a-b":                    "not allowed",
		"a\ufeffb":               "not allowed", // Cf: JavaScript trims it
		"a\u202eb":               "not allowed", // bidi override
		"true":                   "keyword",
		"NaN":                    "keyword",
		"Eq":                     "keyword",
		strings.Repeat("n", 256): "longer",
		strings.Repeat("😀", 128): "longer", // 256 UTF-16 code units
		"a\xffb":                 "UTF-8",
	}
	for n, want := range invalid {
		if r := Check(n); !strings.Contains(r, want) {
			t.Errorf("Check(%q) = %q, want a reason with %q", n, r, want)
		}
	}
}
