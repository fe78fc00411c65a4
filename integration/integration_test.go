package integration_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

func TestEnvironment(t *testing.T) {
	if env.ConnectionString == "" && env.Credential == nil {
		t.Fatal("neither a connection string nor a credential")
	}
	if env.TableService == nil || env.QueueService == nil || env.BlobService == nil {
		t.Fatal("service clients missing")
	}
	if !strings.HasSuffix(env.TableEndpoint, "/") {
		t.Errorf("TableEndpoint %q lacks the trailing slash GetTableSASURL needs", env.TableEndpoint)
	}
	if env.Shared {
		if env.PID() != 0 {
			t.Errorf("PID() = %d for a shared Azurite this Env did not start", env.PID())
		}
		t.Logf("shared Azurite at %s", env.TableEndpoint)
	} else if !env.Live {
		if env.PID() <= 0 {
			t.Errorf("PID() = %d for a started Azurite", env.PID())
		}
		t.Logf("Azurite pid %d answered in %v", env.PID(), env.StartupDuration)
	}
}

func TestTableService(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	table := env.Table(t)
	entity := aztables.EDMEntity{
		Entity: aztables.Entity{PartitionKey: "p", RowKey: "r"},
		Properties: map[string]any{
			"Name":  "tablekit",
			"Count": aztables.EDMInt64(42),
		},
	}
	body, err := entity.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := table.AddEntity(ctx, body, nil); err != nil {
		t.Fatalf("AddEntity: %v", err)
	}
	got, err := table.GetEntity(ctx, "p", "r", nil)
	if err != nil {
		t.Fatalf("GetEntity: %v", err)
	}
	var back aztables.EDMEntity
	if err := back.UnmarshalJSON(got.Value); err != nil {
		t.Fatal(err)
	}
	if back.Properties["Name"] != "tablekit" || back.Properties["Count"] != aztables.EDMInt64(42) {
		t.Errorf("read back %v", back.Properties)
	}
}

func TestQueueService(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	queue := env.Queue(t)
	if _, err := queue.EnqueueMessage(ctx, "hello", nil); err != nil {
		t.Fatalf("EnqueueMessage: %v", err)
	}
	resp, err := queue.DequeueMessage(ctx, nil)
	if err != nil {
		t.Fatalf("DequeueMessage: %v", err)
	}
	if len(resp.Messages) != 1 || resp.Messages[0].MessageText == nil || *resp.Messages[0].MessageText != "hello" {
		t.Errorf("dequeued %+v", resp.Messages)
	}
}

