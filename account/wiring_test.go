package account_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/account"
)

// This file checks the wiring without a service: which URL, which
// authorization, which options every client gets, and the errors of bad
// input. Requests go to a recording transport that answers 200 with an
// empty body (the SDKs then fail to read it, which does not matter here).

// recorder is an azcore transport that keeps every request.
type recorder struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

func (r *recorder) last(t *testing.T) *http.Request {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		t.Fatal("no request reached the transport")
	}
	return r.reqs[len(r.reqs)-1]
}

// recorded returns options whose clients send to a new recorder.
func recorded() (*account.Options, *recorder) {
	rec := &recorder{}
	return &account.Options{ClientOptions: azcore.ClientOptions{Transport: rec, Retry: policy.RetryOptions{MaxRetries: -1}}}, rec
}

// sent is the request each service's client sent for one call.
type sent struct{ table, queue, blob *http.Request }

// sendEach makes one request on each service the account has, through
// the clients a table, a queue and a container name give, and returns
// what reached the transport.
func sendEach(t *testing.T, acct *account.Account, rec *recorder) sent {
	t.Helper()
	ctx := context.Background()
	var s sent
	if tbl, err := acct.Table("orders"); err == nil {
		_, _ = tbl.GetEntity(ctx, "p", "r", nil)
		s.table = rec.last(t)
	} else if !errors.Is(err, account.ErrNoEndpoint) {
		t.Fatalf("Table: %v", err)
	}
	if q, err := acct.Queue("work"); err == nil {
		_, _ = q.GetProperties(ctx, nil)
		s.queue = rec.last(t)
	} else if !errors.Is(err, account.ErrNoEndpoint) {
		t.Fatalf("Queue: %v", err)
	}
	if c, err := acct.Container("photos"); err == nil {
		_, _ = c.GetProperties(ctx, nil)
		s.blob = rec.last(t)
	} else if !errors.Is(err, account.ErrNoEndpoint) {
		t.Fatalf("Container: %v", err)
	}
	return s
}

func hostPath(r *http.Request) string {
	if r == nil {
		return ""
	}
	return r.URL.Scheme + "://" + r.URL.Host + r.URL.Path
}

// TestDevelopmentStorage: "UseDevelopmentStorage=true", which the SDKs
// refuse, reaches Azurite's well-known account on its default ports, with
// its key.
func TestDevelopmentStorage(t *testing.T) {
	for _, c := range []struct {
		cs, host string
	}{
		{"UseDevelopmentStorage=true", "127.0.0.1"},
		{"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://azurite", "azurite"},
	} {
		opts, rec := recorded()
		acct, err := account.NewFromConnectionString(c.cs, opts)
		if err != nil {
			t.Fatalf("%s: %v", c.cs, err)
		}
		want := account.Endpoints{
			Table: "http://" + c.host + ":10002/devstoreaccount1/",
			Queue: "http://" + c.host + ":10001/devstoreaccount1/",
			Blob:  "http://" + c.host + ":10000/devstoreaccount1/",
		}
		if got := acct.Endpoints(); got != want {
			t.Errorf("%s: endpoints %+v, want %+v", c.cs, got, want)
		}
		if acct.Name() != "devstoreaccount1" {
			t.Errorf("%s: name %q", c.cs, acct.Name())
		}
		s := sendEach(t, acct, rec)
		for _, r := range []struct {
			req  *http.Request
			want string
		}{
			{s.table, want.Table + "orders(PartitionKey='p',RowKey='r')"},
			{s.queue, want.Queue + "work"},
			{s.blob, want.Blob + "photos"},
		} {
			if got := hostPath(r.req); got != r.want {
				t.Errorf("%s: request to %s, want %s", c.cs, got, r.want)
			}
			// aztables signs with SharedKeyLite, azqueue and azblob with SharedKey.
			if auth := r.req.Header.Get("Authorization"); !strings.HasPrefix(auth, "SharedKey") || !strings.Contains(auth, " devstoreaccount1:") {
				t.Errorf("%s: %s sent Authorization %q, want the development account's shared key", c.cs, r.want, auth)
			}
		}
	}
}

