package sas

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/keys"
)

// devKey is Azurite's well-known development account.
const (
	devAccount = "devstoreaccount1"
	devKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

func mustKey(t testing.TB, account, key string) *Key {
	t.Helper()
	k, err := NewKey(account, key)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	if s == "" {
		return time.Time{}
	}
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestStringToSignLines pins the exact string-to-sign of a table SAS with
// every field set, line by line as the REST reference lists them.
func TestStringToSignLines(t *testing.T) {
	k := mustKey(t, "myaccount", devKey)
	tok, err := k.SignTable(TableSAS{
		Table: "MyTable", Permissions: Read | Update, Start: mustTime(t, "2024-05-01T10:00:00+02:00"),
		Expiry: mustTime(t, "2024-05-01T11:30:00.75Z"), IP: IPRange{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.9")},
		Protocol: HTTPS, Policy: "pol1", Range: KeyRange{"a", "b", "c", "d"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"ru",                       // signedpermissions, in the order raud
		"2024-05-01T08:00:00Z",     // signedstart, in UTC
		"2024-05-01T11:30:00Z",     // signedexpiry, to the second
		"/table/myaccount/mytable", // canonicalizedresource, table name in lower case
		"pol1",                     // signedidentifier
		"10.0.0.1-10.0.0.9",        // signedIP
		"https",                    // signedProtocol
		"2019-02-02",               // signedversion
		"a", "b", "c", "d",         // startingPartitionKey, startingRowKey, endingPartitionKey, endingRowKey
	}, "\n")
	if got := stringToSign("myaccount", tok); got != want {
		t.Fatalf("string-to-sign\n%q\nwant\n%q", got, want)
	}
	// The fields that are absent are empty lines, never left out.
	tok, err = k.SignTable(TableSAS{Table: "t12", Permissions: Read, Expiry: mustTime(t, "2030-01-01T00:00:00Z")})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stringToSign("myaccount", tok), "r\n\n2030-01-01T00:00:00Z\n/table/myaccount/t12\n\n\n\n2019-02-02\n\n\n\n"; got != want {
		t.Fatalf("string-to-sign %q, want %q", got, want)
	}
	acct, err := k.SignAccount(AccountSAS{Permissions: AccountRead | AccountList, ResourceTypes: Service | Object, Expiry: mustTime(t, "2030-01-01T00:00:00Z")})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stringToSign("myaccount", acct), "myaccount\nrl\nt\nso\n\n2030-01-01T00:00:00Z\n\n\n2019-02-02\n"; got != want {
		t.Fatalf("account string-to-sign %q, want %q", got, want)
	}
}

// TestPublishedVectors signs the inputs of the vectors published in
// aztables v1.4.1's own tests (TestSASSignatureValues,
// TestGetAccountSASToken) and gets their signatures.
func TestPublishedVectors(t *testing.T) {
	// Table SAS: account "fake-account", key base64("fake-key"), table
	// "fake-table" (a name the service would refuse, so the check is
	// bypassed by signing the token directly).
	k := mustKey(t, "fake-account", base64.StdEncoding.EncodeToString([]byte("fake-key")))
	tok := Token{Kind: TableToken, Version: Version, Table: "fake-table", Permissions: Read, Protocol: HTTPS}
	if err := tok.setCommon(mustTime(t, "2023-11-08T15:04:05Z"), mustTime(t, "2023-11-08T16:04:05Z")); err != nil {
		t.Fatal(err)
	}
	if got, want := k.sign(tok), "WLeRe04Jnm2q7wuetbkWgFDtdWg+iE7RKwUSLbecPjE="; got != want {
		t.Errorf("table SAS signature %s, want %s", got, want)
	}

	// Account SAS, signed through the public API and compared whole.
	k = mustKey(t, "myAccountName", "daaaaaaaaaabbbbbbbbbbcccccccccccccccccccdddddddddddddddddddeeeeeeeeeeefffffffffffggggg==")
	acct, err := k.SignAccount(AccountSAS{Permissions: AccountRead, ResourceTypes: Service, Protocol: HTTPS,
		Start: mustTime(t, "2021-09-08T14:30:00Z"), Expiry: mustTime(t, "2021-09-09T14:30:00Z")})
	if err != nil {
		t.Fatal(err)
	}
	const published = "se=2021-09-09T14%3A30%3A00Z&sig=m%2F%2FxhMvxidHaswzZRpyuiHykqnTppPi%2BQ9S5xHMksIQ%3D&sp=r&spr=https&srt=s&ss=t&st=2021-09-08T14%3A30%3A00Z&sv=2019-02-02"
	sameQuery(t, acct.Query(), published)
	parsed, err := Parse(published)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(parsed, acct) {
		t.Errorf("parsed published token\n%#v\nwant\n%#v", parsed, acct)
	}
}

// sameQuery checks that two query strings carry the same fields with the
// same values, whatever their order and escaping.
func sameQuery(t *testing.T, got, want string) {
	t.Helper()
	g, err := url.ParseQuery(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := url.ParseQuery(want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("query\n%v\nwant\n%v", g, w)
	}
}

// randomTableSAS returns valid signature values with every optional field
// present or not, and keys drawn from an alphabet with spaces, quotes,
// '+', '%', '&', accented, CJK and supplementary characters.
func randomTableSAS(r *rand.Rand) TableSAS {
	alphabet := []string{"a", "Z", "0", " ", "'", "+", "%", "&", "=", "ü", "東", "😀", "\uFFFF", "~"}
	word := func() string {
		var b strings.Builder
		for range 1 + r.IntN(6) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	base := time.Date(2020+r.IntN(10), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), 0, time.UTC)
	v := TableSAS{Table: "T" + strings.Repeat("x", 2+r.IntN(20)), Permissions: Permissions(1 + r.IntN(15)), Expiry: base.Add(time.Duration(1+r.IntN(1000)) * time.Minute)}
	if r.IntN(2) == 0 {
		v.Start = base
	}
	switch r.IntN(3) {
	case 1:
		v.IP = IPRange{Start: netip.AddrFrom4([4]byte{10, 0, 0, byte(r.IntN(100))})}
	case 2:
		v.IP = IPRange{Start: netip.AddrFrom4([4]byte{10, 0, 0, byte(r.IntN(100))}), End: netip.AddrFrom4([4]byte{10, 0, 1, byte(r.IntN(100))})}
	}
	v.Protocol = []Protocol{"", HTTPS, HTTPSOrHTTP}[r.IntN(3)]
	if r.IntN(3) == 0 {
		v.Policy = "policy" + word()
	}
	a, b := word(), word()
	if keys.Compare(b, a) < 0 { // the service's order, not Go's
		a, b = b, a
	}
	switch r.IntN(5) {
	case 1:
		v.Range = Partition(a)
	case 2:
		v.Range = KeyRange{StartPK: a, StartRK: word(), EndPK: b, EndRK: word()}
	case 3:
		v.Range = KeyRange{StartPK: a}
	case 4:
		v.Range = KeyRange{EndPK: b, EndRK: word()}
	}
	if a == b && keys.Compare(v.Range.StartRK, v.Range.EndRK) > 0 && v.Range.EndRK != "" {
		v.Range.StartRK, v.Range.EndRK = v.Range.EndRK, v.Range.StartRK
	}
	return v
}

// TestSameSignatureAsAztables signs many random values here and with
// aztables' SASSignatureValues, which signs correctly: the signatures must
// be equal. aztables' query string lacks the key range (the trap this
// package exists for); the one made here has it.
func TestSameSignatureAsAztables(t *testing.T) {
	cred, err := aztables.NewSharedKeyCredential(devAccount, devKey)
	if err != nil {
		t.Fatal(err)
	}
	k := mustKey(t, devAccount, devKey)
	r := rand.New(rand.NewPCG(1, 2))
	ranged := 0
	for i := range 500 {
		v := randomTableSAS(r)
		ours, err := k.SignTable(v)
		if err != nil {
			t.Fatalf("case %d %+v: %v", i, v, err)
		}
		ipr := aztables.IPRange{}
		if v.IP.Start.IsValid() {
			ipr.Start = net.IP(v.IP.Start.AsSlice())
		}
		if v.IP.End.IsValid() {
			ipr.End = net.IP(v.IP.End.AsSlice())
		}
		theirs, err := aztables.SASSignatureValues{
			Protocol: aztables.SASProtocol(v.Protocol), StartTime: v.Start, ExpiryTime: v.Expiry,
			Permissions: v.Permissions.String(), IPRange: ipr, Identifier: v.Policy, TableName: v.Table,
			StartPartitionKey: v.Range.StartPK, StartRowKey: v.Range.StartRK, EndPartitionKey: v.Range.EndPK, EndRowKey: v.Range.EndRK,
		}.Sign(cred)
		if err != nil {
			t.Fatal(err)
		}
		q, err := url.ParseQuery(theirs)
		if err != nil {
			t.Fatal(err)
		}
		if q.Get("sig") != ours.Signature {
			t.Fatalf("case %d %+v: signature %s, aztables %s", i, v, ours.Signature, q.Get("sig"))
		}
		if !v.Range.IsZero() {
			ranged++
			if q.Has("spk") || q.Has("srk") || q.Has("epk") || q.Has("erk") {
				t.Fatalf("aztables now writes the key range (%s): its trap is fixed, revisit this package's documentation", theirs)
			}
			mine, _ := url.ParseQuery(ours.Query())
			for name, want := range map[string]string{"spk": v.Range.StartPK, "srk": v.Range.StartRK, "epk": v.Range.EndPK, "erk": v.Range.EndRK} {
				if mine.Get(name) != want {
					t.Fatalf("case %d: %s = %q in %s, want %q", i, name, mine.Get(name), ours.Query(), want)
				}
			}
		}
	}
	if ranged < 300 {
		t.Fatalf("only %d of 500 cases had a key range", ranged)
	}
}

// pythonStringToSign is the Python SDK's algorithm (azure-data-tables,
// _TableSharedAccessHelper.add_resource_signature), written out from its
// description rather than from this package: each field's value (or "")
// followed by a newline, the canonical resource "/table/<account>/<table
// lower-cased>" among them, and the final newline removed.
func pythonStringToSign(account string, q url.Values, table string) string {
	s := ""
	for _, f := range []string{"sp", "st", "se"} {
		s += q.Get(f) + "\n"
	}
	s += "/table/" + account + "/" + strings.ToLower(table) + "\n"
	for _, f := range []string{"si", "sip", "spr", "sv", "spk", "srk", "epk", "erk"} {
		s += q.Get(f) + "\n"
	}
	return strings.TrimSuffix(s, "\n")
}

func hmacBase64(key, s string) string {
	raw, _ := base64.StdEncoding.DecodeString(key)
	m := hmac.New(sha256.New, raw)
	m.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// TestPythonAlgorithm recomputes the signature of random tokens from their
// query strings alone with the Python SDK's algorithm.
func TestPythonAlgorithm(t *testing.T) {
	k := mustKey(t, devAccount, devKey)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		v := randomTableSAS(r)
		tok, err := k.SignTable(v)
		if err != nil {
			t.Fatal(err)
		}
		q, err := url.ParseQuery(tok.Query())
		if err != nil {
			t.Fatal(err)
		}
		if got := hmacBase64(devKey, pythonStringToSign(devAccount, q, q.Get("tn"))); got != q.Get("sig") {
			t.Fatalf("case %d %s: the Python algorithm signs %s", i, tok.Query(), got)
		}
	}
}

// jsVectors are tokens made by the JavaScript SDK; see
// testdata/jsvectors.mjs for how.
type jsVector struct {
	Name, Account, Key, Table, Permissions, Start, Expiry, Protocol, Identifier, Token string
	ResourceTypes                                                                      string
	Spk, Srk, Epk, Erk                                                                 string
	IP                                                                                 *struct{ Start, End string }
}

func loadJSVectors(t testing.TB) (table, account []jsVector) {
	data, err := os.ReadFile("testdata/jsvectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Table, Account []jsVector }
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Table) < 10 || len(v.Account) < 3 {
		t.Fatalf("%d table and %d account vectors", len(v.Table), len(v.Account))
	}
	return v.Table, v.Account
}

func (v jsVector) ipRange(t *testing.T) IPRange {
	if v.IP == nil {
		return IPRange{}
	}
	r, err := ParseIPRange(strings.TrimSuffix(v.IP.Start+"-"+v.IP.End, "-"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestJavaScriptSDKVectors signs the inputs of the JavaScript SDK's tokens:
// same signatures and the same query fields, and each of its tokens parses
// into the token made here.
func TestJavaScriptSDKVectors(t *testing.T) {
	tables, accounts := loadJSVectors(t)
	for _, v := range tables {
		t.Run(v.Name, func(t *testing.T) {
			var perms Permissions
			bits, err := parseLetters("sp", v.Permissions, tableLetters)
			if err != nil {
				t.Fatal(err)
			}
			perms = Permissions(bits)
			tok, err := mustKey(t, v.Account, v.Key).SignTable(TableSAS{
				Table: v.Table, Permissions: perms, Start: mustTime(t, v.Start), Expiry: mustTime(t, v.Expiry),
				IP: v.ipRange(t), Protocol: Protocol(v.Protocol), Policy: v.Identifier,
				Range: KeyRange{v.Spk, v.Srk, v.Epk, v.Erk},
			})
			if err != nil {
				t.Fatal(err)
			}
			sameQuery(t, tok.Query(), v.Token)
			parsed, err := Parse(v.Token)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(parsed, tok) {
				t.Errorf("parsed\n%#v\nwant\n%#v", parsed, tok)
			}
		})
	}
	for _, v := range accounts {
		t.Run("account "+v.Name, func(t *testing.T) {
			perms, err := parseLetters("sp", v.Permissions, accountLetters)
			if err != nil {
				t.Fatal(err)
			}
			rt, err := parseLetters("srt", v.ResourceTypes, resourceLetters)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := mustKey(t, v.Account, v.Key).SignAccount(AccountSAS{
				Permissions: AccountPermissions(perms), ResourceTypes: ResourceTypes(rt),
				Start: mustTime(t, v.Start), Expiry: mustTime(t, v.Expiry), IP: v.ipRange(t), Protocol: Protocol(v.Protocol),
			})
			if err != nil {
				t.Fatal(err)
			}
			sameQuery(t, tok.Query(), v.Token)
		})
	}
}

// TestQueryEscaping checks that every field survives any URL reader: a
// space is %20, never '+', and '+', '&', '=', '%' are escaped.
func TestQueryEscaping(t *testing.T) {
	tok, err := mustKey(t, devAccount, devKey).SignTable(TableSAS{
		Table: "Orders", Permissions: Read, Expiry: mustTime(t, "2030-01-01T00:00:00Z"),
		Range: KeyRange{StartPK: "a b", StartRK: "x+y", EndPK: "a&b=c%", EndRK: "ü"},
	})
	if err != nil {
		t.Fatal(err)
	}
	q := tok.Query()
	for _, want := range []string{"spk=a%20b", "srk=x%2By", "epk=a%26b%3Dc%25", "erk=%C3%BC", "tn=Orders", "se=2030-01-01T00%3A00%3A00Z"} {
		if !strings.Contains(q, want) {
			t.Errorf("%s lacks %s", q, want)
		}
	}
	if strings.Contains(q, "+") {
		t.Errorf("%s has a '+'", q)
	}
}

func TestKeyHidesSecret(t *testing.T) {
	k := mustKey(t, devAccount, devKey)
	raw, _ := base64.StdEncoding.DecodeString(devKey)
	bytes := strings.Trim(fmt.Sprint(raw[:3]), "[]") // how %v would print the raw key
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		got := fmt.Sprintf(format, k)
		if strings.Contains(got, devKey[:10]) || strings.Contains(got, string(raw[:6])) || strings.Contains(got, bytes) {
			t.Errorf("%s shows the key: %s", format, got)
		}
		if !strings.Contains(got, devAccount) {
			t.Errorf("%s does not name the account: %s", format, got)
		}
	}
	tok, err := k.SignTable(TableSAS{Table: "Orders", Permissions: Read, Expiry: mustTime(t, "2030-01-01T00:00:00Z")})
	if err != nil {
		t.Fatal(err)
	}
	if s := tok.String(); strings.Contains(s, tok.Signature) || !strings.Contains(s, `table SAS for table "Orders" sp=r se=2030-01-01T00:00:00Z`) {
		t.Errorf("Token.String() = %s", s)
	}
}
