package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/integration/azurite"
	"github.com/tablekit/tablekit/internal/connstr"
	"github.com/tablekit/tablekit/internal/pipeline"
	"github.com/tablekit/tablekit/throttle"
)

// Environment variables read by Start.
const (
	// EnvConnectionString names a variable holding a storage account
	// connection string. When set, Start uses that account instead of
	// starting Azurite.
	EnvConnectionString = "TABLEKIT_CONNECTION_STRING"
	// EnvAccountURL names a variable holding a table service endpoint such as
	// https://myaccount.table.core.windows.net/. When set (and
	// EnvConnectionString is not), Start uses that account with
	// azidentity.NewDefaultAzureCredential.
	EnvAccountURL = "TABLEKIT_ACCOUNT_URL"
	// EnvAzurite names a variable holding the path of the azurite executable
	// to run, overriding the search described in package azurite.
	EnvAzurite = azurite.EnvAzurite
	// EnvAzuriteTimeout names a variable holding how long Start waits for a
	// started Azurite to answer, as a Go duration; 60s when unset.
	EnvAzuriteTimeout = azurite.EnvTimeout
	// EnvShared names a variable holding the connection strings of Azurite
	// processes that are already running, one per line, as the sharedrun
	// command (integration/azurite/sharedrun) sets it for the command it
	// runs. When it is set, and neither EnvConnectionString nor
	// EnvAccountURL is, Main uses one of them instead of starting an Azurite
	// of its own: the test binaries of one `go test ./...` share a few
	// emulators instead of starting one each. Start always starts its own.
	EnvShared = "TABLEKIT_AZURITE_SHARED"
)

// The well-known development account that Azurite serves.
const (
	AzuriteAccountName = azurite.AccountName
	AzuriteAccountKey  = azurite.AccountKey
)

// Timeouts for the requests the helpers make on a test's behalf.
const (
	opTimeout      = 30 * time.Second
	cleanupTimeout = 30 * time.Second
)

// Env is a ready storage account for tests: an Azurite process started by
// Start, or a live account named by the environment. Its methods are safe
// for concurrent use by parallel tests.
type Env struct {
	// ConnectionString reaches all three services of the account. It is
	// empty when the account is used through a Microsoft Entra credential
	// (TABLEKIT_ACCOUNT_URL); Credential is set instead.
	ConnectionString string
	// Live reports that the account is a real one from the environment,
	// not an Azurite process started for the tests.
	Live bool

	// Clients for the three services, built with ClientOptions by
	// Account. QueueService and BlobService are nil for an account
	// without those services (Cosmos DB for Table).
	TableService *aztables.ServiceClient
	QueueService *azqueue.ServiceClient
	BlobService  *azblob.Client

	// Service endpoints. TableEndpoint ends with a slash, which
	// aztables.Client.GetTableSASURL needs.
	TableEndpoint string
	QueueEndpoint string
	BlobEndpoint  string

	// Credential is the Microsoft Entra credential used with
	// TABLEKIT_ACCOUNT_URL; nil otherwise.
	Credential azcore.TokenCredential

	// StartupDuration is how long Start took to have all three services
	// answer (zero for a live account).
	StartupDuration time.Duration
	// Shared reports an Azurite that this Env did not start and Close does
	// not stop: one of those named by TABLEKIT_AZURITE_SHARED ([EnvShared]).
	// Other test binaries use it at the same time.
	Shared bool

	server      *azurite.Server               // nil for a live account
	account     *account.Account              // the clients' account
	names       *namer                        // shared by an Env and its views
	profile     *tableProfile                 // TABLEKIT_PROFILE's, shared with views; nil for none
	configure   []func(*azcore.ClientOptions) // a view's changes to client options
	view        bool                          // made by With: Close leaves the process alone
	wantProfile string                        // TABLEKIT_PROFILE, until connect makes profile
	viewErr     error                         // why a view's clients could not be built
	closeOnce   sync.Once
	closeErr    error
}

