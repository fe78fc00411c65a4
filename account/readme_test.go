package account_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
)

// readme:begin main
// Services are the clients an order service uses, built once in main:
//
//	svc, err := NewServices(os.Getenv("AZURE_STORAGE_CONNECTION_STRING"), nil)
type Services struct {
	Orders *entity.Table[Order] // typed table; lost replies settled
	Work   *azqueue.QueueClient // for a queue-driven pattern
	Photos *container.Client    // for large entities, blob logs
}

// NewServices builds them from a storage connection string: the portal's
// ("Access keys"), a SAS one, or "UseDevelopmentStorage=true" for Azurite
// on its default ports. meter may be nil.
func NewServices(connectionString string, meter *cost.Meter) (*Services, error) {
	acct, err := account.NewFromConnectionString(connectionString, &account.Options{
		ClientOptions: azcore.ClientOptions{ // azcore's own: retries, logging, tracing
			Retry: policy.RetryOptions{MaxRetries: 4, RetryDelay: 200 * time.Millisecond},
		},
		Meter: meter, // counts every storage transaction of every client
	})
	// With Microsoft Entra instead of a key (azidentity):
	//   cred, err := azidentity.NewDefaultAzureCredential(nil)
	//   acct, err := account.New("https://myaccount.table.core.windows.net/", cred, opts)
	if err != nil {
		return nil, err // *account.ConfigError naming the setting, never the key
	}
	tables, err := acct.TableService()
	if err != nil {
		return nil, err // *account.EndpointError: no table endpoint
	}
	orders, err := entity.NewTableFromService[Order](tables, "Orders")
	if err != nil {
		return nil, err
	}
	work, err := acct.Queue("orders")
	if err != nil {
		return nil, err
	}
	photos, err := acct.Container("photos")
	if err != nil {
		return nil, err
	}
	return &Services{Orders: orders, Work: work, Photos: photos}, nil
}

// readme:end

// readme:begin provision
// Provision creates the table, queue and container unless they exist.
func (s *Services) Provision(ctx context.Context) error {
	return account.Provision(ctx, s.Orders,
		account.QueueProvisioner(s.Work), account.ContainerProvisioner(s.Photos))
}

// readme:end

// TestNewServices runs README's main wiring on the test account: from its
// connection string, and from UseDevelopmentStorage=true (wiring only: the
// test's Azurite is not on the default ports). On Azurite it writes through
// each client and reads back with the environment's raw clients; on a live
// account it touches nothing (the names are fixed, and may be real ones).
func TestNewServices(t *testing.T) {
	dev, err := NewServices("UseDevelopmentStorage=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	if dev.Work.URL() != "http://127.0.0.1:10001/devstoreaccount1/orders" || dev.Photos.URL() != "http://127.0.0.1:10000/devstoreaccount1/photos" || dev.Orders.Name() != "Orders" {
		t.Errorf("UseDevelopmentStorage=true: queue %s, container %s, table %s", dev.Work.URL(), dev.Photos.URL(), dev.Orders.Name())
	}
	if _, err := NewServices("AccountName=acct", nil); err == nil || !strings.Contains(err.Error(), "AccountKey") {
		t.Errorf("a connection string without a key: %v", err)
	}

	meter := cost.NewMeter()
	svc, err := NewServices(env.ConnectionString, meter)
	if err != nil {
		t.Fatal(err)
	}
	if env.Live {
		t.Log("a live account: the fixed names Orders, orders and photos are left alone")
		return
	}
	ctx := context.Background()
	t.Cleanup(func() {
		_, _ = env.TableService.DeleteTable(context.Background(), "Orders", nil)
		_, _ = env.QueueService.DeleteQueue(context.Background(), "orders", nil)
		_, _ = env.BlobService.DeleteContainer(context.Background(), "photos", nil)
	})
	for range 2 { // the second finds everything
		if err := svc.Provision(ctx); err != nil {
			t.Fatal(err)
		}
	}

	if err := svc.Orders.Insert(ctx, &Order{Customer: "c1", ID: "o1", Amount: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Work.EnqueueMessage(ctx, "o1", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Photos.NewBlockBlobClient("o1.jpg").UploadBuffer(ctx, []byte("jpeg"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := env.TableService.NewClient("Orders").GetEntity(ctx, "c1", "o1", nil); err != nil {
		t.Errorf("the order is not stored: %v", err)
	}
	if props, err := env.QueueService.NewQueueClient("orders").GetProperties(ctx, nil); err != nil || props.ApproximateMessagesCount == nil || *props.ApproximateMessagesCount != 1 {
		t.Errorf("the queue holds %v messages (%v), want 1", props.ApproximateMessagesCount, err)
	}
	if _, err := env.BlobService.ServiceClient().NewContainerClient("photos").NewBlobClient("o1.jpg").GetProperties(ctx, nil); err != nil {
		t.Errorf("the photo is not stored: %v", err)
	}
	if s := meter.Snapshot(); s.Count(cost.Table, cost.OpInsert) != 1 || s.Count(cost.Queue, cost.OpPutMessage) != 1 {
		t.Errorf("the meter counted %v", s)
	}
}
