package ident

import (
	"strings"
	"testing"
)

// TestCheck: the service's rule, a C# identifier that is an XML name, of at
// most 255 UTF-16 code units. OData keywords are valid names.
func TestCheck(t *testing.T) {
	valid := []string{
		"Name", "_x", "Ünïcödé", "日本語", "a1_b2", "x\u0301", strings.Repeat("n", 255), strings.Repeat("日", 255),
		// OData keywords, which the service and other SDKs store.
		"and", "or", "not", "eq", "ne", "gt", "ge", "lt", "le", "true", "false", "null", "INF", "NaN", "AND", "Eq", "Null", "inf",
		// C# keywords are names too (the REST rule is the identifier syntax).
		"class", "int",
		// Formatting characters that C# and XML both allow.
		"a\ufeffb", "a\u200cb", "a\u0600b",
		"a\u203fb", "Ⅻ", "Ａ１", // connector punctuation, letter number, fullwidth letter and digit
	}
	for _, n := range valid {
		if r := Check(n); r != "" {
			t.Errorf("Check(%q) = %q, want valid", n, r)
		}
	}
	invalid := map[string]string{
		"":                       "empty",
		"1abc":                   "start",
		"\u0301x":                "start",
		"has space":              "not allowed",
		"a-b":                    "not allowed",
		"a.b":                    "not allowed",
		"a@b":                    "not allowed",
		"a\u00a0b":               "not allowed", // no-break space
		"a\u202eb":               "XML name",    // Cf, but XML excludes U+200E–U+206F
		"a\u200bb":               "XML name",    // zero-width space
		"a\u00adb":               "XML name",    // soft hyphen: Cf, below U+00C0
		"µ":                      "XML name",    // a letter XML excludes
		"aª":                     "XML name",
		"a\u2054b":               "XML name", // connector punctuation XML excludes
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

// TestCheckFilter: a filter refuses, besides invalid names, the names the
// grammar would read as keywords and those with formatting characters, and
// says that the name cannot be referenced.
func TestCheckFilter(t *testing.T) {
	for _, n := range []string{"Name", "andy", "X", "datetime", "PartitionKey", "日本語"} {
		if r := CheckFilter(n); r != "" {
			t.Errorf("CheckFilter(%q) = %q, want ok", n, r)
		}
	}
	for n, want := range map[string]string{
		"and": "OData keyword", "AND": "OData keyword", "true": "OData keyword", "Null": "OData keyword",
		"INF": "OData keyword", "nan": "OData keyword", "le": "OData keyword",
		"a\ufeffb": "formatting character", "a\u200cb": "formatting character",
		"a b": "not allowed", "µ": "XML name",
	} {
		r := CheckFilter(n)
		if !strings.Contains(r, want) {
			t.Errorf("CheckFilter(%q) = %q, want a reason with %q", n, r, want)
		}
		if Check(n) == "" && !strings.Contains(r, "cannot reference") {
			t.Errorf("CheckFilter(%q) = %q: a stored name must be refused as one a filter cannot reference", n, r)
		}
	}
}

// FuzzCheck: every name a filter accepts is valid for the service, neither
// panics, and a valid name is never refused by a filter for a reason other
// than a keyword or a formatting character.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"Name", "and", "a\ufeffb", "µ", "1a", "", "a\u202eb", "日本語"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		svc, flt := Check(name), CheckFilter(name)
		if flt == "" && svc != "" {
			t.Fatalf("%q: filter accepts a name the service refuses (%s)", name, svc)
		}
		if svc == "" && flt != "" && !strings.Contains(flt, "cannot reference") {
			t.Fatalf("%q: valid name refused by the filter with %q", name, flt)
		}
	})
}