// namer hands out unique names; an Env and every view made by With share one.
type namer struct {
	prefix string // random per Env
	seq    atomic.Uint64
}

// With returns a view of the same account whose service clients, and the
// clients its Table, Queue, Container, Scratch… and TableWith methods build,
// carry policies as extra per-retry pipeline policies: a cost meter, or a
// fault injector for a test that checks what a lost reply does.
//
//	meter := cost.NewMeter()
//	metered := env.With(meter.Policy())
//	queue := metered.Queue(t) // every try of every request counted
//
// The view shares the environment's process and names; closing it does
// nothing. Policies of e come first.
func (e *Env) With(policies ...policy.Policy) *Env {
	return e.WithOptions(func(o *azcore.ClientOptions) {
		o.PerRetryPolicies = append(o.PerRetryPolicies, policies...)
	})
}

// WithOptions is With for any client option: configure is applied to the
// options of every client the view builds, after e's own changes — logging,
// a tracing provider, retry settings, transport.
func (e *Env) WithOptions(configure func(*azcore.ClientOptions)) *Env {
	v := &Env{
		ConnectionString: e.ConnectionString,
		Live:             e.Live,
		TableEndpoint:    e.TableEndpoint,
		QueueEndpoint:    e.QueueEndpoint,
		BlobEndpoint:     e.BlobEndpoint,
		Credential:       e.Credential,
		StartupDuration:  e.StartupDuration,
		Shared:           e.Shared,
		server:           e.server,
		names:            e.names,
		profile:          e.profile,
		configure:        append(slices.Clone(e.configure), configure),
		view:             true,
	}
	v.viewErr = v.connect()
	return v
}

// applyView applies a view's changes to client options.
func (e *Env) applyView(o *azcore.ClientOptions) {
	o.PerRetryPolicies = append([]policy.Policy(nil), o.PerRetryPolicies...) // never alias the caller's
	for _, c := range e.configure {
		c(o)
	}
}

// usable fails the test when the view's clients could not be built.
func (e *Env) usable(tb testing.TB) {
	tb.Helper()
	if e.viewErr != nil {
		tb.Fatalf("integration: clients of an Env view: %v", e.viewErr)
	}
}

// Start returns a ready environment. With TABLEKIT_CONNECTION_STRING or
// TABLEKIT_ACCOUNT_URL set it connects to that account and checks that its
// table service answers; otherwise it starts Azurite on free loopback ports,
// in memory, and waits (at most about 60 seconds, or until ctx ends) until
// the table, queue and blob services all answer a request. The caller must
// call Close.
func Start(ctx context.Context) (*Env, error) {
	e, err := newEnv()
	if err != nil {
		return nil, err
	}
	switch {
	case os.Getenv(EnvConnectionString) != "":
		if err := e.useConnectionString(ctx, os.Getenv(EnvConnectionString)); err != nil {
			return nil, fmt.Errorf("integration: %s: %w", EnvConnectionString, err)
		}
	case os.Getenv(EnvAccountURL) != "":
		if err := e.useAccountURL(ctx, os.Getenv(EnvAccountURL)); err != nil {
			return nil, fmt.Errorf("integration: %s: %w", EnvAccountURL, err)
		}
	default:
		srv, err := azurite.Start(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("integration: %w", err)
		}
		e.server = srv
		e.ConnectionString = srv.ConnectionString
		e.TableEndpoint, e.QueueEndpoint, e.BlobEndpoint = srv.TableEndpoint, srv.QueueEndpoint, srv.BlobEndpoint
		e.StartupDuration = srv.StartupDuration
		if err := e.connect(); err != nil {
			return nil, errors.Join(fmt.Errorf("integration: clients of Azurite: %w", err), srv.Close())
		}
	}
	return e, nil
}

