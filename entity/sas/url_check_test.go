package sas_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/sas"
	"github.com/tablekit/tablekit/integration"
)

// hostRecorder is a transport that sends nothing: it records the host of
// every request and answers 404 ResourceNotFound.
type hostRecorder struct {
	mu    sync.Mutex
	hosts []string
}

func (r *hostRecorder) Do(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.hosts = append(r.hosts, req.URL.Scheme+"://"+req.URL.Host)
	r.mu.Unlock()
	h := http.Header{}
	h.Set("x-ms-error-code", "ResourceNotFound")
	body := `{"odata.error":{"code":"ResourceNotFound","message":{"lang":"en-US","value":"not found"}}}`
	return &http.Response{StatusCode: http.StatusNotFound, Status: "404 Not Found", Header: h,
		Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

func (r *hostRecorder) sent() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.hosts...)
}

func (r *hostRecorder) options() *aztables.ClientOptions {
	o := &aztables.ClientOptions{}
	o.Transport = r
	o.Retry.MaxRetries = -1
	return o
}

// badHosts are scheme://host[:port] parts that a connection string's
// TableEndpoint could not have: a port out of range, a host that is no DNS
// name or address.
var badHosts = []string{
	"https://acct.table.core.windows.net:0",
	"https://acct.table.core.windows.net:65536",
	"https://acct.table.core.windows.net:99999",
	"https://acct..table.core.windows.net",
	"https://-acct.table.core.windows.net",
	"https://acct-.table.core.windows.net",
	"https://acct.table.core.windows.net.",
	"https://1.2.3",
	"https://010.0.0.1",
	"https://acct!.table.core.windows.net",
	"https://[fe80::1%25eth0]",
	"https://[1.2.3.4]",
	"https://" + strings.Repeat("a", 64) + ".table.core.windows.net",
}

// TestIssuerChecksHostAndPort: NewIssuer refuses a service URL whose port
// is out of range or whose host is no DNS name or address, as a connection
// string's TableEndpoint is refused, with a *FieldError for "URL" matching
// entity.ErrInvalid; it accepts the forms a TableEndpoint may have.
func TestIssuerChecksHostAndPort(t *testing.T) {
	k, err := sas.NewKey(integration.AzuriteAccountName, integration.AzuriteAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]string{"https://acct.table.core.windows.net/a b/", "https://acct.table.core.windows.net/a/../b", "https://acct.table.core.windows.net/%41"}, badHosts...)
	for _, u := range bad {
		iss, err := sas.NewIssuer(u, k, sas.Config{})
		var fe *sas.FieldError
		if !errors.As(err, &fe) || fe.Field != "URL" || !errors.Is(err, entity.ErrInvalid) || !errors.Is(err, sas.ErrInvalid) {
			t.Errorf("NewIssuer(%q): %v (endpoint %q), want a *FieldError for URL", u, err, endpoint(iss))
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "sas: URL: ") || strings.Contains(msg, "URL: URL") {
			t.Errorf("NewIssuer(%q): %q", u, msg)
		}
	}
	for u, want := range map[string]string{
		"https://acct.table.core.windows.net":       "https://acct.table.core.windows.net/",
		"https://acct.table.core.windows.net:443/":  "https://acct.table.core.windows.net:443/",
		"http://127.0.0.1:10002/devstoreaccount1":   "http://127.0.0.1:10002/devstoreaccount1/",
		"http://[::1]:10002/devstoreaccount1/":      "http://[::1]:10002/devstoreaccount1/",
		"http://azurite_tables:10002/my.acct-1/":    "http://azurite_tables:10002/my.acct-1/",
		"https://acct.table.core.chinacloudapi.cn:": "https://acct.table.core.chinacloudapi.cn/",
	} {
		iss, err := sas.NewIssuer(u, k, sas.Config{})
		if err != nil || iss.Endpoint() != want {
			t.Errorf("NewIssuer(%q): %q, %v; want %q", u, endpoint(iss), err, want)
		}
	}
}

func endpoint(iss *sas.Issuer) string {
	if iss == nil {
		return ""
	}
	return iss.Endpoint()
}

