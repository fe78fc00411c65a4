package sas

import (
	"errors"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
)

// TestRoundTrip parses the query of random signed tokens back into the same
// token.
func TestRoundTrip(t *testing.T) {
	k := mustKey(t, devAccount, devKey)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 300 {
		tok, err := k.SignTable(randomTableSAS(r))
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse("?" + tok.Query())
		if err != nil {
			t.Fatalf("case %d: %s: %v", i, tok.Query(), err)
		}
		if !reflect.DeepEqual(back, tok) {
			t.Fatalf("case %d: parsed\n%#v\nwant\n%#v", i, back, tok)
		}
	}
}

// TestParseRefuses lists malformed tokens, each refused naming its field.
func TestParseRefuses(t *testing.T) {
	const sig = "sig=E9GsR%2Fudqc51%2BhRtluBMaIAViaVRHquxi%2FMyWS3wZoA%3D"
	const ok = "sv=2019-02-02&tn=Orders&sp=r&se=2030-01-01T00%3A00%3A00Z&" + sig
	if _, err := Parse(ok); err != nil {
		t.Fatalf("the base token is refused: %v", err)
	}
	for _, c := range []struct{ query, field string }{
		{"sv=2019-02-02&sp=r&se=2030-01-01&" + sig + "&foo=1", "foo"},
		{ok + "&skoid=abc", "skoid"},
		{ok + "&sr=t", "sr"},
		{ok + "&sp=r", "sp"},
		{ok + "&si=", "si"},
		{strings.Replace(ok, "sv=2019-02-02", "sv=2014-02-14", 1), "sv"},
		{strings.Replace(ok, "sv=2019-02-02", "sv=latest", 1), "sv"},
		{strings.Replace(ok, "sv=2019-02-02&", "", 1), "sv"},
		{strings.Replace(ok, "&"+sig, "", 1), "sig"},
		{strings.Replace(ok, sig, "sig=c2hvcnQ%3D", 1), "sig"},
		{strings.Replace(ok, sig, "sig=not*base64", 1), "sig"},
		{strings.Replace(ok, "se=2030-01-01T00%3A00%3A00Z", "se=2030-01-01T00%3A00%3A00%2B01%3A00", 1), "se"},
		{strings.Replace(ok, "se=2030-01-01T00%3A00%3A00Z", "se=tomorrow", 1), "se"},
		{ok + "&st=2030-01-01T00%3A00%3A00Z", "se"},
		{ok + "&sip=10.0.0.300", "sip"},
		{ok + "&sip=10.0.0.9-10.0.0.1", "sip"},
		{ok + "&sip=10.0.0.1-%3A%3A1", "sip"},
		{ok + "&spr=http", "spr"},
		{strings.Replace(ok, "sp=r", "sp=ar", 1), "sp"},
		{strings.Replace(ok, "sp=r", "sp=rr", 1), "sp"},
		{strings.Replace(ok, "sp=r", "sp=rw", 1), "sp"},
		{strings.Replace(ok, "&sp=r", "", 1), "sp"},
		{strings.Replace(ok, "&se=2030-01-01T00%3A00%3A00Z", "", 1), "sp"},
		{strings.Replace(ok, "tn=Orders", "tn=my-table", 1), "tn"},
		{ok + "&si=" + strings.Repeat("x", 65), "si"},
		{ok + "&si=a%0Ab", "si"},
		{ok + "&srk=a", "srk"},
		{ok + "&erk=a", "erk"},
		{ok + "&spk=b&epk=a", "spk"},
		{ok + "&spk=a&srk=2&epk=a&erk=1", "spk"},
		{ok + "&spk=a%2Fb", "spk"},
		{ok + "&epk=a%01", "epk"},
		// account tokens
		{"sv=2019-02-02&ss=t&sp=r&se=2030-01-01&" + sig, "srt"},
		{"sv=2019-02-02&srt=o&sp=r&se=2030-01-01&" + sig, "ss"},
		{"sv=2019-02-02&ss=tx&srt=o&sp=r&se=2030-01-01&" + sig, "ss"},
		{"sv=2019-02-02&ss=tt&srt=o&sp=r&se=2030-01-01&" + sig, "ss"},
		{"sv=2019-02-02&ss=t&srt=o&se=2030-01-01&" + sig, "sp"},
		{"sv=2019-02-02&ss=t&srt=o&sp=r&" + sig, "se"},
		{"sv=2019-02-02&ss=t&srt=x&sp=r&se=2030-01-01&" + sig, "srt"},
		{"sv=2019-02-02&ss=t&srt=o&sp=rp&se=2030-01-01&" + sig, "sp"},
		{"sv=2019-02-02&ss=t&srt=o&sp=r&se=2030-01-01&si=p&" + sig, "si"},
		{"sv=2019-02-02&ss=t&srt=o&sp=r&se=2030-01-01&tn=Orders&" + sig, "tn"},
		{"sv=2019-02-02&ss=t&srt=o&sp=r&se=2030-01-01&spk=a&" + sig, "spk"},
		{"a=%zz", "query"},
	} {
		_, err := Parse(c.query)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("Parse(%s) = %v, want a *FieldError for %s", c.query, err, c.field)
			continue
		}
		if !errors.Is(err, ErrInvalid) || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("Parse(%s): %v matches neither ErrInvalid nor entity.ErrInvalid", c.query, err)
		}
	}
}