// newEnv returns an Env with its names and profile, not yet connected.
func newEnv() (*Env, error) {
	var prefix [3]byte
	if _, err := rand.Read(prefix[:]); err != nil {
		return nil, err
	}
	e := &Env{names: &namer{prefix: hex.EncodeToString(prefix[:])}}
	profile, err := profileFromEnv()
	if err != nil {
		return nil, fmt.Errorf("integration: %w", err)
	}
	// The profile is made once the table endpoint is known (connect).
	e.wantProfile = profile
	return e, nil
}

// startForMain is Start, or one of the Azurites named by EnvShared when
// that is set and no account is named.
func startForMain(ctx context.Context) (*Env, error) {
	shared := os.Getenv(EnvShared)
	if shared == "" || os.Getenv(EnvConnectionString) != "" || os.Getenv(EnvAccountURL) != "" {
		return Start(ctx)
	}
	cs, err := pickShared(shared, os.Args[0])
	if err != nil {
		return nil, fmt.Errorf("integration: %s: %w", EnvShared, err)
	}
	e, err := newEnv()
	if err != nil {
		return nil, err
	}
	if err := e.useShared(ctx, cs); err != nil {
		return nil, fmt.Errorf("integration: %s: %w", EnvShared, err)
	}
	return e, nil
}

// pickShared chooses one of the connection strings listed in shared, by a
// hash of the test binary's name: the same package uses the same emulator
// on every run, and packages spread over all of them.
func pickShared(shared, binary string) (string, error) {
	var list []string
	for line := range strings.Lines(shared) {
		if line = strings.TrimSpace(line); line != "" {
			list = append(list, line)
		}
	}
	if len(list) == 0 {
		return "", errors.New("no connection string listed")
	}
	h := fnv.New32a()
	h.Write([]byte(filepath.Base(binary)))
	return list[h.Sum32()%uint32(len(list))], nil
}

// Close stops the Azurite process that Start started, with every process of
// its process group, and waits until they are gone. For a live account, or a
// view made by With, it does nothing. Close may be called more than once.
func (e *Env) Close() error {
	e.closeOnce.Do(func() {
		if e.server != nil && !e.view {
			e.closeErr = e.server.Close()
		}
	})
	return e.closeErr
}

// PID returns the process id of the Azurite process, or 0 for a live
// account.
func (e *Env) PID() int {
	if e.server == nil {
		return 0
	}
	return e.server.PID()
}

// Account returns the account of the Env's clients: production wiring
// (package account) with the test client options and the changes of a
// view made by With or WithOptions, for code under test that takes an
// *account.Account.
func (e *Env) Account() *account.Account { return e.account }

// ThrottledAccount is the Env's account with azcore's default retry
// options and a throttle.Simulator serving cfg's rates in front of
// Azurite, every request paced by lim when it is not nil: the setting of a
// test that a fan-out goes through an account's shared Limiter (with lim)
// and what it meets without one (nil).
func (e *Env) ThrottledAccount(t testing.TB, lim *throttle.Limiter, cfg throttle.SimConfig) (*account.Account, *throttle.Simulator) {
	t.Helper()
	sim, err := throttle.NewSimulator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	acct, err := e.account.WithOptions(func(o *account.Options) {
		o.ClientOptions.Retry = policy.RetryOptions{}
		o.Limiter, o.Simulator = lim, sim
	})
	if err != nil {
		t.Fatal(err)
	}
	return acct, sim
}

// Main runs a package's tests against an environment. Call it from TestMain:
//
//	var env *integration.Env
//
//	func TestMain(m *testing.M) { integration.Main(m, &env) }
//
// It starts the environment, stores it in *env, runs the tests, closes the
// environment and exits with the tests' status. When the environment cannot
// be started it prints why and exits with status 1: the tests fail, they
// are never skipped silently. A fuzzing run (go test -fuzz) starts no
// environment and leaves *env nil: fuzz targets test pure functions.
func Main(m *testing.M, env **Env) {
	os.Exit(run(m, env))
}

