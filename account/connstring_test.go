package account_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/entity"
)

// This file checks that a connection string chooses no host it does not
// name: every value that goes into a URL is checked before any request.

// TestConnectionStringChoosesNoHost: the inputs that used to be accepted
// and sent requests to a host, path or query the string did not configure
// (AccountName=evil.example/x went to host evil.example, path
// /x.table.core.windows.net/…, signed SharedKeyLite evil.example/x) are
// each a *ConfigError matching entity.ErrInvalid, before any request, and
// repeat no key or signature.
func TestConnectionStringChoosesNoHost(t *testing.T) {
	const key = "AccountKey=U0VDUkVUS0VZU0VDUkVUS0VZ"
	const sig = "U0lHTkFUVVJFU0lHTkFUVVJFU0lHTkFUVVJFU0lHTkE="
	for _, c := range []struct{ cs, says string }{
		{"AccountName=evil.example/x;" + key, "AccountName"},
		{"AccountName=acct?x=1;" + key, "AccountName"},
		{"AccountName=acct x;" + key, "AccountName"},
		{"AccountName=evil.example;" + key, "not a storage account name"},
		{"AccountName=acct;" + key + ";EndpointSuffix=core.windows.net/evil", "EndpointSuffix"},
		{"AccountName=acct;" + key + ";EndpointSuffix=evil.example:443", "EndpointSuffix"},
		{"AccountName=acct;" + key + ";TableEndpoint=http://", "TableEndpoint"},
		{"AccountName=acct;" + key + ";TableEndpoint=http://[::1", "TableEndpoint"},
		{"AccountName=acct;" + key + ";TableEndpoint=http://ceo.example:badport/", "TableEndpoint"},
		{"AccountName=acct;" + key + ";QueueEndpoint=http://ceo.example:70000/", "port"},
		{"AccountName=acct;" + key + ";BlobEndpoint=https://user:pw@acct.blob.core.windows.net/", "user name or password"},
		{"AccountName=acct;" + key + ";TableEndpoint=https://acct.table.core.windows.net/?sv=1&sig=" + sig, "SharedAccessSignature"},
		{"AccountName=acct;" + key + ";TableEndpoint=ftp://acct.table.core.windows.net/?sv=1&sig=" + sig, "not an http(s) URL"},
		{"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://localhost:8888", "emulator's ports"},
		{"UseDevelopmentStorage=true;TableEndpoint=http://evil.example/", "UseDevelopmentStorage"},
		{"AccountName=acct;SharedAccessSignature=sv=1&sig=" + sig + "#x", "SharedAccessSignature"},
	} {
		opts, rec := recorded()
		acct, err := account.NewFromConnectionString(c.cs, opts)
		var ce *account.ConfigError
		if acct != nil || !errors.As(err, &ce) || !errors.Is(err, entity.ErrInvalid) || ce.Field != account.FieldConnectionString {
			got := ""
			if acct != nil {
				got = fmt.Sprintf("%+v", acct.Endpoints())
			}
			t.Errorf("%s: %s %v; want a *ConfigError for the connection string", c.cs, got, err)
			continue
		}
		if !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %q, want it to say %q", c.cs, err, c.says)
		}
		for _, secret := range []string{"U0VDUkVUS0VZ", sig[:12], "pw@"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%s: %q repeats a secret", c.cs, err)
			}
		}
		if len(rec.reqs) != 0 {
			t.Errorf("%s: %d requests sent", c.cs, len(rec.reqs))
		}
	}
}

// TestEmulatorProxyAndCustomAccount: DevelopmentStorageProxyUri gives the
// proxy's scheme and host on the emulator's ports, as the Azure SDKs
// build it; an Azurite custom account (any name of letters, digits, '-',
// '_' and '.') works with explicit endpoints, and a service without one
// says why no endpoint was derived from the name.
func TestEmulatorProxyAndCustomAccount(t *testing.T) {
	opts, rec := recorded()
	acct, err := account.NewFromConnectionString("UseDevelopmentStorage=true;DevelopmentStorageProxyUri=https://proxy.example", opts)
	if err != nil {
		t.Fatal(err)
	}
	s := sendEach(t, acct, rec)
	if got := hostPath(s.table); got != "https://proxy.example:10002/devstoreaccount1/orders(PartitionKey='p',RowKey='r')" {
		t.Errorf("table request through the proxy to %s", got)
	}
	if got := hostPath(s.blob); got != "https://proxy.example:10000/devstoreaccount1/photos" {
		t.Errorf("blob request through the proxy to %s", got)
	}

	opts, rec = recorded()
	acct, err = account.NewFromConnectionString("AccountName=Team_A;AccountKey=a2V5a2V5;TableEndpoint=http://127.0.0.1:10002/Team_A;QueueEndpoint=http://127.0.0.1:10001/Team_A", opts)
	if err != nil {
		t.Fatal(err)
	}
	s = sendEach(t, acct, rec)
	if got := hostPath(s.table); got != "http://127.0.0.1:10002/Team_A/orders(PartitionKey='p',RowKey='r')" {
		t.Errorf("table request to %s", got)
	}
	if auth := s.table.Header.Get("Authorization"); !strings.HasPrefix(auth, "SharedKeyLite Team_A:") {
		t.Errorf("Authorization %q, want the custom account's", auth)
	}
	_, err = acct.BlobService()
	var ee *account.EndpointError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "not a storage account name") || !strings.Contains(err.Error(), "BlobEndpoint") {
		t.Errorf("BlobService of a custom account without BlobEndpoint: %v", err)
	}
}