// TestParseOtherForms reads forms other tools write: minutes-only and
// date-only times, IPv6, fractional seconds, a single-address range.
func TestParseOtherForms(t *testing.T) {
	tok, err := Parse("sv=2015-04-05&ss=bfqt&srt=sco&sp=rl&se=2015-09-20T08:49Z&st=2015-09-19&sip=168.1.5.60-168.1.5.70&sig=a39%2BYozJhGp6miujGymjRpN8tsrQfLo9Z3i8IRyIpnQ%3d")
	if err != nil {
		t.Fatal(err)
	}
	if tok.Kind != AccountToken || tok.AccountPermissions != AccountRead|AccountList || tok.ResourceTypes != Service|Container|Object ||
		!tok.Expiry.Equal(time.Date(2015, 9, 20, 8, 49, 0, 0, time.UTC)) || !tok.Start.Equal(time.Date(2015, 9, 19, 0, 0, 0, 0, time.UTC)) ||
		tok.IP.String() != "168.1.5.60-168.1.5.70" || tok.Services != "bfqt" {
		t.Errorf("the REST reference's account SAS example reads as %#v", tok)
	}
	tok, err = Parse("sv=2019-02-02&si=p&sip=2001%3Adb8%3A%3A1&st=2024-01-01T00%3A00%3A00.1234567Z&sig=E9GsR%2Fudqc51%2BhRtluBMaIAViaVRHquxi%2FMyWS3wZoA%3D")
	if err != nil {
		t.Fatal(err)
	}
	if tok.Kind != TableToken || tok.IP.Start != netip.MustParseAddr("2001:db8::1") || tok.Start.Nanosecond() != 123456700 || tok.Policy != "p" {
		t.Errorf("got %#v", tok)
	}
}

