package entity_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/sas"
	"github.com/tablekit/tablekit/internal/connstr"
)

// urlRecorder is a transport that sends nothing: it records every request
// and answers 404 ResourceNotFound, so a Get reports ErrNotFound.
type urlRecorder struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (r *urlRecorder) Do(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	body := `{"odata.error":{"code":"ResourceNotFound","message":{"lang":"en-US","value":"The specified resource does not exist."}}}`
	h := http.Header{}
	h.Set("Content-Type", "application/json;odata=minimalmetadata")
	h.Set("x-ms-error-code", "ResourceNotFound")
	return &http.Response{StatusCode: http.StatusNotFound, Status: "404 Not Found", Header: h,
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: req}, nil
}

func (r *urlRecorder) requests() []*http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*http.Request(nil), r.reqs...)
}

// options returns client options whose transport is r, with no retry.
func (r *urlRecorder) options() *aztables.ClientOptions {
	o := &aztables.ClientOptions{}
	o.Transport = r
	o.Retry.MaxRetries = -1
	return o
}

// describe shows where requests went, for a failure message.
func describe(reqs []*http.Request) string {
	var s []string
	for _, r := range reqs {
		s = append(s, r.Method+" "+r.URL.Scheme+"://"+r.URL.Host+r.URL.Path)
	}
	return strings.Join(s, ", ")
}

// bearer is a token credential that hands out a fixed token.
type bearer struct{}

func (bearer) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "the-token", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

const testSAS = "sv=2019-02-02&ss=t&srt=o&sp=r&se=2030-01-01T00%3A00%3A00Z&sig=c2lnbmF0dXJl"

// TestConnectionStringGoesToConfiguredEndpoint: every connection string
// sends its requests to the table endpoint it configures, the one package
// account derives from the same string, whether a SAS or a key authorizes
// them. aztables' own parser sends a SAS string's requests to
// https://ACCOUNT.table.core.windows.net whatever TableEndpoint,
// EndpointSuffix and DefaultEndpointsProtocol say.
func TestConnectionStringGoesToConfiguredEndpoint(t *testing.T) {
	const key = "AccountKey=" + connstr.DevAccountKey
	for _, c := range []struct {
		cs, want string // want: the URL of table Orders' entity (p, r), before the query
		sas      bool
	}{
		{"AccountName=acct;SharedAccessSignature=" + testSAS + ";EndpointSuffix=core.chinacloudapi.cn",
			"https://acct.table.core.chinacloudapi.cn/Orders(PartitionKey='p',RowKey='r')", true},
		{"DefaultEndpointsProtocol=http;AccountName=acct;SharedAccessSignature=" + testSAS,
			"http://acct.table.core.windows.net/Orders(PartitionKey='p',RowKey='r')", true},
		{"AccountName=acct;SharedAccessSignature=" + testSAS + ";TableEndpoint=https://tables.example:8443/acct",
			"https://tables.example:8443/acct/Orders(PartitionKey='p',RowKey='r')", true},
		{"SharedAccessSignature=?" + testSAS + ";TableEndpoint=http://127.0.0.1:10002/devstoreaccount1/",
			"http://127.0.0.1:10002/devstoreaccount1/Orders(PartitionKey='p',RowKey='r')", true},
		{"AccountName=acct;" + key + ";SharedAccessSignature=" + testSAS + ";TableEndpoint=https://tables.example/",
			"https://tables.example/Orders(PartitionKey='p',RowKey='r')", false},
		{"AccountName=acct;" + key + ";EndpointSuffix=core.usgovcloudapi.net",
			"https://acct.table.core.usgovcloudapi.net/Orders(PartitionKey='p',RowKey='r')", false},
		{"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://azurite.internal",
			"http://azurite.internal:10002/devstoreaccount1/Orders(PartitionKey='p',RowKey='r')", false},
	} {
		rec := &urlRecorder{}
		tbl, err := entity.NewTableFromConnectionString[Person](c.cs, "Orders", rec.options())
		if err != nil {
			t.Errorf("%s: %v", c.cs, err)
			continue
		}
		if _, err := tbl.Get(t.Context(), "p", "r"); !errors.Is(err, entity.ErrNotFound) {
			t.Errorf("%s: Get: %v", c.cs, err)
		}
		reqs := rec.requests()
		if len(reqs) != 1 {
			t.Errorf("%s: %d requests (%s), want 1", c.cs, len(reqs), describe(reqs))
			continue
		}
		u := reqs[0].URL
		if got := u.Scheme + "://" + u.Host + u.Path; got != c.want {
			t.Errorf("%s: the request went to %s, want %s", c.cs, got, c.want)
		}
		auth := reqs[0].Header.Get("Authorization")
		if c.sas && (u.Query().Get("sig") != "c2lnbmF0dXJl" || auth != "") {
			t.Errorf("%s: the request carries sig %q and Authorization %q, want the SAS alone", c.cs, u.Query().Get("sig"), auth)
		}
		if !c.sas && (!strings.HasPrefix(auth, "SharedKey") || u.Query().Has("sig")) {
			t.Errorf("%s: the request carries Authorization %q and query %q, want the shared key alone", c.cs, auth, u.RawQuery)
		}
		// Package account reads the string alike.
		a, err := account.NewFromConnectionString(c.cs, nil)
		if err != nil {
			t.Errorf("%s: account refuses what entity accepts: %v", c.cs, err)
			continue
		}
		if ep := a.Endpoints().Table; !strings.HasPrefix(c.want, ep+"Orders(") {
			t.Errorf("%s: account's table endpoint is %s, entity sent to %s", c.cs, ep, c.want)
		}
	}
}

