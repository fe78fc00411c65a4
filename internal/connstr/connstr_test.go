package connstr

import (
	"errors"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in                 string
		table, queue, blob string
		account, key, sas  string
	}{
		{
			in:    "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5==;EndpointSuffix=core.windows.net",
			table: "https://acct.table.core.windows.net/", queue: "https://acct.queue.core.windows.net/", blob: "https://acct.blob.core.windows.net/",
			account: "acct", key: "a2V5==",
		},
		{
			in:    "AccountName=acct;AccountKey=k;EndpointSuffix=core.chinacloudapi.cn",
			table: "https://acct.table.core.chinacloudapi.cn/", queue: "https://acct.queue.core.chinacloudapi.cn/", blob: "https://acct.blob.core.chinacloudapi.cn/",
			account: "acct", key: "k",
		},
		{
			in:    "UseDevelopmentStorage=true",
			table: "http://127.0.0.1:10002/devstoreaccount1/", queue: "http://127.0.0.1:10001/devstoreaccount1/", blob: "http://127.0.0.1:10000/devstoreaccount1/",
			account: DevAccountName, key: DevAccountKey,
		},
		{
			in:    "UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://azurite",
			table: "http://azurite:10002/devstoreaccount1/", queue: "http://azurite:10001/devstoreaccount1/", blob: "http://azurite:10000/devstoreaccount1/",
			account: DevAccountName, key: DevAccountKey,
		},
		{
			in:    "TableEndpoint=https://acct.table.core.windows.net;SharedAccessSignature=?sv=2019-02-02&sig=x",
			table: "https://acct.table.core.windows.net/", sas: "sv=2019-02-02&sig=x",
		},
		{
			in:    " AccountName = acct ; AccountKey = k ; TableEndpoint=http://127.0.0.1:5/acct/ ;",
			table: "http://127.0.0.1:5/acct/", queue: "https://acct.queue.core.windows.net/", blob: "https://acct.blob.core.windows.net/",
			account: "acct", key: "k",
		},
	}
	for _, c := range cases {
		p, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if p.TableEndpoint != c.table || p.QueueEndpoint != c.queue || p.BlobEndpoint != c.blob ||
			p.AccountName != c.account || p.AccountKey != c.key || p.SAS != c.sas {
			t.Errorf("Parse(%q) = %+v", c.in, p)
		}
		// The normal form parses to the same settings.
		again, err := Parse(p.String())
		if err != nil || again.TableEndpoint != p.TableEndpoint || again.AccountKey != p.AccountKey || again.SAS != p.SAS {
			t.Errorf("round trip of %q: %+v, %v", p.String(), again, err)
		}
	}
}

// The SDKs accept every normal form, including the emulator shorthand they
// refuse as given.
func TestNormalizedStringsAreAcceptedBySDKs(t *testing.T) {
	if _, err := aztables.NewServiceClientFromConnectionString("UseDevelopmentStorage=true", nil); err == nil {
		t.Log("aztables now accepts UseDevelopmentStorage=true itself")
	}
	for _, in := range []string{
		"UseDevelopmentStorage=true",
		"AccountName=acct;AccountKey=a2V5",
	} {
		cs, err := Normalize(in)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := aztables.NewServiceClientFromConnectionString(cs, nil); err != nil {
			t.Errorf("aztables refuses %q: %v", cs, err)
		}
		if _, err := azqueue.NewServiceClientFromConnectionString(cs, nil); err != nil {
			t.Errorf("azqueue refuses %q: %v", cs, err)
		}
		if _, err := azblob.NewClientFromConnectionString(cs, nil); err != nil {
			t.Errorf("azblob refuses %q: %v", cs, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{
		"",
		";;",
		"AccountName=acct",
		"AccountKey=k",
		"justtext",
		"AccountName=a;AccountKey=k;accountname=b",
		"UseDevelopmentStorage=false",
		"DefaultEndpointsProtocol=ftp;AccountName=a;AccountKey=k",
		"AccountName=a;AccountKey=k;TableEndpoint=acct.table.core.windows.net",
		"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://a/b",
		"=value;AccountName=a;AccountKey=k",
	} {
		_, err := Parse(in)
		var e *Error
		if !errors.Is(err, ErrMalformed) || !errors.As(err, &e) {
			t.Errorf("Parse(%q) = %v, want a *Error matching ErrMalformed", in, err)
		}
	}
	// The key never appears in an error.
	_, err := Parse("AccountKey=SECRETSECRETSECRET;garbageSECRETSECRET")
	if err == nil || strings.Contains(err.Error(), "SECRETSECRETSECRET") {
		t.Errorf("error leaks the secret: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("UseDevelopmentStorage=true")
	f.Add("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5==;EndpointSuffix=core.windows.net")
	f.Add("TableEndpoint=https://x/;SharedAccessSignature=sv=1&sig=2")
	f.Add("a=b=c;;=;")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		again, err := Parse(p.String())
		if err != nil {
			t.Fatalf("normal form %q of %q does not parse: %v", p.String(), s, err)
		}
		if again != p {
			t.Fatalf("normal form changes settings: %+v vs %+v", again, p)
		}
	})
}