// TestConnectionStringForms: account key with a suffix, explicit
// endpoints, and SAS connection strings each reach the right URLs with the
// right authorization.
func TestConnectionStringForms(t *testing.T) {
	const key = "a2V5a2V5a2V5" // base64 of "keykeykey"
	for _, c := range []struct {
		name, cs           string
		table, queue, blob string // "" when the service is missing
		auth               string // the account in a shared-key Authorization; "" for none (SAS)
		query              string // the query every request must carry
	}{
		{
			name: "key and suffix", cs: "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + key + ";EndpointSuffix=core.chinacloudapi.cn",
			table: "https://acct.table.core.chinacloudapi.cn/", queue: "https://acct.queue.core.chinacloudapi.cn/", blob: "https://acct.blob.core.chinacloudapi.cn/",
			auth: " acct:",
		},
		{
			name: "key and explicit endpoints", cs: "AccountName=acct;AccountKey=" + key + ";TableEndpoint=http://10.0.0.5:7002/acct;QueueEndpoint=http://10.0.0.5:7001/acct;BlobEndpoint=http://10.0.0.5:7000/acct",
			table: "http://10.0.0.5:7002/acct/", queue: "http://10.0.0.5:7001/acct/", blob: "http://10.0.0.5:7000/acct/",
			auth: " acct:",
		},
		{
			name: "SAS and account name", cs: "AccountName=acct;SharedAccessSignature=sv=2019-02-02&ss=bqt&sig=c2ln",
			table: "https://acct.table.core.windows.net/", queue: "https://acct.queue.core.windows.net/", blob: "https://acct.blob.core.windows.net/",
			query: "sig=c2ln",
		},
		{
			// aztables' own parser refuses this form (it wants AccountName).
			name: "SAS and a table endpoint only", cs: "TableEndpoint=https://acct.table.core.windows.net;SharedAccessSignature=?sv=2019-02-02&sig=c2ln",
			table: "https://acct.table.core.windows.net/",
			query: "sig=c2ln",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts, rec := recorded()
			acct, err := account.NewFromConnectionString(c.cs, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := acct.Endpoints(), (account.Endpoints{Table: c.table, Queue: c.queue, Blob: c.blob}); got != want {
				t.Errorf("endpoints %+v, want %+v", got, want)
			}
			s := sendEach(t, acct, rec)
			for _, r := range []struct {
				req        *http.Request
				base, path string
			}{{s.table, c.table, "orders(PartitionKey='p',RowKey='r')"}, {s.queue, c.queue, "work"}, {s.blob, c.blob, "photos"}} {
				if r.base == "" {
					if r.req != nil {
						t.Errorf("a request went to %s, a service without an endpoint", hostPath(r.req))
					}
					continue
				}
				if got := hostPath(r.req); got != r.base+r.path {
					t.Errorf("request to %s, want %s", got, r.base+r.path)
				}
				auth := r.req.Header.Get("Authorization")
				if c.auth == "" && auth != "" || c.auth != "" && !(strings.HasPrefix(auth, "SharedKey") && strings.Contains(auth, c.auth)) {
					t.Errorf("%s: Authorization %q, want prefix %q", r.base, auth, c.auth)
				}
				if !strings.Contains(r.req.URL.RawQuery, c.query) {
					t.Errorf("%s: query %q lacks %q", r.base, r.req.URL.RawQuery, c.query)
				}
			}
			if c.queue == "" {
				_, err := acct.QueueService()
				var ee *account.EndpointError
				if !errors.As(err, &ee) || ee.Service != account.ServiceQueue || !strings.Contains(err.Error(), "QueueEndpoint") {
					t.Errorf("QueueService of an account without queues: %v, want an *EndpointError naming QueueEndpoint", err)
				}
			}
		})
	}
}

// staticToken is a token credential that always gives the same token.
type staticToken string

func (s staticToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: string(s)}, nil
}

