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
		// An empty endpoint would leave the table's derived, to a host the
		// string did not name.
		"AccountName=devstoreaccount1;AccountKey=a2V5;TableEndpoint=",
		"AccountName=acct;AccountKey=a2V5;EndpointSuffix= ;DefaultEndpointsProtocol=https",
		"AccountName=acct;AccountKey=",
	} {
		_, err := Parse(in)
		var e *Error
		if !errors.Is(err, ErrMalformed) || !errors.As(err, &e) {
			t.Errorf("Parse(%q) = %v, want a *Error matching ErrMalformed", in, err)
		}
	}
	// The key never appears in an error, nor any part of one pasted alone
	// (a base64 key ends in "=", so it reads as a setting named by the
	// key) or into another setting.
	_, err := Parse("AccountKey=SECRETSECRETSECRET;garbageSECRETSECRET")
	if err == nil || strings.Contains(err.Error(), "SECRETSECRETSECRET") {
		t.Errorf("error leaks the secret: %v", err)
	}
	for _, in := range []string{DevAccountKey, "AccountName=" + DevAccountKey + ";AccountKey=a2V5", "DefaultEndpointsProtocol=" + DevAccountKey} {
		_, err := Parse(in)
		if err == nil || strings.Contains(err.Error(), DevAccountKey[:4]) {
			t.Errorf("Parse of a key in the wrong place: %v, want an error without any of the key", err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("UseDevelopmentStorage=true")
	f.Add("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5==;EndpointSuffix=core.windows.net")
	f.Add("TableEndpoint=https://x/;SharedAccessSignature=sv=1&sig=2")
	f.Add("a=b=c;;=;")
	f.Add("UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://[::1]")
	f.Add("AccountName=Team_A;AccountKey=a2V5;TableEndpoint=http://[::1]:10002/Team_A")
	f.Add("AccountName=acct;AccountKey=a2V5;EndpointSuffix=core.windows.net/evil")
	f.Add("AccountName=acct;AccountKey=a2V5;TableEndpoint=https://h.example/?sv=1&sig=c2ln")
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

// TestParseRefusesHostInjection: every setting that chooses a host (the
// account name and suffix of a derived endpoint, an explicit endpoint, the
// emulator's proxy) is checked, so that no value can put another host, a
// path or a query into the URL a request goes to. Each of these was
// accepted before, most of them giving a URL whose host the string did
// not name (AccountName=evil.example/x sent requests to evil.example).
func TestParseRefusesHostInjection(t *testing.T) {
	const key = "AccountKey=a2V5"
	for _, c := range []struct{ in, says string }{
		{"AccountName=evil.example/x;" + key, `AccountName "evil.example/x" has '/'`},
		{"AccountName=a?b;" + key, `has '?'`},
		{"AccountName=a b;" + key, `has ' '`},
		{"AccountName=a@evil.example;" + key, `has '@'`},
		{"AccountName=a:1;" + key, `has ':'`},
		{"AccountName=evil.example;" + key, "not a storage account name"},
		{"AccountName=Acct;" + key, "not a storage account name (lower-case letters and digits only"},
		{"AccountName=ab;" + key, "3 to 24 characters, not 2"},
		{"AccountName=abcdefghijklmnopqrstuvwxy;" + key, "3 to 24 characters, not 25"},
		{"AccountName=acct;" + key + ";EndpointSuffix=core.windows.net/evil", "EndpointSuffix"},
		{"AccountName=acct;" + key + ";EndpointSuffix=core.windows.net:444", "EndpointSuffix"},
		{"AccountName=acct;" + key + ";EndpointSuffix=core.windows.net?x=1", "EndpointSuffix"},
		{"AccountName=acct;" + key + ";EndpointSuffix=evil.example#", "EndpointSuffix"},
		{"AccountName=acct;" + key + ";EndpointSuffix=.core.windows.net", "empty label"},
		{"AccountName=acct;" + key + ";EndpointSuffix=core..net", "empty label"},
		{"AccountName=acct;" + key + ";EndpointSuffix=-core.net", "starts or ends with '-'"},
		{"AccountName=acct;" + key + ";EndpointSuffix=https://core.windows.net", "EndpointSuffix"},
		{"AccountName=acct;" + key + ";TableEndpoint=http://", "has no host"},
		{"AccountName=acct;" + key + ";TableEndpoint=http://[::1", "not a URL"},
		{"AccountName=acct;" + key + ";TableEndpoint=http://ceo.example:badport/", "not a URL"},
		{"AccountName=acct;" + key + ";TableEndpoint=http://h.example:0/", "port \"0\""},
		{"AccountName=acct;" + key + ";TableEndpoint=http://h.example:65536/", "port \"65536\""},
		{"AccountName=acct;" + key + ";TableEndpoint=https://me:pw@h.example/", "user name or password"},
		{"AccountName=acct;" + key + ";TableEndpoint=https://h.example/#frag", "fragment"},
		{"AccountName=acct;" + key + ";TableEndpoint=https://h.example/?", "has a query"},
		{"AccountName=acct;" + key + ";TableEndpoint=https://acct.table.core.windows.net/?sv=1&sig=c2ln", "a SAS goes in SharedAccessSignature"},
		{"AccountName=acct;" + key + ";TableEndpoint=ftp://h.example/", "not an http(s) URL"},
		{"AccountName=acct;" + key + ";TableEndpoint=acct.table.core.windows.net", "not an http(s) URL"},
		{"AccountName=acct;" + key + ";TableEndpoint=http:h.example", "has no host"},
		{"AccountName=acct;" + key + ";TableEndpoint=http://h.example/a b/", "path segment"},
		{"AccountName=acct;" + key + ";TableEndpoint=http://h.example/../x", "path segment"},
		{"AccountName=acct;" + key + ";TableEndpoint=http://h.example//x", "path segment"},
		{"AccountName=acct;" + key + ";TableEndpoint=http://h.example/a%3Fb", "path segment"},
		{"AccountName=acct;" + key + ";TableEndpoint=http://h.example/a%2Fb", "percent-escape"},
		{"AccountName=acct;" + key + ";TableEndpoint=http://[fe80::1%25eth0]/", "IPv6 address without a zone"},
		{"AccountName=acct;" + key + ";TableEndpoint=http://1.2.3/", "neither an IPv4 address nor a DNS name"},
		{"AccountName=acct;" + key + ";TableEndpoint=http://h-.example/", "starts or ends with '-'"},
		{"AccountName=acct;" + key + ";QueueEndpoint=http://a..b/", "empty label"},
		{"AccountName=acct;" + key + ";BlobEndpoint=http://h.example*/", "host has '*'"},
		{"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://localhost:8888", "has a port"},
		{"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://proxy.example/b", "has a path"},
		{"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=proxy.example", "not an http(s) URL"},
		{"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://proxy.example/?x=1", "has a query"},
		{"UseDevelopmentStorage=true;AccountName=other", "takes no setting but DevelopmentStorageProxyUri"},
		{"UseDevelopmentStorage=true;TableEndpoint=http://evil.example/", "takes no setting but DevelopmentStorageProxyUri"},
		{"DevelopmentStorageProxyUri=http://proxy.example;AccountName=acct;" + key, "without UseDevelopmentStorage=true"},
		{"AccountName=acct;" + key + ";TablesEndpoint=http://h.example/", `setting "TablesEndpoint" is not a storage connection string's`},
		{"AccountName=acct;" + key + ";FileEndpoint=http://[::1", "FileEndpoint"},
		{"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=a2V5", "not a storage connection string's"},
		{"TableEndpoint=https://h.example/;SharedAccessSignature=sv=1", "no signature"},
		{"TableEndpoint=https://h.example/;SharedAccessSignature=sv=1&sig=a b", "space"},
		{"TableEndpoint=https://h.example/;SharedAccessSignature=sv=1&sig=a#b", "'#'"},
		{"TableEndpoint=https://h.example/;SharedAccessSignature=sv=%zz&sig=a", "not a query string"},
	} {
		p, err := Parse(c.in)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) = %+v, %v; want an *Error", c.in, p, err)
			continue
		}
		if !strings.Contains(err.Error(), c.says) {
			t.Errorf("Parse(%q): %q, want it to say %q", c.in, err, c.says)
		}
		for _, secret := range []string{"a2V5", "c2ln", "pw"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("Parse(%q): %q repeats %q", c.in, err, secret)
			}
		}
	}
}

