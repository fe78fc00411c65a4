package account_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// quick are options for tests: short retries.
func quick() *account.Options {
	return &account.Options{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{
		MaxRetries: 2, RetryDelay: 50 * time.Millisecond, MaxRetryDelay: 500 * time.Millisecond,
	}}}
}

type Order struct {
	Customer string `table:"PartitionKey,pk"`
	ID       string `table:"RowKey,rk"`
	Amount   float64
}

// useAll writes through every client the account gives — a typed table
// built with entity's constructor, a queue, a container — and checks each
// write with the environment's raw clients, which tablekit did not build.
func useAll(t *testing.T, acct *account.Account) {
	t.Helper()
	ctx := t.Context()
	name := env.TableName(t)
	svc, err := acct.TableService()
	if err != nil {
		t.Fatal(err)
	}
	orders, err := entity.NewTableFromService[Order](svc, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := orders.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := orders.Insert(ctx, &Order{Customer: "c1", ID: "o1", Amount: 12.5}); err != nil {
		t.Fatal(err)
	}
	raw, err := env.TableService.NewClient(name).GetEntity(ctx, "c1", "o1", nil)
	if err != nil || !strings.Contains(string(raw.Value), `"Amount":12.5`) {
		t.Errorf("the order as stored: %s, %v", raw.Value, err)
	}

	qname := env.QueueName(t)
	q, err := acct.Queue(qname)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = env.QueueService.DeleteQueue(context.Background(), qname, nil) })
	if _, err := q.EnqueueMessage(ctx, "hello", nil); err != nil {
		t.Fatal(err)
	}
	peek, err := env.QueueService.NewQueueClient(qname).PeekMessage(ctx, nil)
	if err != nil || len(peek.Messages) != 1 || *peek.Messages[0].MessageText != "hello" {
		t.Errorf("the queue as stored: %+v, %v", peek, err)
	}

	cname := env.ContainerName(t)
	c, err := acct.Container(cname)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = env.BlobService.DeleteContainer(context.Background(), cname, nil) })
	if _, err := c.NewBlockBlobClient("b").UploadBuffer(ctx, []byte("blob body"), nil); err != nil {
		t.Fatal(err)
	}
	got, err := env.BlobService.DownloadStream(ctx, cname, "b", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(got.Body)
	_ = got.Body.Close()
	if err != nil || string(body) != "blob body" {
		t.Errorf("the blob as stored: %q, %v", body, err)
	}
}

// TestConnectionString: the three services of the test account, from its
// connection string with explicit endpoints and the account key.
func TestConnectionString(t *testing.T) {
	acct, err := account.NewFromConnectionString(env.ConnectionString, quick())
	if err != nil {
		t.Fatal(err)
	}
	useAll(t, acct)
}