// TestNewWithTokenCredential: any one service URL gives all three, each
// request carrying the credential's token.
func TestNewWithTokenCredential(t *testing.T) {
	for _, u := range []string{
		"https://acct.table.core.windows.net/",
		"https://acct.queue.core.windows.net",
		"https://acct.blob.core.usgovcloudapi.net/",
	} {
		suffix := u[strings.Index(u, ".core.")+1:]
		suffix = strings.TrimSuffix(suffix, "/")
		opts, rec := recorded()
		acct, err := account.New(u, staticToken("tok"), opts)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		s := sendEach(t, acct, rec)
		for _, r := range []struct {
			req  *http.Request
			want string
		}{
			{s.table, "https://acct.table." + suffix + "/orders(PartitionKey='p',RowKey='r')"},
			{s.queue, "https://acct.queue." + suffix + "/work"},
			{s.blob, "https://acct.blob." + suffix + "/photos"},
		} {
			if got := hostPath(r.req); got != r.want {
				t.Errorf("from %s: request to %s, want %s", u, got, r.want)
			}
			if auth := r.req.Header.Get("Authorization"); auth != "Bearer tok" {
				t.Errorf("from %s: %s sent Authorization %q, want the token", u, r.want, auth)
			}
		}
	}

	// Cosmos DB for Table: tables only, and the others say why.
	opts, rec := recorded()
	acct, err := account.New("https://acct.table.cosmos.azure.com:443/", staticToken("tok"), opts)
	if err != nil {
		t.Fatal(err)
	}
	s := sendEach(t, acct, rec)
	if got := hostPath(s.table); got != "https://acct.table.cosmos.azure.com:443/orders(PartitionKey='p',RowKey='r')" {
		t.Errorf("Cosmos DB table request to %s", got)
	}
	if _, err := acct.Container("photos"); !errors.Is(err, account.ErrNoEndpoint) || !strings.Contains(err.Error(), "Cosmos DB") {
		t.Errorf("Container of a Cosmos DB account: %v", err)
	}
}

// TestNewFromSASURL: the account SAS of one service URL authorizes the
// three derived ones; the signature never shows in Endpoints.
func TestNewFromSASURL(t *testing.T) {
	opts, rec := recorded()
	acct, err := account.NewFromSASURL("https://acct.blob.core.windows.net/?sv=2019-02-02&ss=bqt&srt=sco&sp=rwdlacup&se=2030-01-01T00%3A00%3A00Z&sig=c2ln", opts)
	if err != nil {
		t.Fatal(err)
	}
	if ep := acct.Endpoints(); ep.Table != "https://acct.table.core.windows.net/" || strings.Contains(ep.Blob, "sig") {
		t.Errorf("endpoints %+v", ep)
	}
	s := sendEach(t, acct, rec)
	for _, r := range []*http.Request{s.table, s.queue, s.blob} {
		if r == nil || r.URL.Query().Get("sig") != "c2ln" || r.URL.Query().Get("ss") != "bqt" || r.Header.Get("Authorization") != "" {
			t.Errorf("request %v does not carry the SAS alone", r)
		}
	}
}

// TestOptions: the caller's options reach every client (a policy of its
// own, the transport), tablekit's policies are added to a copy, and the
// caller's slices are not changed.
func TestOptions(t *testing.T) {
	rec := &recorder{}
	var seen []string
	var mu sync.Mutex
	mine := policyFunc(func(req *policy.Request) (*http.Response, error) {
		mu.Lock()
		seen = append(seen, req.Raw().URL.Host+req.Raw().URL.Path)
		mu.Unlock()
		return req.Next()
	})
	perRetry := make([]policy.Policy, 1, 4) // room that an append could reuse
	perRetry[0] = mine
	opts := &account.Options{ClientOptions: azcore.ClientOptions{Transport: rec, PerRetryPolicies: perRetry}}
	acct, err := account.NewFromConnectionString("UseDevelopmentStorage=true", opts)
	if err != nil {
		t.Fatal(err)
	}
	sendEach(t, acct, rec)
	if len(seen) != 3 {
		t.Errorf("the caller's policy saw %v, want one request per service", seen)
	}
	if len(opts.ClientOptions.PerRetryPolicies) != 1 || len(opts.ClientOptions.PerCallPolicies) != 0 || perRetry[:2][1] != nil {
		t.Errorf("the caller's options were changed: %d per-retry, %d per-call policies", len(opts.ClientOptions.PerRetryPolicies), len(opts.ClientOptions.PerCallPolicies))
	}
	co := acct.ClientOptions()
	if len(co.PerRetryPolicies) != 2 || len(co.PerCallPolicies) != 1 {
		t.Errorf("ClientOptions has %d per-retry and %d per-call policies, want the caller's and tablekit's", len(co.PerRetryPolicies), len(co.PerCallPolicies))
	}
}

type policyFunc func(*policy.Request) (*http.Response, error)

func (f policyFunc) Do(req *policy.Request) (*http.Response, error) { return f(req) }