// TestParseEndpointForms: what the checks accept, and the URL each gives.
func TestParseEndpointForms(t *testing.T) {
	for _, c := range []struct {
		in                 string
		table, queue, blob string
	}{
		// An IPv6 emulator, a container network's host name, upper case.
		{"AccountName=acct;AccountKey=a2V5;TableEndpoint=http://[::1]:10002/acct;QueueEndpoint=http://azurite_1:10001/acct;BlobEndpoint=HTTPS://Acct.Blob.Example.COM",
			"http://[::1]:10002/acct/", "http://azurite_1:10001/acct/", "https://Acct.Blob.Example.COM/"},
		// A port with nothing after the colon is no port.
		{"AccountName=acct;AccountKey=a2V5;TableEndpoint=https://h.example:/x.y/z~_-/",
			"https://h.example/x.y/z~_-/", "https://acct.queue.core.windows.net/", "https://acct.blob.core.windows.net/"},
		// An Azurite custom account (AZURITE_ACCOUNTS) with explicit
		// endpoints: the services without one have none.
		{"AccountName=My_Account.1;AccountKey=a2V5;TableEndpoint=http://127.0.0.1:10002/My_Account.1",
			"http://127.0.0.1:10002/My_Account.1/", "", ""},
		// The longest storage account name; a suffix of one label.
		{"AccountName=abcdefghijklmnopqrstuvwx;AccountKey=a2V5;EndpointSuffix=localhost;DefaultEndpointsProtocol=http",
			"http://abcdefghijklmnopqrstuvwx.table.localhost/", "http://abcdefghijklmnopqrstuvwx.queue.localhost/", "http://abcdefghijklmnopqrstuvwx.blob.localhost/"},
		// The proxy's scheme and host, the emulator's ports (as the Azure
		// SDKs build them).
		{"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=https://proxy.example/",
			"https://proxy.example:10002/devstoreaccount1/", "https://proxy.example:10001/devstoreaccount1/", "https://proxy.example:10000/devstoreaccount1/"},
		{"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://[::1]",
			"http://[::1]:10002/devstoreaccount1/", "http://[::1]:10001/devstoreaccount1/", "http://[::1]:10000/devstoreaccount1/"},
		{"TableEndpoint=https://acct.table.core.windows.net;SharedAccessSignature=?sv=2019-02-02&sig=c2ln%3D",
			"https://acct.table.core.windows.net/", "", ""},
		// The portal's SAS connection string: FileEndpoint is checked,
		// not used.
		{"BlobEndpoint=https://acct.blob.core.windows.net/;QueueEndpoint=https://acct.queue.core.windows.net/;FileEndpoint=https://acct.file.core.windows.net/;" +
			"TableEndpoint=https://acct.table.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=bfqt&srt=sco&sp=rl&se=2030-01-01T00:00:00Z&spr=https&sig=c2ln",
			"https://acct.table.core.windows.net/", "https://acct.queue.core.windows.net/", "https://acct.blob.core.windows.net/"},
	} {
		p, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if p.TableEndpoint != c.table || p.QueueEndpoint != c.queue || p.BlobEndpoint != c.blob {
			t.Errorf("Parse(%q): endpoints %q %q %q, want %q %q %q", c.in, p.TableEndpoint, p.QueueEndpoint, p.BlobEndpoint, c.table, c.queue, c.blob)
		}
		if again, err := Parse(p.String()); err != nil || again != p {
			t.Errorf("round trip of %q: %+v, %v", p.String(), again, err)
		}
	}
}