// TestSignRefuses lists signature values that are refused before signing.
func TestSignRefuses(t *testing.T) {
	k := mustKey(t, devAccount, devKey)
	exp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	good := TableSAS{Table: "Orders", Permissions: Read, Expiry: exp}
	if _, err := k.SignTable(good); err != nil {
		t.Fatal(err)
	}
	with := func(f func(*TableSAS)) TableSAS { v := good; f(&v); return v }
	for _, c := range []struct {
		name  string
		v     TableSAS
		field string
	}{
		{"short table name", with(func(v *TableSAS) { v.Table = "ab" }), "Table"},
		{"table name with a dash", with(func(v *TableSAS) { v.Table = "my-table" }), "Table"},
		{"table name starting with a digit", with(func(v *TableSAS) { v.Table = "1abc" }), "Table"},
		{"no permissions", with(func(v *TableSAS) { v.Permissions = 0 }), "sp"},
		{"unknown permission bits", with(func(v *TableSAS) { v.Permissions = 1 << 5 }), "sp"},
		{"no expiry", with(func(v *TableSAS) { v.Expiry = time.Time{} }), "sp"},
		{"expiry before start", with(func(v *TableSAS) { v.Start = exp.Add(time.Hour) }), "se"},
		{"expiry equal to start within the second", with(func(v *TableSAS) { v.Start = exp.Add(500 * time.Millisecond) }), "se"},
		{"year 10000", with(func(v *TableSAS) { v.Expiry = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }), "se"},
		{"http only", with(func(v *TableSAS) { v.Protocol = "http" }), "spr"},
		{"IP range without start", with(func(v *TableSAS) { v.IP = IPRange{End: netip.MustParseAddr("10.0.0.1")} }), "sip"},
		{"IP range backwards", with(func(v *TableSAS) {
			v.IP = IPRange{netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.1")}
		}), "sip"},
		{"policy id too long", with(func(v *TableSAS) { v.Policy = strings.Repeat("é", 65) }), "si"},
		{"policy id with a newline", with(func(v *TableSAS) { v.Policy = "a\nb" }), "si"},
		{"policy id not UTF-8", with(func(v *TableSAS) { v.Policy = "a\xffb" }), "si"},
		{"forbidden key character", with(func(v *TableSAS) { v.Range = Partition("a/b") }), "spk"},
		{"newline in a key", with(func(v *TableSAS) { v.Range = Rows("a", "x\ny", "z") }), "srk"},
		{"key too long", with(func(v *TableSAS) { v.Range = Partition(strings.Repeat("k", keys.MaxKeyLength+1)) }), "spk"},
		{"row bound without partition bound", with(func(v *TableSAS) { v.Range = KeyRange{EndRK: "x"} }), "erk"},
		{"empty partition key", with(func(v *TableSAS) { v.Range = Rows("", "a", "b") }), "srk"},
		{"empty range", with(func(v *TableSAS) { v.Range = KeyRange{StartPK: "b", EndPK: "a"} }), "spk"},
		{"empty range in UTF-16 order", with(func(v *TableSAS) { v.Range = KeyRange{StartPK: "\uffff", EndPK: "😀"} }), "spk"},
	} {
		_, err := k.SignTable(c.v)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("%s: %v, want a *FieldError for %s", c.name, err, c.field)
		}
	}
	// A policy may stand in for permissions and expiry.
	if _, err := k.SignTable(TableSAS{Table: "Orders", Policy: "readers"}); err != nil {
		t.Errorf("policy only: %v", err)
	}
	for _, v := range []AccountSAS{
		{ResourceTypes: Object, Expiry: exp},
		{Permissions: 1 << 7, ResourceTypes: Object, Expiry: exp},
		{Permissions: AccountRead, Expiry: exp},
		{Permissions: AccountRead, ResourceTypes: 1 << 3, Expiry: exp},
		{Permissions: AccountRead, ResourceTypes: Object},
		{Permissions: AccountRead, ResourceTypes: Object, Expiry: exp, Start: exp},
		{Permissions: AccountRead, ResourceTypes: Object, Expiry: exp, Protocol: "ftp"},
	} {
		if _, err := k.SignAccount(v); !errors.Is(err, ErrInvalid) {
			t.Errorf("SignAccount(%+v) = %v, want ErrInvalid", v, err)
		}
	}
	for _, c := range [][2]string{{"", devKey}, {"a b", devKey}, {"acct/x", devKey}, {"acct", ""}, {"acct", "not base64!"}} {
		if _, err := NewKey(c[0], c[1]); !errors.Is(err, ErrInvalid) {
			t.Errorf("NewKey(%q, %q) = %v, want ErrInvalid", c[0], c[1], err)
		}
	}
}

