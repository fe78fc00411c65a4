package large_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/large"
)

// Six writers upsert one employee three times each while two readers read
// it in a loop and the processor deletes replaced blobs: every read is one
// writer's version, whole; the last write wins whole; and the queue alone
// deletes every blob that fell out of use — the losers' uploads too.
func TestConcurrentWritersAndReaders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig()
	cfg.DeleteDelay = time.Second // as in production: readers of a replaced version finish
	cfg.Retry = entity.RetryPolicy{Attempts: 50, BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond}
	f := newFixture(t, cfg)
	versions := sync.Map{}
	wctx, stopWorkers := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.proc.Run(wctx) }()

	var writers, readers sync.WaitGroup
	writing := make(chan struct{})
	var reads int
	var mu sync.Mutex
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-writing:
					return
				default:
				}
				e, err := f.emps.Get(ctx, "Sales", "000123")
				if errors.Is(err, entity.ErrNotFound) {
					continue
				}
				if err != nil {
					t.Errorf("Get while writers write: %v", err)
					return
				}
				v, ok := versions.Load(e.Name)
				if !ok {
					t.Errorf("read a version %q nobody wrote", e.Name)
					return
				}
				video, err := readAll(t, e.Video)
				if d := same(e.Photo, v.(version).photo) + same(video, v.(version).video); d != "" || err != nil {
					t.Errorf("read %s torn: %s %v", e.Name, d, err)
					return
				}
				mu.Lock()
				reads++
				mu.Unlock()
			}
		})
	}
	for w := range 6 {
		writers.Go(func() {
			for i := range 3 {
				v := version{name: fmt.Sprintf("w%d-%d", w, i), photo: payload(uint64(100*w+i), 20<<10), video: payload(uint64(100*w+i+50), 70<<10), cv: fmt.Sprint("cv", w)}
				versions.Store(v.name, v)
				e := v.employee()
				if err := f.emps.Upsert(ctx, &e); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		})
	}
	writers.Wait()
	close(writing)
	readers.Wait()
	last, err := f.emps.Get(ctx, "Sales", "000123")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(cfg.DeleteDelay)
	if err := f.drain(ctx); err != nil {
		t.Fatal(err)
	}
	stopWorkers()
	<-done
	res, err := f.emps.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 0 {
		t.Errorf("the sweep found %d orphans: the queue should have deleted them", res.Deleted)
	}
	f.checkClean(t)
	if n := len(f.blobNames(t)); n != 3 {
		t.Errorf("%d blobs left, want the last version's 3", n)
	}
	v, _ := versions.Load(last.Name)
	readsAs(t, f, false, v.(version))
	t.Logf("%d whole reads while 6 writers wrote", reads)
	if reads == 0 {
		t.Error("the readers read nothing")
	}
}

// onFirst runs fn once, before the first request of kind op goes out.
type onFirst struct {
	once sync.Once
	op   string
	fn   func()
}

func (p *onFirst) Do(req *policy.Request) (*http.Response, error) {
	if cost.Classify(req.Raw()).Op == p.op {
		p.once.Do(p.fn)
	}
	return req.Next()
}

// A writer replaces the employee and its old photo is deleted between
// Get's read of the entity and its read of the photo: Get reads the entity
// again and returns the new version, whole. A Stream read before the
// replace finds its blob gone once the delete delay has passed:
// ErrBlobMissing, not data.
func TestGetRacingAReplace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testConfig())
	old := stored(t, f)
	meter := cost.NewMeter()
	racing := &onFirst{op: cost.OpGetBlob, fn: func() {
		e := v2.employee()
		e.ETag = old.ETag
		if err := f.emps.Replace(ctx, &e); err != nil {
			t.Error(err)
		}
		if err := f.drain(ctx); err != nil { // DeleteDelay -1: deleted at once
			t.Error(err)
		}
	}}
	reader := f.on(t, env.With(meter.Policy(), racing))
	got, err := reader.emps.Get(ctx, "Sales", "000123")
	if err != nil {
		t.Fatal(err)
	}
	if d := same(got.Photo, v2.photo); d != "" || got.Name != "v2" {
		t.Errorf("Get racing a replace: %s, photo %s", got.Name, d)
	}
	if n := meter.Snapshot().Count(cost.Table, cost.OpGet); n != 2 {
		t.Errorf("Get read the entity %d times, want 2", n)
	}
	_, err = readAll(t, old.Video)
	if !errors.Is(err, large.ErrBlobMissing) {
		t.Errorf("opening a replaced video: %v, want ErrBlobMissing", err)
	}
}

// A Table that read the employee before starts reading the photo it saw
// while it reads the entity again; when another writer replaced the photo
// meanwhile (and its blob is gone), the early read is dropped and the new
// photo read: the hint costs one Get Blob, never a wrong value.
func TestStaleHint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testConfig())
	meter := cost.NewMeter()
	reader := f.on(t, env.With(meter.Policy()))
	if err := reader.emps.Insert(ctx, new(v1.employee())); err != nil {
		t.Fatal(err)
	}
	before := meter.Snapshot()
	if _, err := reader.emps.Get(ctx, "Sales", "000123"); err != nil {
		t.Fatal(err)
	}
	if used := meter.Snapshot().Sub(before); used.Count(cost.Blob, cost.OpGetBlob) != 2 || used.Total() != 3 {
		t.Errorf("a Get with a fresh hint cost %v, want the entity and the 2 blobs", used)
	}
	for i, v := range []version{v2, v1} {
		e := v.employee()
		e.ETag = entity.AnyETag
		if err := f.emps.Replace(ctx, &e); err != nil { // another Table: the reader's hint goes stale
			t.Fatal(err)
		}
		if i == 0 {
			if err := f.drain(ctx); err != nil { // the old photo is gone
				t.Fatal(err)
			}
		}
		before = meter.Snapshot()
		got, err := reader.emps.Get(ctx, "Sales", "000123")
		if err != nil {
			t.Fatal(err)
		}
		if d := same(got.Photo, v.photo); d != "" || got.CV != v.cv {
			t.Errorf("Get with a stale hint: %s, photo %s", got.Name, d)
		}
		if used := meter.Snapshot().Sub(before); used.Count(cost.Table, cost.OpGet) != 1 || used.Count(cost.Blob, cost.OpGetBlob) > 4 {
			t.Errorf("a Get with a stale hint cost %v", used)
		}
	}
}
