package compound_test

import (
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/compound"
)

// FuzzParse reads arbitrary RowKeys with the guide's relation and with a
// relation of escaped strings: never a panic, and a key that parses is the
// key its ids make, so every key has one reading.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"empid 000123 2012", "empid 000123", "empid 000123 2012 1", "empid  2012", "empid 0001x3 2012", "a!", "a!!b c", "New! York a b", "", " ", "~~FF x"} {
		f.Add(s)
	}
	ints, err := compound.New(&entity.Table[Review]{}, guideKeys())
	if err != nil {
		f.Fatal(err)
	}
	texts, err := compound.New(&entity.Table[Review]{}, compound.Config[string, string]{Parent: compound.Escaped(), Child: compound.Escaped()})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if p, c, err := ints.Parse(s); err == nil {
			if k, err := ints.Key(p, c); err != nil || k != s {
				t.Fatalf("%q parsed to %d, %d, whose key is %q (%v)", s, p, c, k, err)
			}
			from, to, _ := ints.Range(p)
			if keys.Compare(from, s) > 0 || keys.Compare(s, to) >= 0 {
				t.Fatalf("%q is outside the range of its parent %d", s, p)
			}
		}
		if p, c, err := texts.Parse(s); err == nil {
			if k, err := texts.Key(p, c); err != nil || k != s {
				t.Fatalf("%q parsed to %q, %q, whose key is %q (%v)", s, p, c, k, err)
			}
		}
	})
}