// TestConnectionStringRefusedLikeAccount: a connection string that package
// account refuses, entity refuses too, before any request, with a
// *ConfigError that matches ErrInvalid and ErrInvalidConnectionString and
// names the same setting; one with no table endpoint is refused as well.
func TestConnectionStringRefusedLikeAccount(t *testing.T) {
	const key = "AccountKey=" + connstr.DevAccountKey
	for _, cs := range []string{
		"",
		"nonsense",
		"AccountName=acct",
		"AccountName=acct;AccountKey=not base64!",
		"AccountName=acct;AccountKey=" + connstr.DevAccountKey[:10],
		"AccountName=acct;SharedAccessSignature=sv=1",
		"SharedAccessSignature=" + testSAS,
		"AccountName=acct;SharedAccessSignature=" + testSAS + ";TableEndpoint=https://tables.example:0/",
		"AccountName=acct;SharedAccessSignature=" + testSAS + ";TableEndpoint=ftp://tables.example/",
		"AccountName=acct;SharedAccessSignature=" + testSAS + ";TableEndpoint=https://tables.example/?" + testSAS,
		"AccountName=acct;SharedAccessSignature=" + testSAS + ";EndpointSuffix=evil.example/x",
		"AccountName=acct;SharedAccessSignature=" + testSAS + ";EndpointSuffix=core..windows.net",
		"AccountName=Acct_1;SharedAccessSignature=" + testSAS,
		"AccountName=acct;" + key + ";TableEndpoint=https://a b.example/",
		"AccountName=acct;" + key + ";TableEndpoint=https://-a.example/",
		"AccountName=acct;" + key + ";TableEndpoint=https://tables.example:65536/",
		"AccountName=acct;" + key + ";TableEndpoint=https://user:pw@tables.example/",
		"AccountName=acct;" + key + ";UseDevelopmentStorage=true",
		"UseDevelopmentStorage=false",
		"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://proxy.example:8080",
		"AccountName=my.custom-acct;" + key + ";BlobEndpoint=http://127.0.0.1:10000/my.custom-acct/", // no table endpoint
	} {
		rec := &urlRecorder{}
		_, err := entity.NewTableFromConnectionString[Person](cs, "Orders", rec.options())
		var ce *entity.ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, entity.ErrInvalid) || !errors.Is(err, entity.ErrInvalidConnectionString) {
			t.Errorf("%q: %v (%T), want a *entity.ConfigError matching ErrInvalid and ErrInvalidConnectionString", cs, err, err)
		}
		if n := len(rec.requests()); n != 0 {
			t.Errorf("%q: %d requests sent", cs, n)
		}
		if ce != nil && !strings.HasPrefix(err.Error(), "entity: invalid "+ce.Field) {
			t.Errorf("%q: %q", cs, err)
		}
		if err != nil && (strings.Contains(err.Error(), "c2lnbmF0dXJl") || strings.Contains(err.Error(), connstr.DevAccountKey[:12])) {
			t.Errorf("%q: the error repeats a secret: %v", cs, err)
		}
		_, aerr := account.NewFromConnectionString(cs, nil)
		var ace *account.ConfigError
		switch {
		case aerr == nil:
			if !strings.Contains(cs, "BlobEndpoint") {
				t.Errorf("%q: account accepts what entity refuses", cs)
			}
		case !errors.As(aerr, &ace):
			t.Errorf("%q: account: %v", cs, aerr)
		case ce != nil && (ace.Field != ce.Field || ace.Reason != ce.Reason):
			t.Errorf("%q: account says %q, entity %q", cs, aerr, err)
		}
	}
}

