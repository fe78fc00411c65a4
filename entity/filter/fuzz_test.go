package filter

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzStringLiteral: any valid UTF-8 string renders into a literal that the
// reference reader unescapes back to the input, consuming the whole literal
// (the quote never closes early); invalid UTF-8 is refused. The same string
// used as a comparison value, inside a larger filter, leaves the token
// structure of the filter unchanged.
func FuzzStringLiteral(f *testing.F) {
	for _, s := range []string{"", "'", "''", "a'b", "' or 1 eq 1 or '", "') or (RowKey ne '", "\x00", "日本", "\uffff", "\U0010ffff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lit, err := String(s).Literal()
		if !utf8.ValidString(s) {
			if err == nil {
				t.Fatalf("invalid UTF-8 %q accepted as %q", s, lit)
			}
			return
		}
		if err != nil {
			t.Fatalf("String(%q): %v", s, err)
		}
		got, n, err := readStringLiteral(lit)
		if err != nil {
			t.Fatalf("literal %q of %q does not read back: %v", lit, s, err)
		}
		if n != len(lit) {
			t.Fatalf("literal %q of %q closes early at byte %d of %d", lit, s, n, len(lit))
		}
		if got != s {
			t.Fatalf("literal %q reads back as %q, want %q", lit, got, s)
		}
		if len(lit) != len(s)+strings.Count(s, "'")+2 {
			t.Fatalf("literal %q of %q has unexpected length", lit, s)
		}

		f, err := PK(s).And(Eq("Name", s).Or(Not(Ge("RowKey", s)))).Build()
		if err != nil {
			t.Fatal(err)
		}
		toks, err := tokenize(f)
		if err != nil {
			t.Fatalf("filter %q does not tokenize: %v", f, err)
		}
		want := []token{
			{tokIdent, "PartitionKey"}, {tokIdent, "eq"}, {tokString, s}, {tokIdent, "and"},
			{tokOpen, "("}, {tokIdent, "Name"}, {tokIdent, "eq"}, {tokString, s}, {tokIdent, "or"},
			{tokIdent, "not"}, {tokOpen, "("}, {tokIdent, "RowKey"}, {tokIdent, "ge"}, {tokString, s},
			{tokClose, ")"}, {tokClose, ")"},
		}
		if len(toks) != len(want) {
			t.Fatalf("filter %q: %d tokens, want %d", f, len(toks), len(want))
		}
		for i := range want {
			if toks[i] != want[i] {
				t.Fatalf("filter %q: token %d = %+v, want %+v", f, i, toks[i], want[i])
			}
		}
	})
}

// FuzzRowKeyPrefix: the prefix range holds the prefix and the prefix
// followed by the largest code units, and excludes the successor.
func FuzzRowKeyPrefix(f *testing.F) {
	for _, s := range []string{"", "a", "a\uffff", "\U0010ffff", "a\ud7ff", "\U000103ff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if !utf8.ValidString(p) {
			if _, err := RowKeyPrefix(p).Build(); err == nil {
				t.Fatalf("invalid UTF-8 prefix %q accepted", p)
			}
			return
		}
		next, ok := prefixSuccessor(p)
		if !ok {
			if strings.Trim(p, "\uffff") != "" {
				t.Fatalf("no successor for %q", p)
			}
			return
		}
		if !utf8.ValidString(next) {
			t.Fatalf("successor of %q is not valid UTF-8: %q", p, next)
		}
		for _, s := range []string{p, p + "\uffff", p + "\U0010ffff", p + "\uffff\uffff", p + "\x00"} {
			if compareUTF16(s, next) >= 0 {
				t.Fatalf("prefix %q: %q is not below next %q", p, s, next)
			}
		}
		if cmpUnits(p, next) >= 0 || strings.HasPrefix(next, p) {
			t.Fatalf("prefix %q: next %q is not a proper upper bound", p, next)
		}
		if compareUTF16(p, next) != cmpUnits(p, next) {
			t.Fatalf("compareUTF16 disagrees with code units on %q, %q", p, next)
		}
		pl := PK("a").And(RowKeyPrefix(p)).Plan()
		if pl.Kind != Range || pl.From == nil || pl.From.Value != p || pl.To == nil || pl.To.Value != next || len(pl.Warnings) != 0 {
			t.Fatalf("plan of prefix %q: %+v", p, pl)
		}
	})
}