// accountSAS signs an account SAS for all three services.
func accountSAS(t *testing.T) string {
	t.Helper()
	if env.Live {
		t.Log("signing with the development account's key: a live account needs its own")
	}
	cred, err := aztables.NewSharedKeyCredential(integration.AzuriteAccountName, integration.AzuriteAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	qp, err := aztables.AccountSASSignatureValues{
		Services: "bqt", ResourceTypes: "sco", Permissions: "rwdlacup",
		ExpiryTime: time.Now().Add(time.Hour).UTC(),
	}.Sign(cred)
	if err != nil {
		t.Fatal(err)
	}
	return qp.Encode()
}

// TestSASConnectionString: the same with an account SAS instead of the
// key, in a connection string with explicit endpoints.
func TestSASConnectionString(t *testing.T) {
	if env.Live {
		t.Log("needs the Azurite account's key to sign the SAS")
		return
	}
	cs := "TableEndpoint=" + env.TableEndpoint + ";QueueEndpoint=" + env.QueueEndpoint + ";BlobEndpoint=" + env.BlobEndpoint +
		";SharedAccessSignature=" + accountSAS(t)
	acct, err := account.NewFromConnectionString(cs, quick())
	if err != nil {
		t.Fatal(err)
	}
	useAll(t, acct)
}

// toAzurite is a transport that sends a request for
// https://devstoreaccount1.SERVICE.core.windows.net/… to the test
// Azurite's endpoint of that service: a SAS URL in the form an account
// gives, on the test service.
type toAzurite struct{ endpoints map[string]string }

func (a toAzurite) Do(req *http.Request) (*http.Response, error) {
	service, _, _ := strings.Cut(strings.TrimPrefix(req.URL.Host, integration.AzuriteAccountName+"."), ".")
	ep, err := url.Parse(a.endpoints[service])
	if err != nil || a.endpoints[service] == "" {
		return nil, errors.New("toAzurite: no endpoint for " + req.URL.Host)
	}
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host = ep.Scheme, ep.Host
	out.URL.Path = strings.TrimSuffix(ep.Path, "/") + req.URL.Path
	out.URL.RawPath = ""
	out.Host = ep.Host
	return http.DefaultClient.Do(out)
}

// TestSASURL: an account SAS URL of the blob service gives the table and
// queue services too.
func TestSASURL(t *testing.T) {
	if env.Live {
		t.Log("needs the Azurite account's key to sign the SAS")
		return
	}
	opts := quick()
	opts.ClientOptions.Transport = toAzurite{endpoints: map[string]string{
		"table": env.TableEndpoint, "queue": env.QueueEndpoint, "blob": env.BlobEndpoint,
	}}
	acct, err := account.NewFromSASURL("https://"+integration.AzuriteAccountName+".blob.core.windows.net/?"+accountSAS(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	useAll(t, acct)
}

// TestLostReplySettled: the account's table clients carry tablekit's
// policies, so an insert whose reply was lost (azcore resends it and the
// service answers 409 to the resend) is reported as done; a client built
// with the same options by aztables alone reports the 409.
func TestLostReplySettled(t *testing.T) {
	isInsert := func(r *http.Request) bool {
		return r.Method == http.MethodPost && !strings.Contains(r.URL.Path, "Tables")
	}
	inj := faults.New(faults.Config{})
	opts := quick()
	opts.ClientOptions.PerRetryPolicies = []policy.Policy{inj}
	acct, err := account.NewFromConnectionString(env.ConnectionString, opts)
	if err != nil {
		t.Fatal(err)
	}
	name := env.TableName(t)
	svc, err := acct.TableService()
	if err != nil {
		t.Fatal(err)
	}
	orders, err := entity.NewTableFromService[Order](svc, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := orders.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	inj.LoseNext(1, isInsert)
	if err := orders.Insert(t.Context(), &Order{Customer: "c1", ID: "o1", Amount: 1}); err != nil {
		t.Errorf("Insert whose reply was lost: %v, want success", err)
	}
	if inj.Stats().LostReplies != 1 {
		t.Fatalf("%d replies lost, want 1", inj.Stats().LostReplies)
	}
	if _, err := env.TableService.NewClient(name).GetEntity(t.Context(), "c1", "o1", nil); err != nil {
		t.Errorf("the order is not stored: %v", err)
	}

	// The same options without the account: aztables' client, no tablekit
	// policies, reports the resend's 409 for its own insert.
	bare, err := aztables.NewServiceClientFromConnectionString(env.ConnectionString, &aztables.ClientOptions{ClientOptions: opts.ClientOptions})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := entity.NewTableFromService[Order](bare, name)
	if err != nil {
		t.Fatal(err)
	}
	inj.LoseNext(1, isInsert)
	if err := plain.Insert(t.Context(), &Order{Customer: "c1", ID: "o2", Amount: 1}); !errors.Is(err, entity.ErrAlreadyExists) {
		t.Errorf("Insert through a client without tablekit's policies: %v, want the resend's ErrAlreadyExists (the case the account's clients settle)", err)
	}
}

// TestMeter: Options.Meter counts every request of every client;
// WithOptions gives a metered view while the original stays unmetered.
func TestMeter(t *testing.T) {
	plain, err := account.NewFromConnectionString(env.ConnectionString, quick())
	if err != nil {
		t.Fatal(err)
	}
	meter := cost.NewMeter()
	metered, err := plain.WithOptions(func(o *account.Options) { o.Meter = meter })
	if err != nil {
		t.Fatal(err)
	}
	if plain.Options().Meter != nil || metered.Options().Meter != meter {
		t.Fatal("WithOptions changed the original account's options, or not the view's")
	}
	useAll(t, metered)
	s := meter.Snapshot()
	if s.Count(cost.Table, cost.OpCreateTable) != 1 || s.Count(cost.Table, cost.OpInsert) != 1 ||
		s.Count(cost.Queue, cost.OpCreateQueue) != 1 || s.Count(cost.Queue, cost.OpPutMessage) != 1 || s.Of(cost.Blob) != 2 {
		t.Errorf("the meter counted %v, want one table, one insert, one queue, one message, a container and a blob", s)
	}
	before := meter.Snapshot()
	useAll(t, plain)
	if used := meter.Snapshot().Sub(before).Total(); used != 0 {
		t.Errorf("the unmetered account's requests were counted: %d", used)
	}
}
