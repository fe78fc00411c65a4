package large_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/large"
)

// Staff is the example's employee: a 5 MiB photo in a blob.
type Staff struct {
	Dept  string `table:"PartitionKey,pk"`
	ID    string `table:"RowKey,rk"`
	ETag  string `table:",etag"`
	Name  string
	Photo []byte `table:",blob"`
}

// example makes what the examples need from the test account — a table,
// a container, a queue with its poison queue — and a function that drops
// them.
func example(ctx context.Context) (*entity.Table[Staff], *container.Client, []eventual.Queue, func(), error) {
	var drops []func() error
	drop := func() {
		for _, d := range drops {
			_ = d()
		}
	}
	client, d, err := env.ScratchTable(ctx, "example")
	if err != nil {
		return nil, nil, nil, drop, err
	}
	drops = append(drops, d)
	blobs, d, err := env.ScratchContainer(ctx, "example")
	if err != nil {
		return nil, nil, nil, drop, err
	}
	drops = append(drops, d)
	work, d, err := env.ScratchQueue(ctx, "example")
	if err != nil {
		return nil, nil, nil, drop, err
	}
	drops = append(drops, d)
	parts, err := azqueue.ParseURL(work.URL())
	if err != nil {
		return nil, nil, nil, drop, err
	}
	qs := eventual.QueuesOf(env.QueueService, parts.QueueName)
	tbl, err := entity.NewTable[Staff](client)
	return tbl, blobs, qs, drop, err
}

// blobCount counts the blobs of a container.
func blobCount(ctx context.Context, c *container.Client) int {
	n := 0
	for pager := c.NewListBlobsFlatPager(nil); pager.More(); {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return -1
		}
		n += len(page.Segment.BlobItems)
	}
	return n
}

// waitFor polls until the container holds n blobs, for at most 10 s.
func waitFor(ctx context.Context, c *container.Client, n int) int {
	deadline := time.Now().Add(10 * time.Second)
	for blobCount(ctx, c) != n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	return blobCount(ctx, c)
}

// An employee with a 5 MiB photo: the photo goes to a blob, the entity
// keeps its name, size and SHA-256; a read checks the photo against them;
// a replaced photo's blob is deleted by the processor's worker.
func ExampleTable() {
	ctx := context.Background()
	tbl, blobs, queues, drop, err := example(ctx)
	defer drop()
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := eventual.New(queues, nil, eventual.Config{PollInterval: 10 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	var later atomic.Int64 // how far the example's clock has been moved on
	staff, err := large.New(tbl, blobs, large.Config{
		Processor:   p,
		DeleteDelay: -1,
		Now:         func() time.Time { return time.Now().Add(time.Duration(later.Load())) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	run, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = p.Run(run) }() // the worker that deletes replaced blobs

	photo := bytes.Repeat([]byte("JPEG"), 5<<20/4)
	e := Staff{Dept: "Sales", ID: "000123", Name: "Jones", Photo: photo}
	if err := staff.Insert(ctx, &e); err != nil {
		fmt.Println(err)
		return
	}
	got, err := staff.Get(ctx, "Sales", "000123")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d MiB photo, intact: %v\n", got.Name, len(got.Photo)>>20, bytes.Equal(got.Photo, photo))

	raw, _ := entity.NewTable[entity.DynamicEntity](tbl.Client())
	d, _ := raw.Get(ctx, "Sales", "000123")
	var ref struct {
		Blob   string `json:"blob"`
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256"`
	}
	_ = json.Unmarshal([]byte(d.Properties["Photo"].(string)), &ref)
	name := strings.TrimPrefix(ref.Blob, tbl.Name()+"/")
	fmt.Printf("the entity's Photo: blob %s…, %d bytes, SHA-256 %s…\n", name[:strings.LastIndex(name, "/")+1], ref.Size, ref.SHA256[:8])

	got.Photo = bytes.Repeat([]byte("PNG!"), 5<<20/4)
	if err := staff.Replace(ctx, &got); err != nil {
		fmt.Println(err)
		return
	}
	// The worker keeps the old photo's blob until it is Config.Grace (an
	// hour) old: the insert that wrote it might still be resent. An hour
	// later, it or Sweep deletes it.
	fmt.Println("after a new photo, blobs:", blobCount(ctx, blobs))
	later.Store(int64(time.Hour + time.Minute))
	res, err := staff.Sweep(ctx)
	fmt.Println("an hour later, Sweep deleted", res.Deleted, "blob; blobs:", blobCount(ctx, blobs), err)

	if err := staff.Delete(ctx, "Sales", "000123", got.ETag); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("after the delete, blobs:", waitFor(ctx, blobs, 0))
	// Output:
	// Jones: 5 MiB photo, intact: true
	// the entity's Photo: blob Sales/000123/Photo/…, 5242880 bytes, SHA-256 7fb088fa…
	// after a new photo, blobs: 2
	// an hour later, Sweep deleted 1 blob; blobs: 1 <nil>
	// after the delete, blobs: 0
}

// A blob changed behind its entity's back fails the SHA-256 check: Get
// returns an error, never the wrong bytes. A Stream field is read as a
// stream, checked at its end.
func ExampleStream() {
	ctx := context.Background()
	type Employee struct {
		Dept  string       `table:"PartitionKey,pk"`
		ID    string       `table:"RowKey,rk"`
		Video large.Stream `table:",blob"`
	}
	_, blobs, queues, drop, err := example(ctx)
	defer drop()
	if err != nil {
		fmt.Println(err)
		return
	}
	client, dropTable, err := env.ScratchTable(ctx, "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dropTable()
	tbl, _ := entity.NewTable[Employee](client)
	p, _ := eventual.New(queues, nil, eventual.Config{})
	emps, err := large.New(tbl, blobs, large.Config{Processor: p})
	if err != nil {
		fmt.Println(err)
		return
	}
	e := Employee{Dept: "Sales", ID: "000123", Video: large.NewStream(strings.NewReader(strings.Repeat("frame ", 100000)))}
	if err := emps.Insert(ctx, &e); err != nil {
		fmt.Println(err)
		return
	}
	got, err := emps.Get(ctx, "Sales", "000123") // does not read the video
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := got.Video.Open(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	n, err := io.Copy(io.Discard, r)
	r.Close()
	fmt.Println("read", n, "bytes:", err)

	// Change the blob behind the entity's back.
	tampered := strings.Repeat("frame ", 99999) + "fake! "
	_, _ = blobs.NewBlockBlobClient(got.Video.Ref().Blob).UploadBuffer(ctx, []byte(tampered), nil)
	r, _ = got.Video.Open(ctx)
	n, err = io.Copy(io.Discard, r)
	r.Close()
	fmt.Println("read", n, "bytes:", errors.Is(err, large.ErrBlobCorrupt))
	// Output:
	// read 600000 bytes: <nil>
	// read 600000 bytes: true
}