// TestBadInput: every argument that cannot be used is a *ConfigError
// naming the setting, before any request, never repeating a key or
// signature.
func TestBadInput(t *testing.T) {
	const secret = "U0VDUkVUU0VDUkVUU0VDUkVU"
	cases := []struct {
		name  string
		build func() (*account.Account, error)
		field string
		says  string
	}{
		{"empty connection string", func() (*account.Account, error) { return account.NewFromConnectionString("", nil) }, account.FieldConnectionString, "empty"},
		{"no key and no SAS", func() (*account.Account, error) { return account.NewFromConnectionString("AccountName=acct", nil) }, account.FieldConnectionString, "neither AccountKey nor SharedAccessSignature"},
		{"no account name and no endpoint", func() (*account.Account, error) {
			return account.NewFromConnectionString("SharedAccessSignature=sv=1&sig="+secret, nil)
		}, account.FieldConnectionString, "no AccountName and no explicit endpoint"},
		{"not key=value", func() (*account.Account, error) {
			return account.NewFromConnectionString("AccountName=acct;AccountKey="+secret+";"+secret, nil)
		}, account.FieldConnectionString, "not a key=value setting"},
		{"endpoint not a URL", func() (*account.Account, error) {
			return account.NewFromConnectionString("AccountName=acct;AccountKey="+secret+";QueueEndpoint=acct.queue.core.windows.net", nil)
		}, account.FieldConnectionString, "QueueEndpoint"},
		{"key not base64", func() (*account.Account, error) {
			return account.NewFromConnectionString("AccountName=acct;AccountKey=SECRET!SECRET!SECRET", nil)
		}, account.FieldAccountKey, "not base64"},
		{"UseDevelopmentStorage=false", func() (*account.Account, error) {
			return account.NewFromConnectionString("UseDevelopmentStorage=false", nil)
		}, account.FieldConnectionString, "UseDevelopmentStorage"},
		{"nil credential", func() (*account.Account, error) { return account.New("https://acct.table.core.windows.net/", nil, nil) }, account.FieldCredential, "nil"},
		{"account URL over http", func() (*account.Account, error) {
			return account.New("http://acct.table.core.windows.net/", staticToken("t"), nil)
		}, account.FieldAccountURL, "https"},
		{"Azurite's path-style URL", func() (*account.Account, error) {
			return account.New("https://127.0.0.1:10002/devstoreaccount1", staticToken("t"), nil)
		}, account.FieldAccountURL, "connection string"},
		{"a table's URL", func() (*account.Account, error) {
			return account.New("https://acct.table.core.windows.net/orders", staticToken("t"), nil)
		}, account.FieldAccountURL, "path"},
		{"host names no service", func() (*account.Account, error) {
			return account.New("https://storage.example.com/", staticToken("t"), nil)
		}, account.FieldAccountURL, "NAME.table|queue|blob.SUFFIX"},
		{"account URL with a SAS", func() (*account.Account, error) {
			return account.New("https://acct.table.core.windows.net/?sig="+secret, staticToken("t"), nil)
		}, account.FieldAccountURL, "NewFromSASURL"},
		{"not a URL", func() (*account.Account, error) { return account.New("::", staticToken("t"), nil) }, account.FieldAccountURL, "not"},
		{"SAS URL without signature", func() (*account.Account, error) {
			return account.NewFromSASURL("https://acct.blob.core.windows.net/?sv=2019-02-02", nil)
		}, account.FieldSASURL, "sig"},
		{"SAS URL with user", func() (*account.Account, error) {
			return account.NewFromSASURL("https://me:"+secret+"@acct.blob.core.windows.net/?sig="+secret, nil)
		}, account.FieldSASURL, "user"},
		{"SAS URL of Azurite", func() (*account.Account, error) {
			return account.NewFromSASURL("http://127.0.0.1:10000/devstoreaccount1?sv=1&sig="+secret, nil)
		}, account.FieldSASURL, "connection string"},
	}
	for _, c := range cases {
		acct, err := c.build()
		var ce *account.ConfigError
		if acct != nil || !errors.As(err, &ce) || !errors.Is(err, account.ErrInvalid) {
			t.Errorf("%s: %v, %v; want a *ConfigError", c.name, acct, err)
			continue
		}
		if ce.Field != c.field || !strings.Contains(err.Error(), c.says) || !strings.HasPrefix(err.Error(), "account: ") {
			t.Errorf("%s: %q (field %q), want field %q saying %q", c.name, err, ce.Field, c.field, c.says)
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "SECRET!") {
			t.Errorf("%s: the error repeats a secret: %v", c.name, err)
		}
	}

	acct, err := account.NewFromConnectionString("UseDevelopmentStorage=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		get   func() error
		field string
	}{
		{"table name with a hyphen", func() error { _, err := acct.Table("my-table"); return err }, account.FieldTableName},
		{"reserved table name", func() error { _, err := acct.Table("Tables"); return err }, account.FieldTableName},
		{"upper-case queue name", func() error { _, err := acct.Queue("Work"); return err }, account.FieldQueueName},
		{"queue name with two hyphens", func() error { _, err := acct.Queue("a--b"); return err }, account.FieldQueueName},
		{"queue name ending with a hyphen", func() error { _, err := acct.Queue("work-"); return err }, account.FieldQueueName},
		{"short container name", func() error { _, err := acct.Container("ab"); return err }, account.FieldContainerName},
		{"container name with a dot", func() error { _, err := acct.Container("a.b.c"); return err }, account.FieldContainerName},
	} {
		var ce *account.ConfigError
		if err := c.get(); !errors.As(err, &ce) || ce.Field != c.field {
			t.Errorf("%s: %v, want a *ConfigError for %s", c.name, err, c.field)
		}
	}
	for _, name := range []string{"$root", "$logs", "$web", "a-b-c", "abc"} {
		if _, err := acct.Container(name); err != nil {
			t.Errorf("Container(%q): %v", name, err)
		}
	}
}

