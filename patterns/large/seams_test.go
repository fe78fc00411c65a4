package large_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/large"
)

// rawRef is a blob reference as stored, read without this package.
type rawRef struct {
	Blob   string `json:"blob"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	CRC32C string `json:"crc32c"`
}

// rawRefs lists the references the table's entities hold, read with a
// raw aztables pager and encoding/json: "pk/rk/property" → reference.
func (f *fixture) rawRefs(t testing.TB) map[string]rawRef {
	t.Helper()
	out := map[string]rawRef{}
	pager := f.client.NewListEntitiesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, body := range page.Entities {
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{"Photo", "Resume", "Video"} {
				s, ok := m[p].(string)
				if !ok {
					continue
				}
				var r rawRef
				if err := json.Unmarshal([]byte(s), &r); err != nil || r.Blob == "" {
					t.Fatalf("%v/%v: property %s = %s is not a reference", m["PartitionKey"], m["RowKey"], p, s)
				}
				out[m["PartitionKey"].(string)+"/"+m["RowKey"].(string)+"/"+p] = r
			}
		}
	}
	return out
}

// missing lists the references whose blob is gone or of another size,
// read with raw aztables and azblob clients: what "an entity never
// references a missing blob" forbids.
func (f *fixture) missing(t testing.TB) []string {
	t.Helper()
	var out []string
	for where, r := range f.rawRefs(t) {
		props, err := f.cont.NewBlobClient(r.Blob).GetProperties(context.Background(), nil)
		switch {
		case bloberror.HasCode(err, bloberror.BlobNotFound):
			out = append(out, where+": "+r.Blob+" is gone")
		case err != nil:
			t.Fatal(err)
		case props.ContentLength == nil || *props.ContentLength != r.Size:
			out = append(out, where+": "+r.Blob+" has another size")
		}
	}
	sort.Strings(out)
	return out
}

// worker returns a view of f whose processor reports every delivery on
// the channel returned and whose clock (Config.Now, which judges blob
// ages) runs shift ahead of the real one.
func (f *fixture) worker(t testing.TB, shift time.Duration) (*fixture, <-chan eventual.Outcome) {
	t.Helper()
	g := *f
	g.cfg.Now = func() time.Time { return time.Now().Add(shift) }
	ch := make(chan eventual.Outcome, 64)
	g.hooks = eventual.Hooks{Outcome: func(o eventual.Outcome) {
		select {
		case ch <- o:
		default:
		}
	}}
	return g.on(t, env), ch
}

// handle runs w's processor until n deliveries have succeeded.
func handle(t testing.TB, w *fixture, outcomes <-chan eventual.Outcome, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	done := make(chan error, 1)
	go func() { done <- w.proc.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for n > 0 {
		select {
		case o := <-outcomes:
			if o.Result == eventual.Done {
				n--
			} else {
				t.Errorf("disposal delivery %v: %v", o.Result, o.Err)
			}
		case <-ctx.Done():
			t.Fatalf("%d disposal messages not handled", n)
		}
	}
}

// A write whose reply is lost while another process writes the same
// employee inside azcore's retry window — and, in most cases, its worker
// handles the disposal that write sent before the resend arrives: the
// outcome reported is true (an applied write is never reported refused),
// and, once the queue has drained and Sweep has run, no entity references
// a missing blob and no blob is left over, read back with raw clients.
//
// The insert cases are the ones that broke: the resent insert lands after
// the other process deleted the entity and disposed of its blobs, so it
// stores the employee again with references to deleted blobs. Disposal now
// deletes a blob only when the entity does not reference it and it is
// older than Config.Grace (its writer sends nothing after Grace/2).
func TestLostReplyBesideAnotherWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// other is what the other process does, through a fault-free Table,
	// and how many disposal messages its worker then handles.
	type other struct {
		name   string
		handle int
		do     func(t *testing.T, f *fixture)
	}
	anyETag := func(v version) Employee {
		e := v.employee()
		e.ETag = entity.AnyETag
		return e
	}
	v3 := version{name: "v3", photo: payload(30, 90<<10), video: payload(31, 80<<10), cv: "third résumé"}
	deletes := func(t *testing.T, f *fixture) {
		if err := f.emps.Delete(ctx, "Sales", "000123", entity.AnyETag); err != nil {
			t.Errorf("other process's Delete: %v", err)
		}
	}
	replaces := func(t *testing.T, f *fixture) {
		if err := f.emps.Replace(ctx, new(anyETag(v3))); err != nil {
			t.Errorf("other process's Replace: %v", err)
		}
	}
	inserts := func(t *testing.T, f *fixture) {
		if err := f.emps.Insert(ctx, new(v3.employee())); err != nil {
			t.Errorf("other process's Insert: %v", err)
		}
	}
	deleteLater := other{"delete", 0, deletes}
	deleteNow := other{"delete+dispose", 1, deletes}
	replaceNow := other{"replace+dispose", 1, replaces}
	replaceDeleteNow := other{"replace+delete+dispose", 2, func(t *testing.T, f *fixture) { replaces(t, f); deletes(t, f) }}
	insertNow := other{"insert", 0, inserts}

	// The lossy process writes v2 (over v1 when stored). outcome is what
	// it must report, final the version stored at the end ("" for none).
	const ok, unknown = "nil", "unknown"
	for _, c := range []struct {
		op      string
		stored  bool // v1 is stored first
		lose    string
		other   other
		outcome string
		final   string // "" for absent
		later   int    // disposal messages visible at the end: the lossy write's, and the other's not handled yet
	}{
		{"insert", false, cost.OpInsert, deleteLater, ok, "v2", 1},
		{"insert", false, cost.OpInsert, deleteNow, ok, "v2", 0},
		{"insert", false, cost.OpInsert, replaceNow, ok, "v3", 0},
		{"insert", false, cost.OpInsert, replaceDeleteNow, ok, "v2", 0},
		{"upsert", false, cost.OpInsert, deleteNow, ok, "v2", 0},
		{"upsert", true, cost.OpUpdate, deleteNow, unknown, "", 0},
		{"upsert", true, cost.OpUpdate, replaceNow, ok, "v3", 1},
		{"replace", true, cost.OpUpdate, deleteNow, unknown, "", 0},
		{"replace", true, cost.OpUpdate, replaceNow, ok, "v3", 1},
		{"delete", true, cost.OpDelete, insertNow, unknown, "v3", 0},
		{"delete", true, cost.OpDelete, deleteLater, ok, "", 1},
		{"delete", true, cost.OpDelete, other{"insert+delete+dispose", 1, func(t *testing.T, f *fixture) { inserts(t, f); deletes(t, f) }}, ok, "", 0},
		{"replace", true, cost.OpUpdate, replaceDeleteNow, unknown, "", 0},
		{"upsert", true, cost.OpUpdate, replaceDeleteNow, unknown, "", 0},
		{"insert", false, cost.OpInsert, other{"delete+insert", 0, func(t *testing.T, f *fixture) { deletes(t, f); inserts(t, f) }}, unknown, "v3", 1},
	} {
		name := c.op
		if c.stored {
			name += "-over-v1"
		}
		t.Run(name+"/"+c.other.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			cfg.Grace = time.Hour // as in production: writers have 30 minutes
			f := newFixture(t, cfg)
			var etag string
			if c.stored {
				etag = stored(t, f).ETag
			}
			// The other process's worker judges ages by the real clock:
			// the blobs written just now are young.
			w, outcomes := f.worker(t, 0)
			inj := faults.New(faults.Config{})
			lossy := f.on(t, env.With(inj))
			ran := false
			inj.LoseNextThen(1, ops(c.lose), func(*http.Request) {
				ran = true
				c.other.do(t, f)
				if c.other.handle > 0 {
					handle(t, w, outcomes, c.other.handle)
				}
			})
			var err error
			switch c.op {
			case "insert":
				err = lossy.emps.Insert(ctx, new(v2.employee()))
			case "upsert":
				err = lossy.emps.Upsert(ctx, new(v2.employee()))
			case "replace":
				e := v2.employee()
				e.ETag = etag
				err = lossy.emps.Replace(ctx, &e)
			case "delete":
				err = lossy.emps.Delete(ctx, "Sales", "000123", etag)
			}
			if !ran {
				t.Fatal("no reply was lost")
			}
			switch {
			case c.outcome == ok && err != nil, c.outcome == unknown && !errors.Is(err, entity.ErrOutcomeUnknown):
				t.Errorf("%s: %v, want %s", c.op, err, c.outcome)
			}
			if m := f.missing(t); len(m) > 0 {
				t.Errorf("right after the %s: references to missing blobs %q", c.op, m)
			}
			// Converge: the messages visible now, handled two hours
			// later, and a sweep. (The messages deferred until their
			// blobs are old are TestDisposalWaitsUntilBlobsAreOld's.)
			late, lateOutcomes := f.worker(t, 2*time.Hour)
			handle(t, late, lateOutcomes, c.later)
			if _, err := late.emps.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
			if m := f.missing(t); len(m) > 0 {
				t.Errorf("after the disposals and Sweep: references to missing blobs %q", m)
			}
			f.checkClean(t)
			if c.final == "" {
				readsAs(t, f, true)
			} else {
				readsAs(t, f, false, map[string]version{"v2": v2, "v3": v3}[c.final])
			}
		})
	}
}

// holdFirst holds the first request of kind op for as long as its context
// lives — a slow network, throttled retries — and runs during the hold
// what another process does meanwhile: before sending it (the request
// reaches the service late) or after (the reply does).
type holdFirst struct {
	once   sync.Once
	op     string
	before bool
	during func()
	held   atomic.Bool
}

func (h *holdFirst) Do(req *policy.Request) (*http.Response, error) {
	first := false
	if cost.Classify(req.Raw()).Op == h.op {
		h.once.Do(func() { first = true })
	}
	if !first {
		return req.Next()
	}
	h.held.Store(true)
	wait := func() {
		if _, ok := req.Raw().Context().Deadline(); ok {
			<-req.Raw().Context().Done()
		}
	}
	if h.before {
		h.during()
		wait()
		return req.Next()
	}
	resp, err := req.Next()
	h.during()
	wait()
	return resp, err
}

// A write whose entity request is held — before it is sent, or after the
// service executed it — while Sweep runs as if Grace had passed since the
// uploads: the write never stores an entity that references a blob Sweep
// deleted. Held before sending, the request is not sent once its deadline
// (Grace/2 after the uploads began) has passed: the write fails and the
// employee stays as it was. Held after, Sweep finds the blobs referenced
// and keeps them.
func TestSlowEntityWriteBesideSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		op     string
		before bool
	}{{"insert", true}, {"insert", false}, {"replace", true}, {"replace", false}} {
		name := c.op + map[bool]string{true: "/held-before-sending", false: "/reply-held"}[c.before]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			cfg.Grace = 3 * time.Second
			f := newFixture(t, cfg)
			var etag string
			if c.op == "replace" {
				etag = stored(t, f).ETag
			}
			later := *f
			later.cfg.Now = func() time.Time { return time.Now().Add(cfg.Grace + time.Second) }
			sweeper := later.on(t, env)
			lose := cost.OpInsert
			if c.op == "replace" {
				lose = cost.OpUpdate
			}
			var swept large.SweepResult
			h := &holdFirst{op: lose, before: c.before, during: func() {
				var err error
				if swept, err = sweeper.emps.Sweep(ctx); err != nil {
					t.Error(err)
				}
			}}
			slow := f.on(t, env.With(h))
			e := v2.employee()
			var err error
			if c.op == "insert" {
				err = slow.emps.Insert(ctx, &e)
			} else {
				e.ETag = etag
				err = slow.emps.Replace(ctx, &e)
			}
			if !h.held.Load() {
				t.Fatalf("the entity's write was not sent (uploads slower than Grace/2?): %v", err)
			}
			if m := f.missing(t); len(m) > 0 {
				t.Errorf("the sweep deleted %d blobs; references to missing blobs %q", swept.Deleted, m)
			}
			switch {
			case c.before && err == nil:
				t.Errorf("%s held past its deadline reported success", c.op)
			case c.before:
				want := map[string]bool{"insert": true, "replace": false}[c.op] // absent, or v1
				if want {
					readsAs(t, f, true)
				} else {
					readsAs(t, f, false, v1)
				}
				if !errors.Is(err, large.ErrUploadExpired) && !errors.Is(err, entity.ErrOutcomeUnknown) {
					t.Errorf("%s held past its deadline: %v, want ErrUploadExpired or ErrOutcomeUnknown", c.op, err)
				}
			default:
				if err != nil && !errors.Is(err, entity.ErrOutcomeUnknown) {
					t.Errorf("%s executed, reply held: %v", c.op, err)
				}
				readsAs(t, f, false, v2)
			}
			if _, err := sweeper.emps.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
			if err := f.drain(ctx); err != nil {
				t.Fatal(err)
			}
			if m := f.missing(t); len(m) > 0 {
				t.Errorf("after the queue and Sweep: references to missing blobs %q", m)
			}
		})
	}
}

// The disposal of a deleted version's blobs waits until they are older
// than Config.Grace, and then deletes only those the entity does not
// reference: the writer that uploaded them may still be resending its
// insert, which stores them again (here that resend is made with a raw
// client, the body as first stored). Two employees are deleted while
// their blobs are young; one of them is stored again before the deferred
// disposal runs: its blobs stay, the other's go.
func TestDisposalWaitsUntilBlobsAreOld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig()
	cfg.Grace = time.Hour
	f := newFixture(t, cfg)
	stored(t, f)
	other := v1.employee()
	other.ID = "000456"
	if err := f.emps.Insert(ctx, &other); err != nil {
		t.Fatal(err)
	}
	got, err := f.client.GetEntity(ctx, "Sales", "000123", nil)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(got.Value, &body); err != nil {
		t.Fatal(err)
	}
	for k := range body {
		if k == "Timestamp" || strings.HasPrefix(k, "odata.") {
			delete(body, k)
		}
	}
	resend, _ := json.Marshal(body)
	for _, id := range []string{"000123", "000456"} {
		if err := f.emps.Delete(ctx, "Sales", id, entity.AnyETag); err != nil {
			t.Fatal(err)
		}
	}
	// The worker judges ages 2 s short of the grace period: the blobs are
	// young now, and old 2 s later.
	w, outcomes := f.worker(t, cfg.Grace-2*time.Second)
	handle(t, w, outcomes, 2)
	if n := len(f.blobNames(t)); n != 6 {
		t.Fatalf("%d blobs after the disposal of young blobs, want all 6", n)
	}
	if _, err := f.client.AddEntity(ctx, resend, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.drain(ctx); err != nil { // the deferred disposals, once the blobs are old
		t.Fatal(err)
	}
	if m := f.missing(t); len(m) > 0 {
		t.Errorf("references to missing blobs %q", m)
	}
	f.checkClean(t)
	readsAs(t, f, false, v1)
	if n := len(f.blobNames(t)); n != 3 {
		t.Errorf("%d blobs left, want the stored employee's 3", n)
	}
}

// A resent insert that lands between a worker's read of the references
// (none: the entity was deleted) and its Delete Blob: the delete is
// refused, the blob being younger than Config.Grace, and the disposal
// deferred; when it runs again the entity references the blob, which
// stays. (With a negative Grace — no writers running — the blob would go.)
func TestDisposalRacingAResentInsert(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig()
	cfg.Grace = time.Hour
	f := newFixture(t, cfg)
	stored(t, f)
	got, err := f.client.GetEntity(ctx, "Sales", "000123", nil)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(got.Value, &body); err != nil {
		t.Fatal(err)
	}
	for k := range body {
		if k == "Timestamp" || strings.HasPrefix(k, "odata.") {
			delete(body, k)
		}
	}
	resend, _ := json.Marshal(body)
	if err := f.emps.Delete(ctx, "Sales", "000123", entity.AnyETag); err != nil {
		t.Fatal(err)
	}
	h := &holdFirst{op: cost.OpDeleteBlob, before: true, during: func() {
		if _, err := f.client.AddEntity(ctx, resend, nil); err != nil {
			t.Error(err)
		}
	}}
	g := *f
	g.cfg.Now = func() time.Time { return time.Now().Add(cfg.Grace - 2*time.Second) }
	outcomes := make(chan eventual.Outcome, 16)
	g.hooks = eventual.Hooks{Outcome: func(o eventual.Outcome) { outcomes <- o }}
	w := g.on(t, env.With(h))
	handle(t, w, outcomes, 1)
	if !h.held.Load() {
		t.Fatal("the worker deleted no blob")
	}
	if m := f.missing(t); len(m) > 0 {
		t.Fatalf("right after the worker: references to missing blobs %q", m)
	}
	if err := w.drain(ctx); err != nil { // the deferred disposal
		t.Fatal(err)
	}
	if m := f.missing(t); len(m) > 0 {
		t.Errorf("after the deferred disposal: references to missing blobs %q", m)
	}
	readsAs(t, f, false, v1)
	f.checkClean(t)
}

// failingReader yields n bytes, then err.
type failingReader struct {
	n   int
	err error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, r.err
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = byte(i)
	}
	r.n -= k
	return k, nil
}

// One bad value among an entity's several — a video whose reader fails
// after three blocks — fails the write alone, with the reader's error:
// nothing of the entity is written, the photo and résumé uploaded beside
// it are deleted by the worker at once, the video's blocks were never
// committed, and a stored version stays whole.
func TestOneFailingValueAmongSeveral(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	boom := errors.New("camera unplugged")
	for _, op := range []string{"insert", "replace"} {
		t.Run(op, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, testConfig())
			e := v2.employee()
			e.CV = "a new résumé"
			e.Video = large.NewStream(&failingReader{n: 3*64<<10 + 100, err: boom})
			var err error
			if op == "insert" {
				err = f.emps.Insert(ctx, &e)
			} else {
				stored(t, f)
				e.ETag = entity.AnyETag
				err = f.emps.Replace(ctx, &e)
			}
			if !errors.Is(err, boom) || !strings.Contains(err.Error(), "Video") {
				t.Errorf("%s with a failing video: %v, want the reader's error naming the video's blob", op, err)
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
