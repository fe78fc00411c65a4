package bloblog_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/bloblog"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// payload is what writer w writes as its record number i.
func payload(w, i int) string { return fmt.Sprintf("w%d %06d GET /api/orders/%d 200", w, i, i*7) }

// parse reads a payload back.
func parse(t *testing.T, data []byte) (w, i int) {
	t.Helper()
	ws, rest, ok1 := strings.Cut(string(data), " ")
	is, _, ok2 := strings.Cut(rest, " ")
	w, err1 := strconv.Atoi(strings.TrimPrefix(ws, "w"))
	i, err2 := strconv.Atoi(is)
	if !ok1 || !ok2 || err1 != nil || err2 != nil || string(data) != payload(w, i) {
		t.Fatalf("record %q is not a payload", data)
	}
	return w, i
}

func readAll(t *testing.T, r *bloblog.Reader, from, to time.Time) []bloblog.Record {
	t.Helper()
	var out []bloblog.Record
	for rec, err := range r.Read(context.Background(), from, to) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
	return out
}

// blockCounts returns the committed block count and size of every blob of
// the container.
func blobStats(t *testing.T, c *container.Client) (names []string, blocks []int32, sizes []int64) {
	t.Helper()
	ctx := context.Background()
	for p := c.NewListBlobsFlatPager(nil); p.More(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Segment.BlobItems {
			props, err := c.NewBlobClient(*it.Name).GetProperties(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, *it.Name)
			blocks = append(blocks, *props.BlobCommittedBlockCount)
			sizes = append(sizes, *props.ContentLength)
		}
	}
	return names, blocks, sizes
}

func isAppend(r *http.Request) bool { return r.URL.Query().Get("comp") == "appendblock" }

// newContainer creates a container for the test and returns its name.
func newContainer(t *testing.T) string {
	t.Helper()
	name := env.ContainerName(t)
	if _, err := env.BlobService.CreateContainer(context.Background(), name, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = env.BlobService.DeleteContainer(context.Background(), name, nil) })
	return name
}

// containerOf is a client of the named container through e's pipeline.
func containerOf(e *integration.Env, name string) *container.Client {
	return e.BlobService.ServiceClient().NewContainerClient(name)
}

// 100,000 records from 8 goroutines, through a pipeline that loses 5% of
// the replies (azcore retries requests that were applied): every record is
// read back exactly once, in each writer's order; blobs roll over at the
// small limits set (200 KiB blobs); a sub-range read returns exactly the records of the
// range, and skips the blobs outside it.
func TestManyWritersExactlyOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	name := newContainer(t)
	anyReq := faults.New(faults.Config{LoseReply: 0.01, Seed: 7})
	appends := faults.New(faults.Config{LoseReply: 0.05, Seed: 8, Match: isAppend})
	c := containerOf(env.With(anyReq, appends), name)
	cfg := bloblog.Config{
		Service:       "api/frontend",
		Period:        time.Minute,
		MaxBlockBytes: 32 << 10,
		MaxBlocks:     8,
		MaxBlobBytes:  200 << 10,
		FlushInterval: 20 * time.Millisecond,
	}
	l, err := bloblog.New(ctx, c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 12_500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := l.Write([]byte(payload(w, i))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	if n := appends.Stats().LostReplies; n < 5 {
		t.Fatalf("only %d append replies lost", n)
	}
	t.Logf("lost replies: %d of any request, %d of appends", anyReq.Stats().LostReplies, appends.Stats().LostReplies)

	meter := cost.NewMeter()
	clean := containerOf(env.With(meter.Policy()), name)
	r, err := bloblog.NewReader(clean, cfg)
	if err != nil {
		t.Fatal(err)
	}
	from, to := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	all := readAll(t, r, from, to)
	next := make([]int, writers)
	for _, rec := range all {
		w, i := parse(t, rec.Data)
		if i != next[w] {
			t.Fatalf("writer %d: record %d after %d (lost, doubled or out of order)", w, i, next[w]-1)
		}
		next[w]++
	}
	for w, n := range next {
		if n != each {
			t.Errorf("writer %d: %d records read back, want %d", w, n, each)
		}
	}

	names, blocks, sizes := blobStats(t, clean)
	if len(names) < 20 {
		t.Errorf("%d blobs, want many (rollover at 8 blocks or 200 KiB)", len(names))
	}
	for i := range names {
		if blocks[i] > 8 || sizes[i] > 200<<10 {
			t.Errorf("blob %s has %d blocks, %d bytes: over the limits", names[i], blocks[i], sizes[i])
		}
	}

	// A sub-range: exactly the records of the full read inside it, in the
	// same order; blobs outside it are not downloaded.
	a, b := all[len(all)*3/10].Time, all[len(all)*6/10].Time
	var want []string
	for _, rec := range all {
		if !rec.Time.Before(a) && rec.Time.Before(b) {
			want = append(want, string(rec.Data))
		}
	}
	before := meter.Snapshot()
	var got []string
	for _, rec := range readAll(t, r, a, b) {
		got = append(got, string(rec.Data))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("sub-range read %d records, want %d", len(got), len(want))
	}
	used := meter.Snapshot().Sub(before)
	if n := used.Count(cost.Blob, cost.OpGetBlob); n == 0 || n >= int64(len(names))/2 {
		t.Errorf("sub-range read downloaded %d of %d blobs, want fewer than half", n, len(names))
	}
}
