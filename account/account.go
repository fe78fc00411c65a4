package account

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/internal/connstr"
	"github.com/tablekit/tablekit/internal/pipeline"
	"github.com/tablekit/tablekit/internal/tablename"
	"github.com/tablekit/tablekit/throttle"
)

// The development account that Azurite serves, which
// "UseDevelopmentStorage=true" stands for.
const (
	DevelopmentAccountName = connstr.DevAccountName
	DevelopmentAccountKey  = connstr.DevAccountKey
)

// Options configure every client an Account builds. The zero value (or a
// nil *Options) means azcore's defaults.
type Options struct {
	// ClientOptions are the caller's azcore options: Retry, Logging,
	// TracingProvider (such as sdk/tracing/azotel's), Transport, Cloud,
	// PerCallPolicies and PerRetryPolicies of its own. The Account works
	// on a copy, to which tablekit's two pipeline policies are added; the
	// slices given are never changed.
	ClientOptions azcore.ClientOptions
	// Meter, when not nil, counts every try of every request of the
	// Account's clients (cost.Meter.Policy as the last per-retry policy,
	// after ClientOptions' own).
	Meter *cost.Meter
	// Limiter, when not nil, paces every try of every client the Account
	// builds — tables, queues and blobs — to the service's scale targets
	// and backs off on throttling (package throttle). The Account and the
	// accounts WithOptions derives from it share this one Limiter, so all
	// their requests count against one schedule per account and per
	// partition. It goes after ClientOptions' per-retry policies and the
	// Meter's, so that the Meter counts a try whether or not it waits.
	Limiter *throttle.Limiter
	// Simulator, when not nil, is a throttling service for tests: it goes
	// last among the per-retry policies, after the Limiter, and answers
	// tries above its rates with 503 Server Busy without sending them.
	// Leave it nil in production.
	Simulator *throttle.Simulator
}

// clone returns a copy of o whose slices are not shared with o's.
func (o Options) clone() Options {
	o.ClientOptions.PerCallPolicies = slices.Clone(o.ClientOptions.PerCallPolicies)
	o.ClientOptions.PerRetryPolicies = slices.Clone(o.ClientOptions.PerRetryPolicies)
	return o
}

// Endpoints are an account's service URLs, each ending with '/' and without
// a SAS; "" for a service the account was given no endpoint for.
type Endpoints struct {
	Table, Queue, Blob string
}

// Account is a storage account's endpoints, credential and client options.
// It holds one service client per service it has an endpoint for, built
// once; its methods hand them out, or clients of a table, queue or container
// made from them. An Account is immutable and safe for concurrent use;
// clients it returns may be shared as the SDK allows.
type Account struct {
	name      string
	endpoints Endpoints
	missing   map[string]string // service → why there is no endpoint

	// One way of authorizing requests.
	key  string // shared key, with name
	sas  string // query of a SAS, without '?'
	cred azcore.TokenCredential

	opts   Options
	tables *aztables.ServiceClient
	queues *azqueue.ServiceClient
	blobs  *azblob.Client
}

// NewFromConnectionString returns the account a storage connection string
// names (see the package documentation for the forms read). opts may be
// nil. A string that cannot be read is a *ConfigError naming the setting
// (FieldConnectionString, or FieldAccountKey for a key that is not base64).
func NewFromConnectionString(connectionString string, opts *Options) (*Account, error) {
	p, err := connstr.Parse(connectionString)
	if err != nil {
		reason := err.Error()
		if ce := (*connstr.Error)(nil); errors.As(err, &ce) {
			reason = ce.Reason
		}
		return nil, &ConfigError{Field: FieldConnectionString, Reason: reason}
	}
	a := &Account{
		name:      p.AccountName,
		endpoints: Endpoints{Table: p.TableEndpoint, Queue: p.QueueEndpoint, Blob: p.BlobEndpoint},
		missing:   map[string]string{},
	}
	if p.AccountKey != "" {
		if _, err := base64.StdEncoding.DecodeString(p.AccountKey); err != nil {
			return nil, &ConfigError{Field: FieldAccountKey, Reason: "is not base64, as the portal's Access keys are"}
		}
		a.key = p.AccountKey
	} else {
		a.sas = p.SAS
	}
	for service, setting := range map[string]string{ServiceTable: "TableEndpoint", ServiceQueue: "QueueEndpoint", ServiceBlob: "BlobEndpoint"} {
		if p.AccountName == "" {
			a.missing[service] = "the connection string sets neither AccountName nor " + setting
		} else {
			// Parse derives an endpoint from a storage account name only.
			a.missing[service] = fmt.Sprintf("the connection string's AccountName is not a storage account name (%s), so no %s endpoint is derived from it: set %s",
				connstr.CheckAccountName(p.AccountName), service, setting)
		}
	}
	return a.build(opts)
}

