package cost_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// want checks that d holds exactly the counts in w.
func want(t *testing.T, d cost.Snapshot, w map[cost.Key]int64) {
	t.Helper()
	var total int64
	for k, n := range w {
		total += n
		if got := d.Count(k.Service, k.Op); got != n {
			t.Errorf("%s %s: counted %d, want %d (all: %v)", k.Service, k.Op, got, n, d)
		}
	}
	if d.Total() != total {
		t.Errorf("total %d, want %d: %v", d.Total(), total, d)
	}
}

func TestMeterTable(t *testing.T) {
	m := cost.NewMeter()
	client := env.With(m.Policy()).Table(t)
	ctx := t.Context()
	start := m.Snapshot()

	add := func(rk string) {
		body := []byte(`{"PartitionKey":"p","RowKey":"` + rk + `","N":1}`)
		if _, err := client.AddEntity(ctx, body, nil); err != nil {
			t.Fatal(err)
		}
	}
	add("a")
	add("b")
	if _, err := client.GetEntity(ctx, "p", "a", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := client.UpsertEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"c"}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := client.UpdateEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"c","X":2}`), &aztables.UpdateEntityOptions{IfMatch: to.Ptr(azcore.ETagAny), UpdateMode: aztables.UpdateModeMerge}); err != nil {
		t.Fatal(err)
	}
	pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'p'")})
	for pager.More() {
		if _, err := pager.NextPage(ctx); err != nil {
			t.Fatal(err)
		}
	}
	actions := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p","RowKey":"d"}`)},
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p","RowKey":"e"}`)},
	}
	if _, err := client.SubmitTransaction(ctx, actions, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := client.DeleteEntity(ctx, "p", "a", nil); err != nil {
		t.Fatal(err)
	}
	// A failed request is billed too.
	if _, err := client.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"b"}`), nil); err == nil {
		t.Fatal("second insert of p/b succeeded")
	}

	want(t, m.Snapshot().Sub(start), map[cost.Key]int64{
		{cost.Table, cost.OpInsert}: 3,
		{cost.Table, cost.OpGet}:    1,
		{cost.Table, cost.OpUpsert}: 1,
		{cost.Table, cost.OpUpdate}: 1,
		{cost.Table, cost.OpQuery}:  1,
		{cost.Table, cost.OpBatch}:  1,
		{cost.Table, cost.OpDelete}: 1,
	})
}

func TestMeterQueueAndBlob(t *testing.T) {
	m := cost.NewMeter()
	metered := env.With(m.Policy())
	q := metered.Queue(t)
	c := metered.Container(t)
	ctx := t.Context()
	start := m.Snapshot()

	if _, err := q.EnqueueMessage(ctx, "hello", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := q.PeekMessage(ctx, nil); err != nil {
		t.Fatal(err)
	}
	got, err := q.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("dequeue: %v, %d messages", err, len(got.Messages))
	}
	msg := got.Messages[0]
	upd, err := q.UpdateMessage(ctx, *msg.MessageID, *msg.PopReceipt, "again", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.DeleteMessage(ctx, *msg.MessageID, *upd.PopReceipt, nil); err != nil {
		t.Fatal(err)
	}

	b := c.NewBlockBlobClient("a/b.txt")
	if _, err := b.UploadBuffer(ctx, []byte("data"), nil); err != nil {
		t.Fatal(err)
	}
	ab := c.NewAppendBlobClient("log")
	if _, err := ab.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ab.AppendBlock(ctx, nopCloser{bytes.NewReader([]byte("x"))}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GetProperties(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SetMetadata(ctx, map[string]*string{"k": to.Ptr("v")}, nil); err != nil {
		t.Fatal(err)
	}
	rd, err := b.DownloadStream(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = rd.Body.Close()
	pager := c.NewListBlobsFlatPager(nil)
	for pager.More() {
		if _, err := pager.NextPage(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Delete(ctx, &blob.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	d := m.Snapshot().Sub(start)
	want(t, d, map[cost.Key]int64{
		{cost.Queue, cost.OpPutMessage}:       1,
		{cost.Queue, cost.OpPeekMessages}:     1,
		{cost.Queue, cost.OpGetMessages}:      1,
		{cost.Queue, cost.OpUpdateMessage}:    1,
		{cost.Queue, cost.OpDeleteMessage}:    1,
		{cost.Blob, cost.OpPutBlob}:           2, // the block blob and the append blob's creation
		{cost.Blob, cost.OpAppendBlock}:       1,
		{cost.Blob, cost.OpGetBlobProperties}: 1,
		{cost.Blob, cost.OpSetBlobMetadata}:   1,
		{cost.Blob, cost.OpGetBlob}:           1,
		{cost.Blob, cost.OpListBlobs}:         1,
		{cost.Blob, cost.OpDeleteBlob}:        1,
	})
	if d.Of(cost.Queue) != 5 || d.Of(cost.Blob) != 8 {
		t.Errorf("per service: queue %d blob %d; %v", d.Of(cost.Queue), d.Of(cost.Blob), d)
	}
}

func TestMeterCountsEveryTry(t *testing.T) {
	m := cost.NewMeter()
	lose := faults.New(faults.Config{})
	client := env.With(m.Policy(), lose).Table(t)
	start := m.Snapshot()
	lose.LoseNext(1, nil) // executed, reply lost, retried by azcore
	if _, err := client.UpsertEntity(t.Context(), []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
		t.Fatal(err)
	}
	want(t, m.Snapshot().Sub(start), map[cost.Key]int64{{cost.Table, cost.OpUpsert}: 2})
}

func TestSnapshotArithmetic(t *testing.T) {
	m := cost.NewMeter()
	a := m.Snapshot()
	m.Add(cost.Key{Service: cost.Table, Op: cost.OpBatch}, 3)
	m.Add(cost.Key{Service: cost.Queue, Op: cost.OpPutMessage}, 2)
	b := m.Snapshot()
	d := b.Sub(a)
	if d.Total() != 5 || d.Of(cost.Table) != 3 || d.Count(cost.Queue, cost.OpPutMessage) != 2 {
		t.Fatalf("diff %v", d)
	}
	if s := d.String(); s != "5 transactions: queue PutMessage=2, table Batch=3" {
		t.Fatalf("String() = %q", s)
	}
	if z := b.Sub(b); z.Total() != 0 || len(z.Keys()) != 0 {
		t.Fatalf("b-b = %v", z)
	}
	m.Reset()
	if m.Snapshot().Total() != 0 {
		t.Fatal("Reset kept counts")
	}
	if neg := a.Sub(b); neg.Total() != -5 {
		t.Fatalf("a-b total %d", neg.Total())
	}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// TestMeterSkipsWhatNeverLeaves: a request whose context has ended before
// it is sent never reaches the wire, so the meter does not count it —
// entity's constructors probe a client that way, and a client built
// without tablekit's options carries the meter to that probe.
func TestMeterSkipsWhatNeverLeaves(t *testing.T) {
	m := cost.NewMeter()
	opts := &aztables.ClientOptions{}
	opts.PerRetryPolicies = append(opts.PerRetryPolicies, m.Policy())
	client, err := aztables.NewClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/Probe", opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := entity.NewTable[entity.DynamicEntity](client); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := client.GetEntity(ctx, "p", "r", nil); err == nil {
		t.Fatal("a read with a cancelled context succeeded")
	}
	if n := m.Snapshot().Total(); n != 0 {
		t.Errorf("counted %d requests that never left: %v", n, m.Snapshot())
	}
}