func run(m *testing.M, env **Env) (code int) {
	// A fuzzing run (-fuzz, and each of its worker processes) exercises pure
	// functions: it starts no environment, which would otherwise start once
	// per worker. *env stays nil.
	if !flag.Parsed() {
		flag.Parse()
	}
	if isFuzzing() {
		return m.Run()
	}
	// The bound covers a first-time installation of Azurite with npm.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	e, err := startForMain(ctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: cannot start the test environment: %v\n", err)
		if out := azurite.Output(err); out != "" {
			fmt.Fprintf(os.Stderr, "its output ends:\n%s\n", out)
		}
		return 1
	}
	*env = e
	defer func() {
		if err := e.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "integration: closing the test environment: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}()
	return m.Run()
}

func isFuzzing() bool {
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		return true
	}
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}

// ClientOptions returns options suited to tests: at most two retries, 50 ms
// apart at first and never more than 500 ms, instead of azcore's default of
// three retries with delays of seconds. Each call returns a new value.
func (e *Env) ClientOptions() *aztables.ClientOptions {
	return &aztables.ClientOptions{ClientOptions: e.testClientOptions()}
}

// NoRetryClientOptions returns options that make one try and no retry, for
// tests that expect an error: azcore otherwise retries a 500 with growing
// delays, which makes such a test take many seconds.
func (e *Env) NoRetryClientOptions() *aztables.ClientOptions {
	o := e.testClientOptions()
	o.Retry.MaxRetries = -1
	return &aztables.ClientOptions{ClientOptions: o}
}

// testClientOptions are the options of the clients an Env builds: short
// retries. The policies of a view are added where clients are built
// (connect, NewTableService), so options passed back in are not doubled.
func (e *Env) testClientOptions() azcore.ClientOptions {
	o := azcore.ClientOptions{Retry: policy.RetryOptions{
		MaxRetries:    2,
		RetryDelay:    50 * time.Millisecond,
		MaxRetryDelay: 500 * time.Millisecond,
	}}
	// tablekit's pipeline policies, as entity.ClientOptions adds them, so
	// that tests run the product's paths: transactions for every key,
	// writes settled under lost replies. They change no request.
	pipeline.Install(&o)
	// TABLEKIT_PROFILE's policy, for the table service's requests.
	e.addProfile(&o)
	return o
}

// NewTableService returns a new table service client for the account, built
// with opts (nil means azcore's defaults) and nothing else: tablekit's
// pipeline policies only when opts has them (ClientOptions), so that a test
// can build the client a user builds without entity.ClientOptions. The
// changes of a view made by With or WithOptions are applied to a copy of
// opts. The connection string is read as package account and
// entity.NewTableFromConnectionString read it (internal/connstr), not by
// aztables' parser, which sends a SAS connection string's requests to
// https://AccountName.table.core.windows.net/ whatever its TableEndpoint
// says: the client's requests go to TableEndpoint, signed with the
// AccountKey or carrying the SharedAccessSignature
// (TestNewTableServiceFromSASConnectionString).
func (e *Env) NewTableService(opts *aztables.ClientOptions) (*aztables.ServiceClient, error) {
	if len(e.configure) > 0 || e.profile != nil {
		o := aztables.ClientOptions{}
		if opts != nil {
			o = *opts
		}
		e.applyView(&o.ClientOptions)
		e.addProfile(&o.ClientOptions)
		opts = &o
	}
	if e.ConnectionString != "" {
		return tableServiceOf(e.ConnectionString, opts)
	}
	return aztables.NewServiceClient(e.TableEndpoint, e.Credential, opts)
}

// tableServiceOf builds the table service client of a connection string,
// read by internal/connstr, with opts as given.
func tableServiceOf(connectionString string, opts *aztables.ClientOptions) (*aztables.ServiceClient, error) {
	p, err := connstr.Parse(connectionString)
	if err != nil {
		return nil, err
	}
	if p.TableEndpoint == "" {
		return nil, errors.New("integration: the connection string gives no table endpoint")
	}
	if p.AccountKey != "" {
		cred, err := aztables.NewSharedKeyCredential(p.AccountName, p.AccountKey)
		if err != nil {
			return nil, err
		}
		return aztables.NewServiceClientWithSharedKey(p.TableEndpoint, cred, opts)
	}
	// The SAS goes on the endpoint's query, which aztables adds to every
	// request's URL.
	return aztables.NewServiceClientWithNoCredential(p.TableEndpoint+"?"+p.SAS, opts)
}