// TestOpenChecksHostAndPort: OpenTable, OpenClient and OpenService refuse a
// SAS URL whose port is out of range or whose host is no DNS name or
// address, before any request (the transport records none), with a
// *FieldError for "URL" that repeats neither the token nor its signature.
// Accepted, such a URL sent the token to that host at the first call.
func TestOpenChecksHostAndPort(t *testing.T) {
	k, err := sas.NewKey(integration.AzuriteAccountName, integration.AzuriteAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	iss, err := sas.NewIssuer("https://acct.table.core.windows.net", k, sas.Config{})
	if err != nil {
		t.Fatal(err)
	}
	table, err := iss.Grant("Orders", sas.Partition("alice"), sas.Read)
	if err != nil {
		t.Fatal(err)
	}
	service, err := iss.AccountURL(sas.AccountSAS{Permissions: sas.AccountRead, ResourceTypes: sas.Object})
	if err != nil {
		t.Fatal(err)
	}
	const good = "https://acct.table.core.windows.net"
	_, tq, _ := strings.Cut(table, "?")
	sig := "sig=" + strings.Split(tq[strings.Index(tq, "sig=")+4:], "&")[0]
	check := func(what, u string, open func(string, *aztables.ClientOptions) (func() error, error)) {
		t.Helper()
		rec := &hostRecorder{}
		call, err := open(u, rec.options())
		var fe *sas.FieldError
		if !errors.As(err, &fe) || fe.Field != "URL" || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("%s(%q): %v, want a *FieldError for URL", what, u, err)
		}
		if err == nil {
			_ = call()
			t.Errorf("%s(%q): accepted; the first call sent the token to %v", what, u, rec.sent())
			return
		}
		if h := rec.sent(); len(h) != 0 {
			t.Errorf("%s(%q): requests to %v", what, u, h)
		}
		if strings.Contains(err.Error(), sig) || strings.Contains(err.Error(), "sv=") {
			t.Errorf("%s(%q): the error repeats the token: %v", what, u, err)
		}
	}
	openTable := func(u string, o *aztables.ClientOptions) (func() error, error) {
		tbl, err := sas.OpenTable[Order](u, o)
		return func() error { _, err := tbl.Get(t.Context(), "alice", "1"); return err }, err
	}
	openClient := func(u string, o *aztables.ClientOptions) (func() error, error) {
		c, err := sas.OpenClient(u, o)
		return func() error { _, err := c.GetEntity(t.Context(), "alice", "1", nil); return err }, err
	}
	openService := func(u string, o *aztables.ClientOptions) (func() error, error) {
		svc, err := sas.OpenService(u, o)
		return func() error {
			_, err := svc.NewClient("Orders").GetEntity(t.Context(), "alice", "1", nil)
			return err
		}, err
	}
	for _, host := range badHosts {
		check("OpenTable", strings.Replace(table, good, host, 1), openTable)
		check("OpenClient", strings.Replace(table, good, host, 1), openClient)
		check("OpenService", strings.Replace(service, good, host, 1), openService)
	}
	check("OpenService", strings.Replace(service, good+"/", good+"/a b/", 1), openService)
	check("OpenService", strings.Replace(service, good+"/", good+"/a/../", 1), openService)

	// The forms a TableEndpoint may have reach their host.
	for _, host := range []string{good, "https://acct.table.core.windows.net:8443", "https://[::1]:10002", "https://10.1.2.3"} {
		rec := &hostRecorder{}
		tbl, err := sas.OpenTable[Order](strings.Replace(table, good, host, 1), rec.options())
		if err != nil {
			t.Errorf("OpenTable on %s: %v", host, err)
			continue
		}
		if _, err := tbl.Get(t.Context(), "alice", "1"); !errors.Is(err, entity.ErrNotFound) {
			t.Errorf("Get on %s: %v", host, err)
		}
		h := rec.sent()
		if len(h) == 0 {
			t.Errorf("OpenTable on %s: no request", host)
		}
		for _, got := range h {
			if got != host {
				t.Errorf("OpenTable on %s: a request to %s", host, got)
			}
		}
	}
}