// TestConnectionStringSASOnAzurite: a SAS connection string with an
// AccountName and a TableEndpoint reaches that endpoint — the local
// Azurite — and nothing else: a per-retry policy refuses, without sending,
// any request to another host.
func TestConnectionStringSASOnAzurite(t *testing.T) {
	if env.ConnectionString == "" {
		t.Skip("the account is used with a Microsoft Entra credential: no account key signs a SAS")
	}
	p, err := connstr.Parse(env.ConnectionString)
	if err != nil {
		t.Fatal(err)
	}
	iss, err := sas.NewIssuerFromConnectionString(env.ConnectionString, sas.Config{TTL: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	u, err := iss.AccountURL(sas.AccountSAS{
		Permissions:   sas.AccountRead | sas.AccountAdd | sas.AccountUpdate | sas.AccountCreate | sas.AccountWrite,
		ResourceTypes: sas.Container | sas.Object,
	})
	if err != nil {
		t.Fatal(err)
	}
	_, query, _ := strings.Cut(u, "?")
	want, err := url.Parse(p.TableEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var hosts []string
	guard := policyFunc(func(req *policy.Request) (*http.Response, error) {
		h := req.Raw().URL.Scheme + "://" + req.Raw().URL.Host
		mu.Lock()
		hosts = append(hosts, h)
		mu.Unlock()
		if h != want.Scheme+"://"+want.Host {
			return nil, fmt.Errorf("a request to %s, not the configured %s", h, want.Host)
		}
		return req.Next()
	})
	opts := env.NoRetryClientOptions()
	opts.PerRetryPolicies = append(opts.PerRetryPolicies, guard)
	cs := "AccountName=" + p.AccountName + ";SharedAccessSignature=" + query + ";TableEndpoint=" + p.TableEndpoint
	tbl, err := entity.NewTableFromConnectionString[Person](cs, env.TableName(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := tbl.CreateTableIfNotExists(ctx); err != nil {
		t.Fatalf("CreateTableIfNotExists: %v", err)
	}
	if err := tbl.Insert(ctx, &Person{Dept: "d", ID: "1", Name: "Ann"}); err != nil {
		t.Fatalf("Insert: %v", err)
	}
	got, err := tbl.Get(ctx, "d", "1")
	if err != nil || got.Name != "Ann" {
		t.Fatalf("Get: %+v, %v", got, err)
	}
	// Read back with the account's own client.
	if _, err := env.TableService.NewClient(tbl.Name()).GetEntity(ctx, "d", "1", nil); err != nil {
		t.Errorf("the entity is not in the account: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hosts) < 3 {
		t.Errorf("%d requests recorded: %v", len(hosts), hosts)
	}
}

type policyFunc func(*policy.Request) (*http.Response, error)

func (f policyFunc) Do(req *policy.Request) (*http.Response, error) { return f(req) }

// TestCredentialURLChecked: NewTableWithCredential refuses, before any
// request, a service URL that a connection string's TableEndpoint could not
// be — a SAS URL (the SAS would travel beside the token), port 0 or above
// 65535, spaces, another scheme, a user, a fragment, a host that is no DNS
// name or address — and http, over which aztables' client sends no token:
// a *ConfigError matching ErrInvalid that repeats no query or password.
func TestCredentialURLChecked(t *testing.T) {
	for _, raw := range []string{
		"",
		"acct.table.core.windows.net",
		"https://acct.table.core.windows.net/?" + testSAS,
		"https://acct.table.core.windows.net/Orders?" + testSAS,
		"https://acct.table.core.windows.net/?",
		"https://acct.table.core.windows.net:0/",
		"https://acct.table.core.windows.net:65536/",
		"https://acct.table.core.windows.net:x/",
		"https://acct table.core.windows.net/",
		"https://acct.table.core.windows.net/a b/",
		" https://acct.table.core.windows.net/",
		"ftp://acct.table.core.windows.net/",
		"http://acct.table.core.windows.net/",
		"https://user:pa55w0rd@acct.table.core.windows.net/",
		"https://acct.table.core.windows.net/#c2lnbmF0dXJl",
		"https://acct..table.core.windows.net/",
		"https://-acct.table.core.windows.net/",
		"https://1.2.3/",
		"https://[fe80::1%25eth0]/",
		"https://acct.table.core.windows.net/sv=1&sig=c2lnbmF0dXJl", // the '?' forgotten
		"https://acct.table.core.windows.net/%41/",
	} {
		rec := &urlRecorder{}
		tbl, err := entity.NewTableWithCredential[Person](raw, "Orders", bearer{}, rec.options())
		var ce *entity.ConfigError
		if !errors.As(err, &ce) || ce.Field != entity.FieldServiceURL || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("%q: %v, want a *entity.ConfigError for the service URL matching ErrInvalid", raw, err)
		}
		if tbl != nil {
			// What accepting it meant: the first request shows.
			_, _ = tbl.Get(t.Context(), "p", "r")
			for _, r := range rec.requests() {
				t.Errorf("%q: accepted; a Get sent %s %s with Authorization %q", raw, r.Method, r.URL.Redacted(), r.Header.Get("Authorization"))
			}
			continue
		}
		if n := len(rec.requests()); n != 0 {
			t.Errorf("%q: %d requests sent", raw, n)
		}
		if err != nil {
			for _, secret := range []string{"c2lnbmF0dXJl", "pa55w0rd", "sv=", "se="} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("%q: the error repeats %q: %v", raw, secret, err)
				}
			}
			if !strings.HasPrefix(err.Error(), "entity: invalid service URL: ") || strings.Contains(err.Error(), "service URL: service URL") {
				t.Errorf("%q: %q", raw, err)
			}
		}
	}
	rec := &urlRecorder{}
	if _, err := entity.NewTableWithCredential[Person]("https://acct.table.core.windows.net/", "Orders", nil, rec.options()); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("nil credential: %v", err)
	}
	if _, err := entity.NewTableFromService[Person](nil, "Orders"); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("nil service client: %v", err)
	}
}

// TestCredentialURLAccepted: a service URL of the accepted forms reaches
// its host with the bearer token and no SAS.
func TestCredentialURLAccepted(t *testing.T) {
	for _, c := range []struct {
		raw, want string
	}{
		{"https://acct.table.core.windows.net", "https://acct.table.core.windows.net/Orders(PartitionKey='p',RowKey='r')"},
		{"https://ACCT.table.core.windows.net:443/", "https://ACCT.table.core.windows.net:443/Orders(PartitionKey='p',RowKey='r')"},
		{"https://10.0.0.4:8443/acct/", "https://10.0.0.4:8443/acct/Orders(PartitionKey='p',RowKey='r')"},
		{"https://[::1]:10002/devstoreaccount1", "https://[::1]:10002/devstoreaccount1/Orders(PartitionKey='p',RowKey='r')"},
	} {
		rec := &urlRecorder{}
		tbl, err := entity.NewTableWithCredential[Person](c.raw, "Orders", bearer{}, rec.options())
		if err != nil {
			t.Errorf("%s: %v", c.raw, err)
			continue
		}
		if _, err := tbl.Get(t.Context(), "p", "r"); !errors.Is(err, entity.ErrNotFound) {
			t.Errorf("%s: Get: %v", c.raw, err)
		}
		reqs := rec.requests()
		if len(reqs) != 1 {
			t.Errorf("%s: %d requests (%s)", c.raw, len(reqs), describe(reqs))
			continue
		}
		u := reqs[0].URL
		if got := u.Scheme + "://" + u.Host + u.Path; got != c.want {
			t.Errorf("%s: the request went to %s, want %s", c.raw, got, c.want)
		}
		if auth := reqs[0].Header.Get("Authorization"); auth != "Bearer the-token" || u.Query().Has("sig") {
			t.Errorf("%s: Authorization %q, query %q", c.raw, auth, u.RawQuery)
		}
	}
}
