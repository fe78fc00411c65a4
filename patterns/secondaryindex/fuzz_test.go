package secondaryindex

import (
	"testing"

	"github.com/tablekit/tablekit/keys"
)

// FuzzToken: any string either is refused as a token or reads as one that
// writes back to a token reading the same.
func FuzzToken(f *testing.F) {
	for _, t := range []token{{}, {PK: "Sales"}, {PK: "Sales", After: true}, {Phase: 1, Page: "p"}} {
		f.Add(t.String())
	}
	f.Add("si1.")
	f.Add("si1.eyJoIjoyfQ")
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := parseToken(s)
		if err != nil {
			return
		}
		again, err := parseToken(tok.String())
		if err != nil || again != tok {
			t.Fatalf("%q read as %+v, which writes %q, read back as %+v, %v", s, tok, tok.String(), again, err)
		}
	})
}

// FuzzEntryKey: an entry's RowKey splits back into the value and the
// primary's RowKey it was made of, unique or not, and any RowKey either
// splits or is refused, without a panic.
func FuzzEntryKey(f *testing.F) {
	f.Add("jonesj@contoso.com", "empid_000123", true)
	f.Add("Van Dyke", "empid_000123", false)
	f.Add("a!! b", "x y", false)
	f.Add("", "", false)
	f.Fuzz(func(t *testing.T, value, rk string, unique bool) {
		for _, pl := range []Placement{OtherPartition, TableWide} {
			ix := &index[struct{}]{Index: Index[struct{}]{Name: "ix", Unique: unique, Placement: pl}, prefix: "ix_", buckets: 16}
			erk := ix.entryRK(value, "pk "+rk, rk)
			v, p, r, ok := ix.parseEntryRK(erk)
			if !ok || v != value || (!unique && r != rk) || (!unique && pl == TableWide && p != "pk "+rk) {
				t.Fatalf("%v: %q %q made %q, which splits into %q %q %q %v", pl, value, rk, erk, v, p, r, ok)
			}
			_, _, _, _ = ix.parseEntryRK(value) // any string
		}
		ix := &index[struct{}]{Index: Index[struct{}]{Name: "ix", Unique: unique}, prefix: "ix_"}
		erk := ix.entryRK(value, "", rk)
		if keys.Validate(value) == nil && keys.Validate(rk) == nil && len(value)+len(rk) < 400 {
			if err := keys.Validate(erk); err != nil {
				t.Fatalf("valid parts made an invalid key %q: %v", erk, err)
			}
		}
	})
}