// FuzzNewFromConnectionString: for any input, (i) NewFromConnectionString
// does not panic and gives an account or a *ConfigError; (ii) an
// account's every endpoint has the host the string configured — an
// explicit endpoint's host, ACCOUNT.SERVICE.SUFFIX, or the emulator's
// (127.0.0.1 or the proxy's host, on ports 10000 to 10002) — as read by
// an independent reading of the string here, and its clients send there;
// (iii) no error text (Error, %+v, %#v) contains the AccountKey's value.
// Seeds: internal/connstr's committed corpus, this package's
// (testdata/fuzz/FuzzNewFromConnectionString: the forms a host was once
// injected by) and the forms below.
func FuzzNewFromConnectionString(f *testing.F) {
	dir := filepath.Join("..", "internal", "connstr", "testdata", "fuzz", "FuzzParse")
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		f.Fatalf("internal/connstr's seed corpus: %v (%d files)", err, len(entries))
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		s, ok := corpusString(string(data))
		if !ok {
			f.Fatalf("%s is not a one-string corpus entry", e.Name())
		}
		f.Add(s)
	}
	f.Add("UseDevelopmentStorage=true")
	f.Add("AccountName=acct;AccountKey=a2V5;EndpointSuffix=core.chinacloudapi.cn")
	f.Add("TableEndpoint=https://acct.table.core.windows.net;SharedAccessSignature=?sv=1&sig=2")
	f.Add("AccountName=acct;AccountKey=not base64!")
	f.Fuzz(func(t *testing.T, cs string) {
		opts, rec := recorded()
		acct, err := account.NewFromConnectionString(cs, opts)
		if err != nil {
			var ce *account.ConfigError
			if acct != nil || !errors.As(err, &ce) || !errors.Is(err, account.ErrInvalid) || !errors.Is(err, entity.ErrInvalid) {
				t.Fatalf("%q: %v, %v: want a *ConfigError", cs, acct, err)
			}
			checkKeyNotRepeated(t, cs, err)
			return
		}
		want := configuredHosts(cs)
		ep := acct.Endpoints()
		if ep.Table == "" && ep.Queue == "" && ep.Blob == "" {
			t.Fatalf("%q: an account without endpoints", cs)
		}
		for _, c := range []struct {
			service, endpoint string
			get               func() error
		}{
			{account.ServiceTable, ep.Table, func() error { _, err := acct.Table("orders"); return err }},
			{account.ServiceQueue, ep.Queue, func() error { _, err := acct.Queue("work"); return err }},
			{account.ServiceBlob, ep.Blob, func() error { _, err := acct.Container("photos"); return err }},
		} {
			err := c.get()
			if c.endpoint == "" {
				if !errors.Is(err, account.ErrNoEndpoint) {
					t.Fatalf("%q: no %s endpoint, but %v", cs, c.service, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%q: endpoint %s, but %v", cs, c.endpoint, err)
			}
			u, err := url.Parse(c.endpoint)
			if err != nil || !strings.EqualFold(u.Host, want[c.service]) || u.RawQuery != "" || !strings.HasSuffix(u.Path, "/") {
				t.Fatalf("%q: %s endpoint %q, want host %q (the configured one), no query, a final slash", cs, c.service, c.endpoint, want[c.service])
			}
		}
		s := sendEach(t, acct, rec)
		for _, r := range []struct {
			service string
			req     *http.Request
		}{{account.ServiceTable, s.table}, {account.ServiceQueue, s.queue}, {account.ServiceBlob, s.blob}} {
			if r.req != nil && !strings.EqualFold(r.req.URL.Host, want[r.service]) {
				t.Fatalf("%q: a %s request went to host %q, want %q", cs, r.service, r.req.URL.Host, want[r.service])
			}
		}
	})
}

// configuredHosts reads cs as a person would, independently of
// internal/connstr: for each service, the host (with port) of its
// explicit endpoint, or ACCOUNT.SERVICE.SUFFIX, or the emulator's.
func configuredHosts(cs string) map[string]string {
	settings := map[string]string{}
	for part := range strings.SplitSeq(cs, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		settings[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	hosts := map[string]string{}
	if settings["usedevelopmentstorage"] != "" {
		host := "127.0.0.1"
		if proxy := settings["developmentstorageproxyuri"]; proxy != "" {
			if u, err := url.Parse(proxy); err == nil {
				host = u.Hostname()
			}
		}
		for service, port := range map[string]int{account.ServiceBlob: 10000, account.ServiceQueue: 10001, account.ServiceTable: 10002} {
			hosts[service] = net.JoinHostPort(host, strconv.Itoa(port))
		}
		return hosts
	}
	suffix := settings["endpointsuffix"]
	if suffix == "" {
		suffix = "core.windows.net"
	}
	for _, service := range []string{account.ServiceTable, account.ServiceQueue, account.ServiceBlob} {
		if explicit := settings[service+"endpoint"]; explicit != "" {
			if u, err := url.Parse(explicit); err == nil {
				hosts[service] = strings.TrimSuffix(u.Host, ":")
			}
			continue
		}
		hosts[service] = settings["accountname"] + "." + service + "." + suffix
	}
	return hosts
}

// checkKeyNotRepeated fails if err's text, in any format, repeats the
// value of cs's AccountKey setting. When the key's text also shows in
// the error of the same string with every letter and digit of the key
// shifted (a→b, Z→A, 9→0: as valid or invalid base64 as before), it is
// the message's own wording, not the key.
func checkKeyNotRepeated(t *testing.T, cs string, err error) {
	t.Helper()
	key := ""
	for part := range strings.SplitSeq(cs, ";") {
		if k, v, ok := strings.Cut(strings.TrimSpace(part), "="); ok && strings.EqualFold(strings.TrimSpace(k), "AccountKey") {
			key = strings.TrimSpace(v)
		}
	}
	if key == "" || strings.Count(cs, key) != 1 {
		return // no key, or its text is elsewhere in the string too
	}
	texts := func(err error) string { return fmt.Sprintf("%s\n%+v\n%#v", err.Error(), err, err) }
	if !strings.Contains(texts(err), key) {
		return
	}
	_, other := account.NewFromConnectionString(strings.Replace(cs, key, shift(key), 1), nil)
	if other == nil || !strings.Contains(texts(other), key) {
		t.Fatalf("%q: the error repeats the AccountKey: %s", cs, texts(err))
	}
}

// shift moves every ASCII letter and digit of s to the next one, cyclically.
func shift(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c == 'z', c == 'Z':
			b[i] = c - 25
		case c == '9':
			b[i] = '0'
		case 'a' <= c && c < 'z', 'A' <= c && c < 'Z', '0' <= c && c < '9':
			b[i] = c + 1
		}
	}
	return string(b)
}

// corpusString reads a "go test fuzz v1" file holding one string.
func corpusString(data string) (string, bool) {
	lines := strings.Split(strings.TrimSpace(data), "\n")
	if len(lines) != 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "string(") || !strings.HasSuffix(lines[1], ")") {
		return "", false
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "string("), ")"))
	return s, err == nil
}

