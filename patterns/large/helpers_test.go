package large_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/large"
)

// Employee is the guide's employee with a photo (§6.11), a résumé and a
// video: a []byte, a string and a Stream kept in blobs.
type Employee struct {
	Dept  string       `table:"PartitionKey,pk"`
	ID    string       `table:"RowKey,rk"`
	ETag  string       `table:",etag"`
	Name  string       `table:",omitempty"`
	Photo []byte       `table:",blob"`
	CV    string       `table:"Resume,blob"`
	Video large.Stream `table:",blob"`
}

// fixture is one table, container and queue, and a Table over them.
type fixture struct {
	env    *integration.Env // the view the clients were built from
	table  string
	blobs  string // container name
	queue  string
	client *aztables.Client
	cont   *container.Client
	proc   *eventual.Processor
	emps   *large.Table[Employee]
	cfg    large.Config
	hooks  eventual.Hooks // of the processor on builds
}

// testConfig deletes at once and sweeps without a grace period: the tests
// sweep only once no writer runs.
func testConfig() large.Config {
	return large.Config{DeleteDelay: -1, Grace: -1, BlockSize: 64 << 10}
}

// procConfig is a quick processor for tests.
func procConfig() eventual.Config {
	return eventual.Config{
		Workers:           4,
		VisibilityTimeout: 2 * time.Second,
		RetryDelay:        -1,
		PollInterval:      10 * time.Millisecond,
		MaxPollInterval:   50 * time.Millisecond,
		ShutdownGrace:     5 * time.Second,
	}
}

// newFixture makes a new table, container and queue (with its poison
// queue) on env, deleted when the test ends.
func newFixture(t testing.TB, cfg large.Config) *fixture {
	t.Helper()
	f := &fixture{env: env, table: env.TableName(t), cfg: cfg}
	ctx := context.Background()
	if _, err := env.TableService.CreateTable(ctx, f.table, nil); err != nil {
		t.Fatal(err)
	}
	f.blobs = env.Container(t).URL()
	parts, err := blob.ParseURL(f.blobs)
	if err != nil {
		t.Fatal(err)
	}
	f.blobs = parts.ContainerName
	f.queue = env.QueueName(t)
	for _, q := range eventual.QueuesOf(env.QueueService, f.queue) {
		for _, c := range []*azqueue.QueueClient{q.Work, q.Poison} {
			if _, err := c.Create(ctx, nil); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = c.Delete(context.Background(), nil) })
		}
	}
	return f.on(t, env)
}

// on returns the fixture's resources through e's clients (a view that a
// test can kill or make lose replies).
func (f *fixture) on(t testing.TB, e *integration.Env) *fixture {
	t.Helper()
	g := *f
	g.env = e
	tbl, err := entity.NewTableFromService[Employee](e.TableService, f.table)
	if err != nil {
		t.Fatal(err)
	}
	g.client = tbl.Client()
	g.cont = e.BlobService.ServiceClient().NewContainerClient(f.blobs)
	pcfg := procConfig()
	pcfg.Hooks = f.hooks
	if g.proc, err = eventual.New(eventual.QueuesOf(e.QueueService, f.queue), nil, pcfg); err != nil {
		t.Fatal(err)
	}
	cfg := f.cfg
	cfg.Processor = g.proc
	if g.emps, err = large.New(tbl, g.cont, cfg); err != nil {
		t.Fatal(err)
	}
	return &g
}

// drain runs the fixture's processor until its queue is empty, visible
// messages or not.
func (f *fixture) drain(ctx context.Context) error {
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.proc.Run(rctx) }()
	defer func() { cancel(); <-done }()
	q := eventual.QueuesOf(f.env.QueueService, f.queue)[0]
	for {
		props, err := q.Work.GetProperties(ctx, nil)
		if err != nil {
			return err
		}
		if props.ApproximateMessagesCount == nil || *props.ApproximateMessagesCount == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d messages left: %w", *props.ApproximateMessagesCount, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// settle drains the queue and sweeps: what recovery does.
func (f *fixture) settle(t testing.TB) large.SweepResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := f.drain(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := f.emps.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// blobNames lists the container's blobs.
func (f *fixture) blobNames(t testing.TB) []string {
	t.Helper()
	var names []string
	pager := f.cont.NewListBlobsFlatPager(nil)
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Segment.BlobItems {
			names = append(names, *b.Name)
		}
	}
	sort.Strings(names)
	return names
}

// referenced lists the blob names the table's entities reference.
func (f *fixture) referenced(t testing.TB) []string {
	t.Helper()
	raw, err := entity.NewTable[entity.DynamicEntity](f.client)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for d, err := range raw.Query(context.Background(), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"Photo", "Resume", "Video"} {
			if s, ok := d.Properties[p].(string); ok {
				i := strings.Index(s, `"blob":"`)
				j := strings.Index(s, `","size"`)
				if i < 0 || j < i {
					t.Fatalf("%s/%s: property %s = %s is not a reference", d.PartitionKey, d.RowKey, p, s)
				}
				names = append(names, s[i+len(`"blob":"`):j])
			}
		}
	}
	sort.Strings(names)
	return names
}

// checkClean asserts the converged state: every blob referenced, every
// reference's blob there.
func (f *fixture) checkClean(t testing.TB) {
	t.Helper()
	blobs, refs := f.blobNames(t), f.referenced(t)
	if !slices.Equal(blobs, refs) {
		var orphans, missing []string
		for _, b := range blobs {
			if !slices.Contains(refs, b) {
				orphans = append(orphans, b)
			}
		}
		for _, r := range refs {
			if !slices.Contains(blobs, r) {
				missing = append(missing, r)
			}
		}
		t.Errorf("orphan blobs %q; referenced blobs missing %q", orphans, missing)
	}
}

// payload returns n bytes that depend on seed.
func payload(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 42))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// readAll opens a Stream and reads it to the end.
func readAll(t testing.TB, s large.Stream) ([]byte, error) {
	t.Helper()
	r, err := s.Open(context.Background())
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// same reports whether two values are equal, saying how they differ.
func same(got, want []byte) string {
	if bytes.Equal(got, want) {
		return ""
	}
	return fmt.Sprintf("%d bytes (sha256 %x…), want %d (%x…)", len(got), sha256.Sum256(got), len(want), sha256.Sum256(want))
}