// TestLinksNoTesting: a production binary that builds its clients with
// this package links no package testing (integration, which does, is for
// tests only).
func TestLinksNoTesting(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	for _, pkg := range []string{"github.com/tablekit/tablekit/account", "github.com/tablekit/tablekit/integration/azurite"} {
		out, err := exec.Command(goTool, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 || !slices.Contains(deps, "github.com/Azure/azure-sdk-for-go/sdk/data/aztables") {
			t.Fatalf("go list -deps %s listed %d packages, not its dependencies: %s", pkg, len(deps), out)
		}
		for _, bad := range []string{"testing", "github.com/tablekit/tablekit/integration"} {
			if slices.Contains(deps, bad) {
				t.Errorf("%s depends on %s", pkg, bad)
			}
		}
	}
}

// FuzzAccountURL: New and NewFromSASURL give an account or a *ConfigError
// for any URL, never a panic.
func FuzzAccountURL(f *testing.F) {
	for _, s := range []string{
		"https://acct.table.core.windows.net/",
		"https://acct.blob.core.windows.net/?sv=1&sig=2",
		"https://acct.table.cosmos.azure.com:443/",
		"http://127.0.0.1:10002/devstoreaccount1",
		"https://a..b/",
		"https://.table.x/",
		"https://a.table./?sig=%zz",
		"https://[::1]:99/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		for _, build := range []func() (*account.Account, error){
			func() (*account.Account, error) { return account.New(u, staticToken("t"), nil) },
			func() (*account.Account, error) { return account.NewFromSASURL(u, nil) },
		} {
			acct, err := build()
			if err != nil {
				if acct != nil || !errors.Is(err, account.ErrInvalid) {
					t.Fatalf("%q: %v, %v", u, acct, err)
				}
				continue
			}
			if _, err := acct.TableService(); err != nil {
				t.Fatalf("%q: an account without a table service: %v", u, err)
			}
		}
	})
}

// TestNilAccount: the methods of a nil *Account return an error or a zero
// value, never panic.
func TestNilAccount(t *testing.T) {
	var acct *account.Account
	for name, get := range map[string]func() error{
		"TableService": func() error { _, err := acct.TableService(); return err },
		"Table":        func() error { _, err := acct.Table("orders"); return err },
		"QueueService": func() error { _, err := acct.QueueService(); return err },
		"Queue":        func() error { _, err := acct.Queue("work"); return err },
		"BlobService":  func() error { _, err := acct.BlobService(); return err },
		"Container":    func() error { _, err := acct.Container("photos"); return err },
		"WithOptions":  func() error { _, err := acct.WithOptions(nil); return err },
	} {
		if err := get(); !errors.Is(err, account.ErrInvalid) {
			t.Errorf("%s of a nil *Account: %v", name, err)
		}
	}
	if acct.Name() != "" || acct.Endpoints() != (account.Endpoints{}) || acct.Options().Meter != nil || acct.ClientOptions().PerRetryPolicies != nil {
		t.Error("a nil *Account has a name, endpoints or options")
	}
}
