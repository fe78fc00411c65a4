package large_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/large"
)

// cancelAfterUploads cancels its context once it has seen n blobs stored
// (n Put Blob or Put Block List replies): after a write's uploads, before
// its entity's request.
type cancelAfterUploads struct {
	n      int64
	seen   atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAfterUploads) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	op := cost.Classify(req.Raw()).Op
	if err == nil && resp.StatusCode == http.StatusCreated && (op == cost.OpPutBlob || op == cost.OpPutBlockList) && c.seen.Add(1) == c.n {
		c.cancel()
	}
	return resp, err
}

// A write whose context is cancelled as its last upload is answered —
// the blob stored, the upload reported failed — fails with an error
// matching context.Canceled, certain, not entity.ErrOutcomeUnknown; it
// sends no entity request, the entity is as it was, and the write
// disposes of every blob it may have stored, the one whose upload failed
// too: once the processor has drained, no blob is left for Sweep.
func TestCancelledWriteLeavesNoBlob(t *testing.T) {
	t.Parallel()
	for _, op := range []string{"insert", "replace", "upsert"} {
		t.Run(op, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, testConfig())
			if op != "insert" {
				stored(t, f)
			}
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			m := cost.NewMeter()
			g := f.on(t, env.With(&cancelAfterUploads{n: 3, cancel: cancel}, m.Policy()))
			e := v2.employee()
			e.CV = "a new résumé" // three new values: three uploads
			var err error
			switch op {
			case "insert":
				err = g.emps.Insert(cctx, &e)
			case "replace":
				e.ETag = entity.AnyETag
				err = g.emps.Replace(cctx, &e)
			case "upsert":
				err = g.emps.Upsert(cctx, &e)
			}
			if !errors.Is(err, context.Canceled) || errors.Is(err, entity.ErrOutcomeUnknown) {
				t.Errorf("%s cancelled after its uploads: %v, want context.Canceled, not entity.ErrOutcomeUnknown", op, err)
			}
			used := m.Snapshot()
			for _, o := range []string{cost.OpInsert, cost.OpUpdate, cost.OpUpsert} {
				if n := used.Count(cost.Table, o); n != 0 {
					t.Errorf("%s cancelled after its uploads sent %d %s", op, n, o)
				}
			}
			if err := f.drain(ctx); err != nil {
				t.Fatal(err)
			}
			if op == "insert" {
				readsAs(t, f, true)
				if names := f.blobNames(t); len(names) != 0 {
					t.Errorf("blobs left %q", names)
				}
			} else {
				readsAs(t, f, false, v1)
				f.checkClean(t)
			}
		})
	}
}

// holdBlob holds, once on, every Get Blob of the blob whose name ends
// with suffix until the request's context ends, counting those under way.
type holdBlob struct {
	suffix  string
	on      atomic.Bool
	onHold  func()       // called as a request is held, if set
	held    atomic.Int64 // ever
	waiting atomic.Int64 // now
}

func (h *holdBlob) Do(req *policy.Request) (*http.Response, error) {
	if !h.on.Load() || cost.Classify(req.Raw()).Op != cost.OpGetBlob || !strings.HasSuffix(req.Raw().URL.Path, h.suffix) {
		return req.Next()
	}
	h.held.Add(1)
	h.waiting.Add(1)
	defer h.waiting.Add(-1)
	if h.onHold != nil {
		h.onHold()
	}
	<-req.Raw().Context().Done()
	return nil, req.Raw().Context().Err()
}

// A Get whose hint is stale — it starts reading the old photo while it
// reads the entity, which holds a new one — leaves nothing running when it
// returns: the early read of the old photo, held by the service, is
// cancelled and has ended before Get returns the new version.
func TestGetLeavesNoReadRunning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testConfig())
	stored(t, f)
	name := photoBlob(t, f)
	hold := &holdBlob{suffix: name[strings.LastIndex(name, "/"):]}
	reader := f.on(t, env.With(hold))
	if _, err := reader.emps.Get(ctx, "Sales", "000123"); err != nil { // the reader's hint: v1's blobs
		t.Fatal(err)
	}
	e := v2.employee()
	e.ETag = entity.AnyETag
	if err := f.emps.Replace(ctx, &e); err != nil { // another Table: the hint goes stale
		t.Fatal(err)
	}
	hold.on.Store(true)
	got, err := reader.emps.Get(ctx, "Sales", "000123")
	if err != nil || got.Name != "v2" {
		t.Fatalf("Get after another Table's Replace: %s, %v", got.Name, err)
	}
	if n := hold.waiting.Load(); n != 0 {
		t.Errorf("Get returned with %d reads of the old photo under way", n)
	}
	if hold.held.Load() == 0 {
		t.Errorf("Get never read the old photo early: the test tests nothing")
	}
}

// A Get cancelled while a blob is on its way returns an error matching
// context.Canceled, as a *large.Error naming the keys, and leaves no read
// running.
func TestGetCancelledWhileReadingABlob(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testConfig())
	stored(t, f)
	name := photoBlob(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hold := &holdBlob{suffix: name[strings.LastIndex(name, "/"):], onHold: cancel}
	hold.on.Store(true)
	reader := f.on(t, env.With(hold))
	_, err := reader.emps.Get(ctx, "Sales", "000123")
	var le *large.Error
	if !errors.Is(err, context.Canceled) || !errors.As(err, &le) || le.RowKey != "000123" {
		t.Errorf("Get cancelled while reading the photo: %v, want a *large.Error matching context.Canceled", err)
	}
	if n := hold.waiting.Load(); n != 0 || hold.held.Load() == 0 {
		t.Errorf("Get returned with %d of %d held reads under way", n, hold.held.Load())
	}
}