// TableName returns a new table name, unique across the calls on all
// environments, that is valid for tables, queues and containers alike. The
// table is not created; tb.Cleanup deletes it if the test created it.
func (e *Env) TableName(tb testing.TB) string {
	tb.Helper()
	name := e.newName(tb)
	svc := e.TableService
	tb.Cleanup(func() {
		if err := dropTable(svc, name); err != nil {
			tb.Error(err)
		}
	})
	return name
}

// QueueName returns a new queue name, not created, unique like TableName.
func (e *Env) QueueName(tb testing.TB) string { return e.newName(tb) }

// ContainerName returns a new blob container name, not created, unique like
// TableName.
func (e *Env) ContainerName(tb testing.TB) string { return e.newName(tb) }

// Table creates a table with a unique name and returns a client for it. The
// table is deleted when the test and its subtests end (tb.Cleanup).
func (e *Env) Table(tb testing.TB) *aztables.Client {
	tb.Helper()
	e.usable(tb)
	return e.createTable(tb, e.TableService)
}

// TableWith is Table with a client built with opts, such as
// NoRetryClientOptions for a test that expects errors.
func (e *Env) TableWith(tb testing.TB, opts *aztables.ClientOptions) *aztables.Client {
	tb.Helper()
	svc, err := e.NewTableService(opts)
	if err != nil {
		tb.Fatalf("integration: table service client: %v", err)
	}
	return e.createTable(tb, svc)
}

func (e *Env) createTable(tb testing.TB, svc *aztables.ServiceClient) *aztables.Client {
	tb.Helper()
	return scratchT(tb, e, func(ctx context.Context, hint string) (*aztables.Client, func() error, error) {
		return e.scratchTable(ctx, svc, hint)
	})
}

// Queue creates a queue with a unique name and returns a client for it. The
// queue is deleted when the test ends.
func (e *Env) Queue(tb testing.TB) *azqueue.QueueClient {
	tb.Helper()
	return scratchT(tb, e, e.ScratchQueue)
}

// Container creates a blob container with a unique name and returns a client
// for it. The container is deleted when the test ends.
func (e *Env) Container(tb testing.TB) *container.Client {
	tb.Helper()
	return scratchT(tb, e, e.ScratchContainer)
}

// scratchT creates a scratch resource named after the test, fails the test
// when it cannot, and deletes it when the test and its subtests end.
func scratchT[C any](tb testing.TB, e *Env, create func(context.Context, string) (C, func() error, error)) C {
	tb.Helper()
	e.usable(tb)
	ctx, cancel := context.WithTimeout(tb.Context(), opTimeout)
	defer cancel()
	c, drop, err := create(ctx, tb.Name())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := drop(); err != nil {
			tb.Error(err)
		}
	})
	return c
}

// newName returns "tk", up to 16 letters and digits of the test's name, the
// environment's random prefix, a six-digit counter and eight random hex
// digits: lower-case alphanumeric, starting with a letter, at most 44
// characters, so valid as a table, queue and container name.
func (e *Env) newName(tb testing.TB) string {
	name, err := e.uniqueName(tb.Name())
	if err != nil {
		tb.Fatalf("integration: %v", err)
	}
	return name
}

// uniqueName is newName for a hint that is not a test's name.
func (e *Env) uniqueName(hint string) (string, error) {
	var b strings.Builder
	b.WriteString("tk")
	n := 0
	for _, r := range strings.ToLower(hint) {
		if n == 16 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			n++
		}
	}
	var rnd [4]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "%s%06d%s", e.names.prefix, e.names.seq.Add(1), hex.EncodeToString(rnd[:]))
	return b.String(), nil
}