// TestErrorsRedact: a URL in an error is shown without its query and user
// information, and a long value of any setting only by its first bytes.
func TestErrorsRedact(t *testing.T) {
	const sig = "U0lHTkFUVVJFU0lHTkFUVVJFU0lHTkFUVVJFU0lHTkE="
	key := strings.Repeat("S0VZ", 22)
	for _, in := range []string{
		"AccountName=acct;AccountKey=" + key + ";TableEndpoint=ftp://h.example/?sv=1&sig=" + sig,
		"AccountName=acct;AccountKey=" + key + ";TableEndpoint=https://h.example:bad/?sv=1&sig=" + sig,
		"AccountName=acct;AccountKey=" + key + ";TableEndpoint=https://user:" + sig + "@h.example/",
		"AccountName=acct;AccountKey=" + key + ";TableEndpoint=https://h.example/#" + sig,
		"AccountName=acct;AccountKey=" + key + ";" + key,
		"AccountName=" + key + ";AccountKey=" + key,
		"AccountName=acct;AccountKey=" + key + ";EndpointSuffix=" + sig,
		"AccountName=acct;AccountKey=" + key + ";DefaultEndpointsProtocol=" + sig,
		"UseDevelopmentStorage=" + sig,
		"TableEndpoint=https://h.example/;SharedAccessSignature=sv=1&sig=" + sig + "#",
		"TableEndpoint=https://h.example/;SharedAccessSignature=%zz" + sig,
		"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://h.example:1/?sig=" + sig,
		key + "=1;" + key + "=2",
	} {
		_, err := Parse(in)
		if err == nil {
			t.Errorf("Parse(%q) accepted", in)
			continue
		}
		for _, secret := range []string{sig, key, sig[:12], key[:12]} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("Parse(%q): %q repeats a secret", in, err)
			}
		}
	}
	for raw, want := range map[string]string{
		"https://h.example/p?sv=1&sig=x":   "https://h.example/p?…",
		"https://u:p@h.example/p#f":        "https://…@h.example/p?…",
		"https://u:p@h.example":            "https://…@h.example",
		"https://h.example/a@b":            "https://h.example/a@b",
		"h.example?sig=x":                  "h.example?…",
		"https://u@x@h.example:1/?sig=abc": "https://…@h.example:1/?…",
	} {
		if got := RedactURL(raw); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

// TestNormalizeNeedsTableEndpoint: a string whose AccountName is an
// emulator's custom one and that sets no TableEndpoint normalizes to an
// error, not to a string from which an SDK would derive a table host from
// the unchecked name.
func TestNormalizeNeedsTableEndpoint(t *testing.T) {
	_, err := Normalize("AccountName=Team_A;AccountKey=a2V5;QueueEndpoint=http://127.0.0.1:10001/Team_A")
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "TableEndpoint") {
		t.Errorf("Normalize without a table endpoint: %v", err)
	}
	if _, err := Normalize("AccountName=Team_A;AccountKey=a2V5;TableEndpoint=http://127.0.0.1:10002/Team_A"); err != nil {
		t.Error(err)
	}
}