// TestContainsDefinition checks Contains against the REST reference's table
// of range constraints, bound by bound, inclusive at both ends.
func TestContainsDefinition(t *testing.T) {
	for _, c := range []struct {
		r      KeyRange
		pk, rk string
		want   bool
	}{
		{KeyRange{}, "anything", "at all", true},
		{KeyRange{StartPK: "m"}, "m", "", true},
		{KeyRange{StartPK: "m"}, "l", "zzz", false},
		{KeyRange{StartPK: "m"}, "ma", "", true},
		{KeyRange{EndPK: "m"}, "m", "zzz", true},
		{KeyRange{EndPK: "m"}, "ma", "", false},
		{KeyRange{StartPK: "m", StartRK: "5"}, "m", "5", true},
		{KeyRange{StartPK: "m", StartRK: "5"}, "m", "49", false},
		{KeyRange{StartPK: "m", StartRK: "5"}, "n", "0", true},
		{KeyRange{StartPK: "m", StartRK: "5"}, "l", "9", false},
		{KeyRange{EndPK: "m", EndRK: "5"}, "m", "5", true},
		{KeyRange{EndPK: "m", EndRK: "5"}, "m", "50", false},
		{KeyRange{EndPK: "m", EndRK: "5"}, "l", "9", true},
		{KeyRange{EndPK: "m", EndRK: "5"}, "n", "0", false},
		{Partition("alice"), "alice", "", true},
		{Partition("alice"), "alice", "anything", true},
		{Partition("alice"), "alicia", "x", false},
		{Partition("alice"), "alic", "x", false},
		{Rows("t", "u1 ", "u1 \uffff"), "t", "u1 order7", true},
		{Rows("t", "u1 ", "u1 \uffff"), "t", "u1", false},
		{Rows("t", "u1 ", "u1 \uffff"), "t", "u10 x", false},
		{Rows("t", "a", "b"), "t", "a😀", true},       // U+1F600 is D83D DE00 in UTF-16, below U+FFFF...
		{Rows("t", "a", "a\uffff"), "t", "a😀", true}, // ...so a supplementary character is inside a prefix range
		{Rows("t", "a", "a\ue000"), "t", "a😀", true}, // and sorts below U+E000, unlike in Go's byte order
	} {
		if got := c.r.Contains(c.pk, c.rk); got != c.want {
			t.Errorf("%v.Contains(%q, %q) = %v, want %v", c.r, c.pk, c.rk, got, c.want)
		}
	}
}

// TestRowPrefix checks that RowPrefix's range holds exactly the keys that
// start with the prefix (but for the documented U+FFFF exception), for
// compound keys and awkward characters alike.
func TestRowPrefix(t *testing.T) {
	prefixes := []string{keys.Compound("user1") + " ", "u", "a😀", "é", "\ue000", strings.Repeat("p", keys.MaxKeyLength)}
	alphabet := []string{"", " ", "!", "1", "u", "user1", "ser", "😀", "\ue000", "\uffff", "é", "p", "~"}
	r := rand.New(rand.NewPCG(7, 8))
	for _, prefix := range prefixes {
		rng := RowPrefix("t", prefix)
		if err := rng.check(); err != nil {
			t.Fatalf("RowPrefix(%q): %v", prefix, err)
		}
		for range 2000 {
			var b strings.Builder
			if r.IntN(2) == 0 {
				b.WriteString(prefix)
			}
			for range r.IntN(4) {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			key := b.String()
			if keys.UTF16Len(key) > keys.MaxKeyLength {
				continue
			}
			want := strings.HasPrefix(key, prefix)
			if rest, ok := strings.CutPrefix(key, prefix+"\uffff"); ok && rest != "" {
				want = false // the documented exception
			}
			if got := rng.Contains("t", key); got != want {
				t.Fatalf("RowPrefix(%q).Contains(%q) = %v, want %v", prefix, key, got, want)
			}
			if rng.Contains("u", key) || rng.Contains("s", key) {
				t.Fatalf("RowPrefix(%q) reaches another partition", prefix)
			}
		}
	}
	if RowPrefix("t", "") != Partition("t") {
		t.Error(`RowPrefix(pk, "") is not the partition`)
	}
}
