package secondaryindex

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/entityfields"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

type emp struct {
	PartitionKey, RowKey, ETag string
	Email, LastName            string
	Age                        int32
}

func byLast(e *emp) (string, bool)  { return e.LastName, e.LastName != "" }
func byEmail(e *emp) (string, bool) { return strings.ToLower(e.Email), e.Email != "" }

// storedEmp is what New checks emp's Index.Properties against.
func storedEmp(t testing.TB) *entityfields.Stored {
	t.Helper()
	st, err := entityfields.StoredOf(reflect.TypeFor[emp]())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestCompileRefusesBadDeclarations(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Index[emp]
		want string
	}{
		{"empty name", Index[emp]{Key: byLast}, "Name"},
		{"underscore", Index[emp]{Name: "last_name", Key: byLast}, "Name"},
		{"long name", Index[emp]{Name: strings.Repeat("a", 33), Key: byLast}, "Name"},
		{"nil key", Index[emp]{Name: "name"}, "Key"},
		{"bad placement", Index[emp]{Name: "name", Key: byLast, Placement: 7}, "Placement"},
		{"reserved property", Index[emp]{Name: "name", Key: byLast, Properties: []string{"TkPrimaryPK"}}, "Properties"},
		{"key property", Index[emp]{Name: "name", Key: byLast, Properties: []string{"RowKey"}}, "Properties"},
		{"bad property", Index[emp]{Name: "name", Key: byLast, Properties: []string{"a-b"}}, "Properties"},
		{"unknown property", Index[emp]{Name: "name", Key: byLast, Properties: []string{"LastName", "Missing"}}, "Properties"},
	} {
		_, err := compile(0, tc.d, storedEmp(t), nil)
		var de *DeclarationError
		if !errors.As(err, &de) || de.Field != tc.want || !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	ix, err := compile(0, Index[emp]{Name: "name", Key: byLast, Properties: []string{"LastName", "Age", "LastName"}}, storedEmp(t), nil)
	if err != nil || len(ix.props) != 2 || ix.props[0] != "Age" {
		t.Errorf("properties sorted and deduplicated: %v, %v", ix, err)
	}
}

func TestNewRefusesBadSets(t *testing.T) {
	tbl, err := entity.NewTableFromConnectionString[emp]("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;TableEndpoint=http://127.0.0.1:1/devstoreaccount1/", "Emps", nil)
	if err != nil {
		t.Fatal(err)
	}
	email := Index[emp]{Name: "email", Key: byEmail, Unique: true}
	for name, f := range map[string]func() error{
		"nil table": func() error { _, err := New[emp](nil, Config{}, email); return err },
		"no index":  func() error { _, err := New(tbl, Config{}); return err },
		"twice":     func() error { _, err := New(tbl, Config{}, email, email); return err },
		"no processor": func() error {
			_, err := New(tbl, Config{}, Index[emp]{Name: "email", Key: byEmail, Placement: OtherPartition})
			return err
		},
		"prefix clash": func() error { _, err := New(tbl, Config{PrimaryPrefix: "email_x"}, email); return err },
		"bad prefix":   func() error { _, err := New(tbl, Config{PrimaryPrefix: "a/b"}, email); return err },
	} {
		if err := f(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
	s, err := New(tbl, Config{PrimaryPrefix: "empid_"}, email)
	if err != nil {
		t.Fatal(err)
	}
	// Keys that could be taken for an entry's are refused before sending.
	for _, rk := range []string{"email_x", "tablekit.outbox_1", "123", "empid_1/2"} {
		if err := s.validKeys("Sales", rk); !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("primary RowKey %q: %v", rk, err)
		}
	}
	bad := emp{PartitionKey: "Sales", RowKey: "empid_1", Email: "a#b"}
	if err := s.Insert(t.Context(), &bad); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("an email with '#': %v", err)
	}
	var ke *KeyError
	if err := s.Insert(t.Context(), &bad); !errors.As(err, &ke) || ke.Index != "email" {
		t.Errorf("an email with '#': %v", err)
	}
}

func TestEntryKeys(t *testing.T) {
	unique, _ := compile(0, Index[emp]{Name: "email", Key: byEmail, Unique: true}, storedEmp(t), nil)
	other, _ := compile(0, Index[emp]{Name: "name", Key: byLast, Placement: OtherPartition}, storedEmp(t), nil)
	e := emp{Email: "JonesJ@Contoso.com", LastName: "Van Dyke"}
	epk, erk, v, ok, err := unique.entryKeys(&e, "Sales", "empid_000123")
	if err != nil || !ok || epk != "Sales" || erk != "email_jonesj@contoso.com" || v != "jonesj@contoso.com" {
		t.Errorf("unique: %q %q %q %v %v", epk, erk, v, ok, err)
	}
	epk, erk, _, _, _ = other.entryKeys(&e, "Sales", "empid_000123")
	if epk != "name_Sales" || erk != "name_Van! Dyke empid_000123" {
		t.Errorf("non-unique in another partition: %q %q", epk, erk)
	}
	if pk, ok := other.ownerPartition(epk); !ok || pk != "Sales" {
		t.Errorf("owner partition of %q: %q %v", epk, pk, ok)
	}
	if v, _, rk, ok := other.parseEntryRK(erk); !ok || v != "Van Dyke" || rk != "empid_000123" {
		t.Errorf("parse %q: %q %q %v", erk, v, rk, ok)
	}
	// The exact range holds every entry of the value and nothing else;
	// the prefix range every value that starts with the prefix.
	from, to := other.exactRange("Van Dyke")
	in := func(k string) bool { return keys.Compare(from, k) <= 0 && keys.Compare(k, to) < 0 }
	if !in(erk) || !in(other.entryRK("Van Dyke", "", "z")) || in(other.entryRK("Van Dyker", "", "a")) || in(other.entryRK("Van", "", "a")) {
		t.Errorf("exact range [%q, %q)", from, to)
	}
	from, to = other.prefixRange("Van D")
	if !in(erk) || !in(other.entryRK("Van Dam", "", "a")) || in(other.entryRK("Van", "", "a")) || in(other.entryRK("Vanes", "", "a")) {
		t.Errorf("prefix range [%q, %q)", from, to)
	}
	from, to = unique.prefixRange("jo")
	if !in("email_jones") || in("email_k") || in("emailjo") {
		t.Errorf("unique prefix range [%q, %q)", from, to)
	}
}

func TestCopiesAndFingerprints(t *testing.T) {
	// An open type (an extra map) may name a property its fields do not.
	open := entityfields.Open()
	name, _ := compile(0, Index[emp]{Name: "name", Key: byLast, Properties: []string{"LastName", "Missing"}}, open, nil)
	all, _ := compile(1, Index[emp]{Name: "email", Key: byEmail}, open, nil)
	v, err := indexset.IntendVersion[emp](context.Background(), &indexset.TablePrimaries[emp]{}, &emp{PartitionKey: "Sales", RowKey: "empid_1", Email: "a@b", LastName: "Jones", Age: 3})
	if err != nil {
		t.Fatal(err)
	}
	v.Props[propWriteToken] = "never copied"
	c := name.copyOf(&v, "Sales", "name_x", "Sales", "empid_1")
	if len(c.Properties) != 3 || c.Properties["LastName"] != "Jones" || c.Properties[PropPrimaryRK] != "empid_1" {
		t.Errorf("subset copy: %v", c.Properties)
	}
	c = all.copyOf(&v, "Sales", "email_a@b", "Sales", "empid_1")
	if len(c.Properties) != 5 || c.Properties[propWriteToken] != nil {
		t.Errorf("full copy: %v", c.Properties)
	}
	// As stored: the service may return a whole Double as an integer, and
	// an entry carries a write token and a claim.
	stored := clone(c)
	stored.Properties[propWriteToken] = "x"
	stored.Properties[PropClaim] = ClaimInsert
	if !sameCopy(c, stored) {
		t.Error("a token and a claim make a copy differ")
	}
	stored.Properties["Age"] = int64(3)
	if sameCopy(c, stored) {
		t.Error("an Int32 and an Int64 compare equal")
	}
	stored.Properties["Age"] = float64(3) // a whole Double read back as Int32 elsewhere
	if c.Properties["Age"] = int32(3); !sameCopy(c, stored) {
		t.Error("a whole Double and the Int32 of the same number differ")
	}
	p := map[string]any{"A": float64(2), "B": "x"}
	q := map[string]any{"A": int32(2), "B": "x", propWriteToken: "t"}
	if fingerprint(p, []string{"A", "B"}, "pk", "rk") != fingerprint(q, entryNames(q, nil), "pk", "rk") {
		t.Error("fingerprints of one copy differ")
	}
	if fingerprint(p, []string{"A", "B"}, "pk", "rk") == fingerprint(p, []string{"A", "B"}, "pk", "rk2") {
		t.Error("the primary's keys are not in the fingerprint")
	}
	if fingerprint(map[string]any{"A": "bc"}, []string{"A"}, "", "") == fingerprint(map[string]any{"A": "b", "c": ""}, []string{"A", "c"}, "", "") {
		t.Error("values run into each other")
	}
}

func TestTokens(t *testing.T) {
	for _, tok := range []token{{}, {PK: "Sales"}, {PK: "Sales", After: true}, {PK: "", After: true}, {Phase: 1, Page: "abc"}, {Phase: 2}, {Phase: 2, Ix: 1, Bucket: "07", Page: "abc"}} {
		got, err := parseToken(tok.String())
		if err != nil || got != tok {
			t.Errorf("%+v: round trip %+v, %v", tok, got, err)
		}
	}
	for _, bad := range []string{"x", "si1.!", "si1." + "e30x", token{Phase: 3}.String(), token{Phase: 1, Ix: 1}.String(), token{Phase: 2, Ix: -1}.String(), token{Phase: 2, PK: "a"}.String(), "si1.eyJ4IjoxfQ", "si1.eyJoIjoxLCJwIjoiYSJ9"} {
		if _, err := parseToken(bad); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