// New returns the account one of whose service URLs is accountURL,
// https://NAME.table.core.windows.net/ (or .queue., .blob., in any cloud's
// suffix), with the other two derived from it, authorizing every request
// with cred, a Microsoft Entra token credential such as
// azidentity.NewDefaultAzureCredential's. The identity needs the Storage
// Table, Queue and Blob Data Contributor roles (or Reader, for reads).
// opts may be nil.
//
// A URL of another form (Azurite's http://127.0.0.1:10002/devstoreaccount1
// names no service), a URL over http (azcore sends tokens only over https),
// with a query (a SAS: use NewFromSASURL) or a path, and a nil cred are a
// *ConfigError.
func New(accountURL string, cred azcore.TokenCredential, opts *Options) (*Account, error) {
	if cred == nil {
		return nil, &ConfigError{Field: FieldCredential, Reason: "nil azcore.TokenCredential"}
	}
	u, err := serviceURL(FieldAccountURL, accountURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "https" {
		return nil, &ConfigError{Field: FieldAccountURL, Reason: fmt.Sprintf("%q is not https: azcore sends a token credential's tokens over https only", redactURL(u))}
	}
	if u.RawQuery != "" {
		return nil, &ConfigError{Field: FieldAccountURL, Reason: fmt.Sprintf("%q has a query; a URL that carries a SAS goes to NewFromSASURL", redactURL(u))}
	}
	a, err := derive(FieldAccountURL, u)
	if err != nil {
		return nil, err
	}
	a.cred = cred
	return a.build(opts)
}

// NewFromSASURL returns the account one of whose service URLs is sasURL
// without its query, which is an account SAS
// (https://NAME.blob.core.windows.net/?sv=…&ss=bqt&srt=sco&sp=…&sig=…):
// the other two service URLs are derived from it as for New, and the same
// SAS authorizes the requests of all three. opts may be nil. A URL without
// a signature (sig) is a *ConfigError, as is one whose host names no
// service (use a connection string with explicit endpoints and
// SharedAccessSignature).
func NewFromSASURL(sasURL string, opts *Options) (*Account, error) {
	u, err := serviceURL(FieldSASURL, sasURL)
	if err != nil {
		return nil, err
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil || q.Get("sig") == "" {
		return nil, &ConfigError{Field: FieldSASURL, Reason: fmt.Sprintf("%q carries no SAS: its query has no sig", redactURL(u))}
	}
	a, err := derive(FieldSASURL, u)
	if err != nil {
		return nil, err
	}
	a.sas = u.RawQuery
	return a.build(opts)
}

// serviceURL parses an account or SAS URL: http(s), a host, a port (if
// any) from 1 to 65535, no user, no fragment, no path but "/".
func serviceURL(field, raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || raw == "" {
		return nil, &ConfigError{Field: field, Reason: "not a URL such as https://NAME.table.core.windows.net/"}
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, &ConfigError{Field: field, Reason: fmt.Sprintf("%q is not an http(s) URL such as https://NAME.table.core.windows.net/", redactURL(u))}
	case u.Opaque != "" || u.Host == "":
		return nil, &ConfigError{Field: field, Reason: fmt.Sprintf("%q has no host", redactURL(u))}
	case u.User != nil:
		return nil, &ConfigError{Field: field, Reason: "the URL carries a user name or password"}
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, &ConfigError{Field: field, Reason: fmt.Sprintf("%q has a fragment", redactURL(u))}
	case u.Port() != "" && !validPort(u.Port()):
		return nil, &ConfigError{Field: field, Reason: fmt.Sprintf("%q: port %q is not a number from 1 to 65535", redactURL(u), u.Port())}
	case u.Path != "" && u.Path != "/":
		return nil, &ConfigError{Field: field, Reason: fmt.Sprintf("%q has a path: give the service's URL, https://NAME.table.core.windows.net/, "+
			"not a table's, queue's or container's; Azurite's path-style endpoints are reached with a connection string", redactURL(u))}
	}
	return u, nil
}

// derive returns an Account whose endpoints are u's three services: u's
// host is NAME.SERVICE.SUFFIX.
func derive(field string, u *url.URL) (*Account, error) {
	host, port := u.Hostname(), u.Port()
	labels := strings.SplitN(host, ".", 3)
	if len(labels) < 3 || labels[0] == "" || labels[2] == "" ||
		(labels[1] != ServiceTable && labels[1] != ServiceQueue && labels[1] != ServiceBlob) {
		return nil, &ConfigError{Field: field, Reason: fmt.Sprintf("host %q is not NAME.table|queue|blob.SUFFIX, so the other services' URLs cannot be derived from it; "+
			"use a connection string with explicit TableEndpoint, QueueEndpoint and BlobEndpoint", host)}
	}
	name, suffix := labels[0], labels[2]
	cosmos := labels[1] == ServiceTable && strings.HasPrefix(strings.ToLower(suffix), "cosmos.")
	if why := accountName(strings.ToLower(name), cosmos); why != "" {
		return nil, &ConfigError{Field: field, Reason: fmt.Sprintf("host %q: %q is not an account name (%s)", host, name, why)}
	}
	if why := connstr.CheckDNSSuffix(suffix); why != "" {
		return nil, &ConfigError{Field: field, Reason: fmt.Sprintf("host %q: the suffix after the service %s", host, why)}
	}
	if port != "" {
		suffix += ":" + port
	}
	at := func(service string) string { return u.Scheme + "://" + name + "." + service + "." + suffix + "/" }
	a := &Account{name: name, missing: map[string]string{}}
	if cosmos {
		// Cosmos DB for Table: a table service only.
		a.endpoints.Table = at(ServiceTable)
		a.missing[ServiceQueue] = "a Cosmos DB for Table account has no queue service"
		a.missing[ServiceBlob] = "a Cosmos DB for Table account has no blob service"
		return a, nil
	}
	a.endpoints = Endpoints{Table: at(ServiceTable), Queue: at(ServiceQueue), Blob: at(ServiceBlob)}
	return a, nil
}

// accountName returns why name (lower-cased: host names are not
// case-sensitive) is not the account name of a service host, or "": a
// storage account's rule (3 to 24 lower-case letters and digits), or a
// Cosmos DB account's (3 to 44 lower-case letters, digits and hyphens, not
// at either end).
func accountName(name string, cosmos bool) string {
	if !cosmos {
		return connstr.CheckAccountName(name)
	}
	if n := len(name); n < 3 || n > 44 {
		return fmt.Sprintf("a Cosmos DB account name has 3 to 44 characters, not %d", n)
	}
	if name[0] == '-' || name[len(name)-1] == '-' {
		return "a Cosmos DB account name starts and ends with a letter or digit"
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return fmt.Sprintf("a Cosmos DB account name has lower-case letters, digits and hyphens, not %q", c)
		}
	}
	return ""
}

// validPort reports whether port is a number from 1 to 65535.
func validPort(port string) bool {
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535 && len(port) <= 5
}

// build makes the service clients with opts.
func (a *Account) build(opts *Options) (*Account, error) {
	if opts != nil {
		a.opts = opts.clone()
	}
	co := a.ClientOptions()
	withSAS := func(endpoint string) string {
		if a.sas == "" {
			return endpoint
		}
		return endpoint + "?" + a.sas
	}
	var err error
	if ep := a.endpoints.Table; ep != "" {
		o := &aztables.ClientOptions{ClientOptions: co}
		switch {
		case a.cred != nil:
			a.tables, err = aztables.NewServiceClient(ep, a.cred, o)
		case a.key != "":
			var k *aztables.SharedKeyCredential
			if k, err = aztables.NewSharedKeyCredential(a.name, a.key); err == nil {
				a.tables, err = aztables.NewServiceClientWithSharedKey(ep, k, o)
			}
		default:
			a.tables, err = aztables.NewServiceClientWithNoCredential(withSAS(ep), o)
		}
		if err != nil {
			return nil, clientError(ServiceTable, err)
		}
	}
	if ep := a.endpoints.Queue; ep != "" {
		o := &azqueue.ClientOptions{ClientOptions: co}
		switch {
		case a.cred != nil:
			a.queues, err = azqueue.NewServiceClient(ep, a.cred, o)
		case a.key != "":
			var k *azqueue.SharedKeyCredential
			if k, err = azqueue.NewSharedKeyCredential(a.name, a.key); err == nil {
				a.queues, err = azqueue.NewServiceClientWithSharedKeyCredential(ep, k, o)
			}
		default:
			a.queues, err = azqueue.NewServiceClientWithNoCredential(withSAS(ep), o)
		}
		if err != nil {
			return nil, clientError(ServiceQueue, err)
		}
	}
	if ep := a.endpoints.Blob; ep != "" {
		o := &azblob.ClientOptions{ClientOptions: co}
		switch {
		case a.cred != nil:
			a.blobs, err = azblob.NewClient(ep, a.cred, o)
		case a.key != "":
			var k *azblob.SharedKeyCredential
			if k, err = azblob.NewSharedKeyCredential(a.name, a.key); err == nil {
				a.blobs, err = azblob.NewClientWithSharedKeyCredential(ep, k, o)
			}
		default:
			a.blobs, err = azblob.NewClientWithNoCredential(withSAS(ep), o)
		}
		if err != nil {
			return nil, clientError(ServiceBlob, err)
		}
	}
	return a, nil
}

// clientError is an SDK's refusal to build a client from checked
// settings: only the options (such as a Cloud without the service) can
// be at fault.
func clientError(service string, err error) error {
	return &ConfigError{Field: FieldOptions, Reason: fmt.Sprintf("the %s client cannot be built: %v", service, err)}
}

// WithOptions returns the same account (endpoints and credential) with
// clients built with other options: configure changes a copy of a's
// Options, such as adding a Meter or a policy, or changing retries.
//
//	meter := cost.NewMeter()
//	metered, err := acct.WithOptions(func(o *account.Options) { o.Meter = meter })
func (a *Account) WithOptions(configure func(*Options)) (*Account, error) {
	if a == nil {
		return nil, errNilAccount
	}
	b := &Account{name: a.name, endpoints: a.endpoints, missing: a.missing, key: a.key, sas: a.sas, cred: a.cred}
	o := a.opts.clone()
	if configure != nil {
		configure(&o)
	}
	return b.build(&o)
}

// Options returns a copy of the options the account was built with, as
// given (without tablekit's policies).
func (a *Account) Options() Options {
	if a == nil {
		return Options{}
	}
	return a.opts.clone()
}

// ClientOptions returns a copy of the azcore options of the account's
// clients: the caller's, with tablekit's two pipeline policies, the
// Meter's policy, the Limiter and the Simulator added. Use it for a client
// the account does not build, such as a table client from a SAS URL
// (entity/sas.OpenTable), to give it the same retries, logging, tracing,
// meter, pacing and lost-reply settling.
func (a *Account) ClientOptions() azcore.ClientOptions {
	if a == nil {
		return azcore.ClientOptions{}
	}
	o := a.opts.clone().ClientOptions
	pipeline.Install(&o)
	if a.opts.Meter != nil {
		o.PerRetryPolicies = append(o.PerRetryPolicies, a.opts.Meter.Policy())
	}
	if a.opts.Limiter != nil {
		o.PerRetryPolicies = append(o.PerRetryPolicies, a.opts.Limiter)
	}
	if a.opts.Simulator != nil {
		o.PerRetryPolicies = append(o.PerRetryPolicies, a.opts.Simulator)
	}
	return o
}

// Name returns the account's name, "" when it was not given (a connection
// string with explicit endpoints and a SAS only).
func (a *Account) Name() string {
	if a == nil {
		return ""
	}
	return a.name
}

// Endpoints returns the account's service URLs, without any SAS.
func (a *Account) Endpoints() Endpoints {
	if a == nil {
		return Endpoints{}
	}
	return a.endpoints
}

func (a *Account) noEndpoint(service string) error {
	return &EndpointError{Service: service, Reason: a.missing[service]}
}

// TableService returns the account's table service client, for
// entity.NewTableFromService and the patterns that take one. It is an
// *EndpointError when the account has no table endpoint.
func (a *Account) TableService() (*aztables.ServiceClient, error) {
	if a == nil {
		return nil, errNilAccount
	}
	if a.tables == nil {
		return nil, a.noEndpoint(ServiceTable)
	}
	return a.tables, nil
}

// Table returns a client of the named table (not created), for
// entity.NewTable. A name that breaks the service's rule (3 to 63 letters
// and digits, starting with a letter, not "tables") is a *ConfigError.
func (a *Account) Table(name string) (*aztables.Client, error) {
	svc, err := a.TableService()
	if err != nil {
		return nil, err
	}
	if msg := tablename.Check(name); msg != "" {
		return nil, &ConfigError{Field: FieldTableName, Reason: fmt.Sprintf("%q: %s", name, msg)}
	}
	return svc.NewClient(name), nil
}

// QueueService returns the account's queue service client, for
// eventual.QueuesOf. It is an *EndpointError when the account has no queue
// endpoint.
func (a *Account) QueueService() (*azqueue.ServiceClient, error) {
	if a == nil {
		return nil, errNilAccount
	}
	if a.queues == nil {
		return nil, a.noEndpoint(ServiceQueue)
	}
	return a.queues, nil
}

// Queue returns a client of the named queue (not created). A name that
// breaks the service's rule (3 to 63 lower-case letters, digits and
// hyphens, starting with a letter or digit, no two hyphens in a row, not
// ending with one) is a *ConfigError.
func (a *Account) Queue(name string) (*azqueue.QueueClient, error) {
	svc, err := a.QueueService()
	if err != nil {
		return nil, err
	}
	if msg := checkName("queue", name); msg != "" {
		return nil, &ConfigError{Field: FieldQueueName, Reason: fmt.Sprintf("%q: %s", name, msg)}
	}
	return svc.NewQueueClient(name), nil
}

// BlobService returns the account's blob service client. It is an
// *EndpointError when the account has no blob endpoint.
func (a *Account) BlobService() (*azblob.Client, error) {
	if a == nil {
		return nil, errNilAccount
	}
	if a.blobs == nil {
		return nil, a.noEndpoint(ServiceBlob)
	}
	return a.blobs, nil
}

// Container returns a client of the named blob container (not created),
// for large and bloblog. A name that breaks the service's rule (as for
// Queue; "$root", "$logs" and "$web" are allowed too) is a *ConfigError.
func (a *Account) Container(name string) (*container.Client, error) {
	svc, err := a.BlobService()
	if err != nil {
		return nil, err
	}
	if name != "$root" && name != "$logs" && name != "$web" {
		if msg := checkName("container", name); msg != "" {
			return nil, &ConfigError{Field: FieldContainerName, Reason: fmt.Sprintf("%q: %s", name, msg)}
		}
	}
	return svc.ServiceClient().NewContainerClient(name), nil
}

// checkName returns why name is not a valid queue or container name, or
// "".
func checkName(kind, name string) string {
	if n := len(name); n < 3 || n > 63 {
		return fmt.Sprintf("a %s name has 3 to 63 characters, not %d", kind, n)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case c == '-':
			if i == 0 || i == len(name)-1 {
				return fmt.Sprintf("a %s name starts and ends with a letter or digit", kind)
			}
			if name[i-1] == '-' {
				return fmt.Sprintf("a %s name has no two hyphens in a row", kind)
			}
		default:
			return fmt.Sprintf("character %q at %d is not allowed in a %s name (lower-case letters, digits and hyphens)", c, i, kind)
		}
	}
	return ""
}

// redactURL writes u as its scheme and host, marking what else it has.
func redactURL(u *url.URL) string {
	if u.Opaque != "" {
		return u.Scheme + ":…"
	}
	// Only the scheme and host are shown: the query may carry a SAS, the
	// user information a password, and the path or fragment a query typed
	// without its '?' (https://host/sv=…&sig=…).
	s := u.Scheme + "://" + u.Host
	if u.Path != "" && u.Path != "/" {
		s += "/…"
	} else {
		s += u.Path
	}
	if u.RawQuery != "" || u.ForceQuery {
		s += "?…"
	}
	if u.Fragment != "" || u.RawFragment != "" {
		s += "#…"
	}
	return s
}
