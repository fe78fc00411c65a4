package canary_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/eventual"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// Device is the IoT service's device: its API key encrypted.
type Device struct {
	PartitionKey string
	RowKey       string
	ETag         string `table:",etag"`
	Name         string
	APIKey       string `table:",encrypt"`
}

// Firmware keeps an image in a blob (package large) beside an encrypted
// key.
type Firmware struct {
	PartitionKey string
	RowKey       string
	ETag         string `table:",etag"`
	APIKey       string `table:",encrypt"`
	Image        []byte `table:",blob"`
}

// Employee and Department are the guide's denormalization: the
// department keeps a copy of its manager's phone, encrypted in both.
type Employee struct {
	PartitionKey string
	RowKey       string
	ETag         string `table:",etag"`
	Name         string
	Phone        string `table:",encrypt"`
}

type Department struct {
	PartitionKey string
	RowKey       string
	ETag         string `table:",etag"`
	ManagerID    string
	ManagerName  string `table:",omitempty"`
	ManagerPhone string `table:",omitempty,encrypt"`
}

// Entry is a department's directory entry, in another table.
type Entry struct {
	PartitionKey string
	RowKey       string
	ETag         string `table:",etag"`
	Manager      string
	ManagerName  string `table:",omitempty"`
	ManagerPhone string `table:",omitempty,encrypt"`
}

// DeviceNum reads a Device's APIKey as a number: a decrypted value that
// does not fit its field.
type DeviceNum struct {
	PartitionKey string
	RowKey       string
	ETag         string `table:",etag"`
	APIKey       int64  `table:",encrypt"`
}

// Registered is a resolver type; its key is encrypted by the table's
// Config.Encrypt, not by a tag.
type Registered struct {
	PartitionKey string
	RowKey       string
	APIKey       string
}

// Archived is the message of the eventual handler.
type Archived struct {
	PK, RK string
}

// newKey returns a fresh key-encryption key.
func newKey(t testing.TB, id string) *crypt.LocalKey {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	k, err := crypt.NewLocalKey(id, b)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// encrypted returns the crypt table of T over client.
func encrypted[T any](t testing.TB, client *aztables.Client, cfg crypt.Config) *crypt.Table[T] {
	t.Helper()
	tbl, err := entity.NewTable[T](client)
	if err != nil {
		t.Fatal(err)
	}
	ct, err := crypt.New(tbl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ct
}

// policy is a Config.Encrypt that encrypts the named properties.
func policy(names ...string) (func(pk, rk, name string) bool, []string) {
	return func(_, _, name string) bool {
		for _, n := range names {
			if n == name {
				return true
			}
		}
		return false
	}, names
}

// views are the clients of one run: plain (to read back and scan), lossy
// (a share of the table writes lose their reply: azcore resends them)
// and, per crash, a killed process's.
type views struct {
	plain, lossy *integration.Env
	loss         *faults.Injector
}

func newViews(env *integration.Env) *views {
	host := hostOf(env.TableEndpoint)
	f := faults.New(faults.Config{LoseReply: 0.3, Seed: 11, Match: func(r *http.Request) bool {
		return r.URL.Host == host && r.Method != http.MethodGet
	}})
	return &views{plain: env, lossy: env.With(f), loss: f}
}

func hostOf(endpoint string) string {
	h := strings.TrimPrefix(strings.TrimPrefix(endpoint, "http://"), "https://")
	if i := strings.IndexByte(h, '/'); i >= 0 {
		h = h[:i]
	}
	return h
}

// table returns the client of table name through env.
func table(env *integration.Env, name string) *aztables.Client {
	return env.TableService.NewClient(name)
}

// tableName returns the name of a table client's table.
func tableName(t testing.TB, c *aztables.Client) string {
	t.Helper()
	tbl, err := entity.NewTable[entity.DynamicEntity](c)
	if err != nil {
		t.Fatal(err)
	}
	return tbl.Name()
}

// queues makes a work queue and returns eventual's queues of it (the
// processor makes the poison queue), both deleted at the end of the test.
func queues(t testing.TB, env *integration.Env) []eventual.Queue {
	t.Helper()
	name := env.QueueName(t)
	qs := eventual.QueuesOf(env.QueueService, name)
	if _, err := qs[0].Work.Create(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = qs[0].Work.Delete(ctx, nil)
		_, _ = qs[0].Poison.Delete(ctx, nil)
	})
	return qs
}

// queuesOf returns eventual's queues of the same names through env.
func queuesOf(env *integration.Env, qs []eventual.Queue) []eventual.Queue {
	out := make([]eventual.Queue, len(qs))
	for i, q := range qs {
		out[i] = eventual.Queue{Work: env.QueueService.NewQueueClient(queueName(q.Work.URL())), Poison: env.QueueService.NewQueueClient(queueName(q.Poison.URL()))}
	}
	return out
}

func queueName(u string) string {
	u = strings.TrimSuffix(u, "/")
	return u[strings.LastIndexByte(u, '/')+1:]
}

// blobs makes a container, deleted at the end of the test, and returns
// its name.
func blobs(t testing.TB, env *integration.Env) string {
	t.Helper()
	c := env.Container(t)
	return containerName(c)
}

func containerName(c *container.Client) string {
	return queueName(c.URL())
}

func containerOf(env *integration.Env, name string) *container.Client {
	return env.BlobService.ServiceClient().NewContainerClient(name)
}

// drain runs p's handlers until its queues are empty.
func drain(t testing.TB, p *eventual.Processor) eventual.DrainReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := p.Drain(ctx)
	if err != nil {
		t.Fatalf("drain: %v (%+v)", err, rep)
	}
	return rep
}