func TestBlobService(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := env.Container(t)
	blob := c.NewBlockBlobClient("greeting.txt")
	if _, err := blob.UploadBuffer(ctx, []byte("hello, blob"), &blockblob.UploadBufferOptions{}); err != nil {
		t.Fatalf("UploadBuffer: %v", err)
	}
	resp, err := blob.DownloadStream(ctx, nil)
	if err != nil {
		t.Fatalf("DownloadStream: %v", err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "hello, blob" {
		t.Errorf("downloaded %q", data)
	}
}

// TestConnectionString checks that clients built by hand from the connection
// string reach the same account.
func TestConnectionString(t *testing.T) {
	if env.ConnectionString == "" {
		t.Log("does not apply: a live account reached through a credential has no connection string")
		return
	}
	t.Parallel()
	ctx := t.Context()
	name := env.TableName(t)
	svc, err := aztables.NewServiceClientFromConnectionString(env.ConnectionString, env.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(ctx, name, nil); err != nil {
		t.Fatalf("CreateTable through the connection string: %v", err)
	}
	if !tableExists(t, name) {
		t.Errorf("table %s created through the connection string is not seen by env.TableService", name)
	}
	qs, err := azqueue.NewServiceClientFromConnectionString(env.ConnectionString, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := qs.GetServiceProperties(ctx, nil); err != nil {
		t.Errorf("queue service through the connection string: %v", err)
	}
}

func TestTableSASURL(t *testing.T) {
	if env.ConnectionString == "" {
		t.Log("does not apply: SAS needs a shared key, and this live account uses a credential")
		return
	}
	t.Parallel()
	table := env.Table(t)
	u, err := table.GetTableSASURL(aztables.SASPermissions{Read: true}, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(u, env.TableEndpoint+"tk") {
		t.Errorf("SAS URL %q does not start with %q + the table name", u, env.TableEndpoint)
	}
}

var validName = regexp.MustCompile(`^[a-z][a-z0-9]{2,62}$`)

func TestNamesUnique(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var name string
			switch i % 3 {
			case 0:
				name = env.TableName(t)
			case 1:
				name = env.QueueName(t)
			default:
				name = env.ContainerName(t)
			}
			mu.Lock()
			defer mu.Unlock()
			if seen[name] {
				t.Errorf("name %s given twice", name)
			}
			seen[name] = true
		}()
	}
	wg.Wait()
	for name := range seen {
		if !validName.MatchString(name) {
			t.Errorf("name %q is not a valid table, queue and container name", name)
		}
	}
	if len(seen) != 100 {
		t.Errorf("%d distinct names from 100 calls", len(seen))
	}
}

func TestNamesFromLongTestNames(t *testing.T) {
	t.Run(strings.Repeat("Very_Long/Sub-test name ", 10), func(t *testing.T) {
		name := env.TableName(t)
		if !validName.MatchString(name) {
			t.Errorf("name %q is not valid", name)
		}
	})
	t.Run("123_starts_with_digits", func(t *testing.T) {
		name := env.TableName(t)
		if !validName.MatchString(name) {
			t.Errorf("name %q is not valid", name)
		}
	})
}

func TestTableDeletedAfterTest(t *testing.T) {
	var name string
	t.Run("uses", func(t *testing.T) {
		table := env.Table(t)
		name = tableNameOf(t, table)
		if !tableExists(t, name) {
			t.Fatalf("table %s does not exist during the test", name)
		}
	})
	if name == "" {
		t.Fatal("subtest did not report its table")
	}
	if tableExists(t, name) {
		t.Errorf("table %s still exists after the subtest ended", name)
	}
}

func TestTableNameCreatedIsDeleted(t *testing.T) {
	var name string
	t.Run("creates", func(t *testing.T) {
		name = env.TableName(t)
		if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
			t.Fatal(err)
		}
	})
	if tableExists(t, name) {
		t.Errorf("table %s, named by TableName and created by the test, still exists after it", name)
	}
}

func TestQueueAndContainerDeletedAfterTest(t *testing.T) {
	var queue, ctr string
	t.Run("uses", func(t *testing.T) {
		queue = lastPathElem(env.Queue(t).URL())
		ctr = lastPathElem(env.Container(t).URL())
	})
	ctx := t.Context()
	if _, err := env.QueueService.NewQueueClient(queue).GetProperties(ctx, nil); !isStatus(err, http.StatusNotFound) {
		t.Errorf("queue %s after the subtest: err = %v, want 404", queue, err)
	}
	if _, err := env.BlobService.ServiceClient().NewContainerClient(ctr).GetProperties(ctx, nil); !isStatus(err, http.StatusNotFound) {
		t.Errorf("container %s after the subtest: err = %v, want 404", ctr, err)
	}
}

func TestNoRetryClientOptions(t *testing.T) {
	t.Parallel()
	o := env.NoRetryClientOptions()
	if o.Retry.MaxRetries != -1 {
		t.Errorf("MaxRetries = %d, want -1", o.Retry.MaxRetries)
	}
	o = env.ClientOptions()
	if o.Retry.MaxRetries != 2 || o.Retry.RetryDelay > 100*time.Millisecond || o.Retry.MaxRetryDelay > time.Second {
		t.Errorf("test retry options %+v", o.Retry)
	}
	table := env.TableWith(t, env.NoRetryClientOptions())
	start := time.Now()
	_, err := table.GetEntity(t.Context(), "missing", "missing", nil)
	if !isStatus(err, http.StatusNotFound) {
		t.Errorf("GetEntity of a missing entity: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a failing request took %v", d)
	}
}

func tableExists(t *testing.T, name string) bool {
	t.Helper()
	_, err := env.TableService.NewClient(name).GetAccessPolicy(context.Background(), nil)
	if err == nil {
		return true
	}
	if isStatus(err, http.StatusNotFound) {
		return false
	}
	t.Fatalf("checking table %s: %v", name, err)
	return false
}

// tableNameOf finds the table name of a client, which aztables does not
// expose, from the URL of a request it makes.
func tableNameOf(t *testing.T, c *aztables.Client) string {
	t.Helper()
	var resp *http.Response
	ctx := policy.WithCaptureResponse(t.Context(), &resp)
	if _, err := c.GetEntity(ctx, "none", "none", nil); !isStatus(err, http.StatusNotFound) {
		t.Fatalf("GetEntity of a missing entity: %v", err)
	}
	name, _, _ := strings.Cut(lastPathElem(resp.Request.URL.Path), "(")
	return name
}

func lastPathElem(u string) string {
	u, _, _ = strings.Cut(u, "?")
	u = strings.TrimSuffix(u, "/")
	return u[strings.LastIndex(u, "/")+1:]
}

func isStatus(err error, status int) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == status
}

// TestNewTableServiceFromSASConnectionString: NewTableService reads a SAS
// connection string as package account does, so its requests go to the
// string's TableEndpoint with the SAS (aztables' own parser sends them to
// https://AccountName.table.core.windows.net/ whatever TableEndpoint says).
func TestNewTableServiceFromSASConnectionString(t *testing.T) {
	if env.Live {
		t.Log("does not apply: the SAS is signed with the Azurite account's key")
		return
	}
	t.Parallel()
	ctx := t.Context()
	cred, err := aztables.NewSharedKeyCredential(integration.AzuriteAccountName, integration.AzuriteAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	qp, err := aztables.AccountSASSignatureValues{
		Services: "t", ResourceTypes: "sco", Permissions: "rwdlacu", ExpiryTime: time.Now().Add(time.Hour).UTC(),
	}.Sign(cred)
	if err != nil {
		t.Fatal(err)
	}
	// The requests the client sends, seen by a policy of the view.
	var mu sync.Mutex
	var hosts []string
	view := env.WithOptions(func(o *azcore.ClientOptions) {
		o.PerRetryPolicies = append(o.PerRetryPolicies, policyFunc(func(req *policy.Request) (*http.Response, error) {
			mu.Lock()
			hosts = append(hosts, req.Raw().URL.Scheme+"://"+req.Raw().URL.Host+"/")
			mu.Unlock()
			return req.Next()
		}))
	})
	view.ConnectionString = "AccountName=" + integration.AzuriteAccountName + ";TableEndpoint=" + env.TableEndpoint + ";SharedAccessSignature=" + qp.Encode()
	svc, err := view.NewTableService(env.NoRetryClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	name := env.TableName(t)
	if _, err := svc.CreateTable(ctx, name, nil); err != nil {
		t.Fatalf("CreateTable through the SAS connection string: %v", err)
	}
	if !tableExists(t, name) {
		t.Errorf("table %s created through the SAS connection string is not seen by env.TableService", name)
	}
	mu.Lock()
	for _, h := range hosts {
		if !strings.HasPrefix(env.TableEndpoint, h) {
			t.Errorf("a request went to %s, not to the TableEndpoint %s", h, env.TableEndpoint)
		}
	}
	if len(hosts) == 0 {
		t.Error("no request seen")
	}
	mu.Unlock()
	// A connection string that cannot be read is an error, not a client.
	view.ConnectionString = "TableEndpoint=" + env.TableEndpoint
	if _, err := view.NewTableService(nil); err == nil {
		t.Error("a connection string without a key or SAS gave a client")
	}
}

// policyFunc is a pipeline policy made of a function.
type policyFunc func(*policy.Request) (*http.Response, error)

func (f policyFunc) Do(req *policy.Request) (*http.Response, error) { return f(req) }