// TestServiceURLHosts: New and NewFromSASURL derive the other services'
// hosts from the URL's, so its account name, suffix and port are checked
// as a connection string's are: each of these was accepted before.
func TestServiceURLHosts(t *testing.T) {
	const sas = "?sv=2019-02-02&ss=bqt&srt=sco&sp=rl&se=2030-01-01T00%3A00%3A00Z&sig=U0lHTkFUVVJFU0lHTkFUVVJF"
	for _, c := range []struct{ url, says string }{
		{"https://acct.table.core.windows.net:0/", "port"},
		{"https://acct.table.core.windows.net:99999/", "port"},
		{"https://a_b.table.core.windows.net/", "not an account name"},
		{"https://ab.table.core.windows.net/", "not an account name"},
		{"https://abcdefghijklmnopqrstuvwxy.queue.core.windows.net/", "not an account name"},
		{"https://acct.blob.core..windows.net/", "suffix"},
		{"https://acct.blob.core.windows.net./", "suffix"},
		{"https://acct.table.cosmos.azure.com-/", "suffix"},
		{"https://-acct.table.cosmos.azure.com/", "Cosmos DB account name"},
	} {
		for _, build := range []struct {
			field string
			new   func() (*account.Account, error)
		}{
			{account.FieldAccountURL, func() (*account.Account, error) { return account.New(c.url, staticToken("t"), nil) }},
			{account.FieldSASURL, func() (*account.Account, error) { return account.NewFromSASURL(c.url+sas, nil) }},
		} {
			acct, err := build.new()
			var ce *account.ConfigError
			if acct != nil || !errors.As(err, &ce) || !errors.Is(err, entity.ErrInvalid) || ce.Field != build.field {
				t.Errorf("%s (%s): %v, want a *ConfigError", c.url, build.field, err)
				continue
			}
			if !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "U0lHTkFU") {
				t.Errorf("%s: %q, want it to say %q without the signature", c.url, err, c.says)
			}
		}
	}
	for _, u := range []string{
		"https://acct.table.core.windows.net:443/",
		"https://ACCT.blob.core.windows.net/",
		"https://my-cosmos-1.table.cosmos.azure.com:443/",
	} {
		if _, err := account.New(u, staticToken("t"), nil); err != nil {
			t.Errorf("New(%s): %v", u, err)
		}
	}
}