func isNotFound(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusNotFound
}

// useConnectionString sets e up for a live account reached with a
// connection string.
func (e *Env) useConnectionString(ctx context.Context, cs string) error {
	// Parsed once: a malformed string is named before any client is built,
	// and UseDevelopmentStorage=true becomes explicit endpoints, which the
	// SDKs' own FromConnectionString constructors accept (tests use them).
	normal, err := connstr.Normalize(cs)
	if err != nil {
		return err
	}
	e.Live = true
	e.ConnectionString = normal
	if err := e.connect(); err != nil {
		return err
	}
	ep := e.account.Endpoints()
	e.TableEndpoint, e.QueueEndpoint, e.BlobEndpoint = ep.Table, ep.Queue, ep.Blob
	return e.checkTables(ctx)
}

// useShared sets e up for an Azurite that another process started and
// stops: not live, and not e's to close.
func (e *Env) useShared(ctx context.Context, cs string) error {
	if err := e.useConnectionString(ctx, cs); err != nil {
		return err
	}
	e.Live, e.Shared = false, true
	return nil
}

// useAccountURL sets e up for a live account reached with
// DefaultAzureCredential.
func (e *Env) useAccountURL(ctx context.Context, tableURL string) error {
	if !strings.Contains(tableURL, ".table.") {
		// Shown without its query and user: they may hold a SAS or a password.
		return fmt.Errorf("%q is not a table endpoint like https://ACCOUNT.table.core.windows.net/", connstr.RedactURL(tableURL))
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return err
	}
	e.Live = true
	e.Credential = cred
	e.TableEndpoint = tableURL
	if err := e.connect(); err != nil {
		return err
	}
	ep := e.account.Endpoints()
	e.TableEndpoint, e.QueueEndpoint, e.BlobEndpoint = ep.Table, ep.Queue, ep.Blob
	return e.checkTables(ctx)
}

// connect builds the account and its three service clients with the test
// options and the view's changes: from the connection string, or from the
// table endpoint and the credential.
func (e *Env) connect() error {
	if e.wantProfile == ProfileCosmos && e.profile == nil {
		qep, bep := e.QueueEndpoint, e.BlobEndpoint
		if qep == "" && bep == "" { // a live account: it derives them
			var a *account.Account
			var err error
			if e.ConnectionString != "" {
				a, err = account.NewFromConnectionString(e.ConnectionString, nil)
			} else {
				a, err = account.New(e.TableEndpoint, e.Credential, nil)
			}
			if err != nil {
				return err
			}
			qep, bep = a.Endpoints().Queue, a.Endpoints().Blob
		}
		p, err := newTableProfile(qep, bep)
		if err != nil {
			return err
		}
		e.profile = p
	}
	opts := &account.Options{ClientOptions: e.testClientOptions()}
	e.applyView(&opts.ClientOptions)
	e.addProfile(&opts.ClientOptions)
	var err error
	if e.ConnectionString != "" {
		e.account, err = account.NewFromConnectionString(e.ConnectionString, opts)
	} else {
		e.account, err = account.New(e.TableEndpoint, e.Credential, opts)
	}
	if err != nil {
		return err
	}
	if e.TableService, err = e.account.TableService(); err != nil {
		return err
	}
	// A Cosmos DB for Table account has no queues and blobs: the Scratch
	// methods say so when asked.
	e.QueueService, _ = e.account.QueueService()
	e.BlobService, _ = e.account.BlobService()
	return nil
}

// checkTables makes one request to the live table service, so that a wrong
// account fails at start-up with a clear error rather than in every test.
// Queues and blobs are not checked: a Cosmos DB Table API account has
// neither.
func (e *Env) checkTables(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	top := int32(1)
	pager := e.TableService.NewListTablesPager(&aztables.ListTablesOptions{Top: &top})
	if _, err := pager.NextPage(ctx); err != nil {
		return fmt.Errorf("table service at %s does not answer: %w", e.TableEndpoint, err)
	}
	return nil
}
