package sas

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
)

// The committed corpora under testdata/fuzz run as ordinary tests; run a
// fuzzer with: go test -run '^$' -fuzz '^FuzzParse$' ./entity/sas/

// checkToken asserts what must hold of every token Parse or a Sign accepts:
// its query parses back into the same token, and its string-to-sign has
// exactly the lines of its kind, so that no value spilled into another
// field.
func checkToken(t *testing.T, tok Token) {
	t.Helper()
	back, err := Parse(tok.Query())
	if err != nil {
		t.Fatalf("the query of an accepted token is refused: %v\n%s", err, tok.Query())
	}
	if !reflect.DeepEqual(back, tok) {
		t.Fatalf("round trip\n%#v\nwant\n%#v", back, tok)
	}
	lines := strings.Count(stringToSign("acct", tok), "\n")
	if want := map[Kind]int{TableToken: 11, AccountToken: 9}[tok.Kind]; lines != want {
		t.Fatalf("the string-to-sign of %s has %d newlines, want %d: %q", tok.Query(), lines, want, stringToSign("acct", tok))
	}
}

func FuzzParse(f *testing.F) {
	tables, accounts := loadJSVectors(f)
	for _, v := range append(tables, accounts...) {
		f.Add(v.Token)
	}
	for _, s := range []string{
		"se=2021-09-09T14%3A30%3A00Z&sig=m%2F%2FxhMvxidHaswzZRpyuiHykqnTppPi%2BQ9S5xHMksIQ%3D&sp=r&spr=https&srt=s&ss=t&st=2021-09-08T14%3A30%3A00Z&sv=2019-02-02",
		"sv=2015-04-05&ss=bfqt&srt=sco&sp=rl&se=2015-09-20T08:49Z&sip=168.1.5.60-168.1.5.70&sig=a39%2BYozJhGp6miujGymjRpN8tsrQfLo9Z3i8IRyIpnQ%3d",
		"?sv=2019-02-02&si=p&sip=2001%3Adb8%3A%3A1&st=2024-01-01T00%3A00%3A00.1234567Z&sig=E9GsR%2Fudqc51%2BhRtluBMaIAViaVRHquxi%2FMyWS3wZoA%3D",
		"sv=2019-02-02&tn=Orders&sp=r&se=2030-01-01&sig=E9GsR%2Fudqc51%2BhRtluBMaIAViaVRHquxi%2FMyWS3wZoA%3D&spk=a%0Ab&epk=a",
		"sv=2019-02-02&sp=r&se=2030-01-01&skoid=x&sig=AAAA", "a=%zz", "", "?", "&&&", "sp=r&sp=r",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		tok, err := Parse(query)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || !errors.Is(err, entity.ErrInvalid) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		checkToken(t, tok)
	})
}

// FuzzSignTable signs arbitrary values: they are refused with a
// *FieldError, or signed into a token whose query parses back, whose
// signature verifies, whose string-to-sign has twelve lines, and whose key
// range contains its own bounds.
func FuzzSignTable(f *testing.F) {
	f.Add("Orders", uint8(1), int64(0), int64(1893456000), "", "", "", "", "", "", "")
	f.Add("Tenants", uint8(6), int64(1767225599), int64(1767229199), "10.0.0.1-10.0.0.9", "https", "p1", "contoso", "user42 ", "contoso", "user42 \uffff")
	f.Add("Keys", uint8(15), int64(-62135596800), int64(253402300799), "2001:db8::1", "https,http", "", "O'Brien & Sons", "a+b=c%d", "Zürich 東京", "😀 end")
	f.Add("abc", uint8(0), int64(0), int64(0), "", "", "policy\n", "a\nb", "", "", "")
	f.Fuzz(func(t *testing.T, table string, perms uint8, start, expiry int64, ip, protocol, policy, spk, srk, epk, erk string) {
		v := TableSAS{Table: table, Permissions: Permissions(perms), Protocol: Protocol(protocol), Policy: policy,
			Range: KeyRange{spk, srk, epk, erk}}
		if start != 0 {
			v.Start = time.Unix(start, 0)
		}
		if expiry != 0 {
			v.Expiry = time.Unix(expiry, 0)
		}
		var err error
		if v.IP, err = ParseIPRange(ip); err != nil {
			return
		}
		k := &Key{account: "acct", secret: []byte("fuzz key")}
		tok, err := k.SignTable(v)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		checkToken(t, tok)
		parsed, _ := Parse(tok.Query())
		if k.sign(parsed) != tok.Signature {
			t.Fatalf("the parsed token does not verify")
		}
		r := tok.Range
		if r.StartPK != "" && !r.Contains(r.StartPK, r.StartRK) || r.EndPK != "" && !r.Contains(r.EndPK, r.EndRK) {
			t.Fatalf("%v does not contain its own bounds", r)
		}
	})
}

// FuzzOpen feeds arbitrary connection strings and SAS URLs to the
// functions that read them: no panic, and every refusal is a *FieldError.
func FuzzOpen(f *testing.F) {
	f.Add("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="+devKey+";TableEndpoint=http://127.0.0.1:10002/devstoreaccount1/;",
		"http://127.0.0.1:10002/devstoreaccount1/Orders?sv=2019-02-02&tn=Orders&sp=r&se=2030-01-01&sig=E9GsR%2Fudqc51%2BhRtluBMaIAViaVRHquxi%2FMyWS3wZoA%3D")
	f.Add("AccountName=a;AccountKey=AAAA;EndpointSuffix=core.chinacloudapi.cn", "https://a.table.core.windows.net/?sv=2019-02-02&ss=t&srt=o&sp=r&se=2030-01-01&sig=E9GsR%2Fudqc51%2BhRtluBMaIAViaVRHquxi%2FMyWS3wZoA%3D")
	f.Add("SharedAccessSignature=sv=2019;TableEndpoint=https://x/", "https://x/Orders?sv=2019-02-02&tn=Other&sp=r&se=2030-01-01&sig=E9GsR%2Fudqc51%2BhRtluBMaIAViaVRHquxi%2FMyWS3wZoA%3D")
	f.Add(";;=;", "http://[::1]:80/t?")
	f.Fuzz(func(t *testing.T, connectionString, sasURL string) {
		typed := func(err error) {
			var fe *FieldError
			if err != nil && (!errors.As(err, &fe) || !errors.Is(err, ErrInvalid)) {
				t.Fatalf("untyped error %v", err)
			}
		}
		iss, err := NewIssuerFromConnectionString(connectionString, Config{})
		typed(err)
		if err == nil && !strings.HasSuffix(iss.Endpoint(), "/") {
			t.Fatalf("endpoint %q", iss.Endpoint())
		}
		_, err = OpenTable[entity.DynamicEntity](sasURL, nil)
		typed(err)
		_, err = OpenService(sasURL, nil)
		typed(err)
	})
}
