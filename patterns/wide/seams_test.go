package wide_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/wide"
)

// rawRows reads the rows of the logical entity id straight from the
// service, with aztables alone: RowKey → properties as aztables decodes
// them.
func rawRows(t *testing.T, client *aztables.Client, pk, id string) map[string]map[string]any {
	t.Helper()
	from, _ := keys.CompoundPrefix(id, "00")
	_, to := keys.CompoundPrefix(id, "99")
	filter := "PartitionKey eq '" + pk + "' and RowKey ge '" + from + "' and RowKey lt '" + to + "'"
	pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
	out := map[string]map[string]any{}
	for pager.More() {
		page, err := pager.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Entities {
			var e aztables.EDMEntity
			if err := e.UnmarshalJSON(raw); err != nil {
				t.Fatal(err)
			}
			out[e.RowKey] = e.Properties
		}
	}
	return out
}

// wholeOrGone asserts, from a raw listing, that the logical entity id is
// either absent (no row at all) or one whole version: a head and exactly
// the rows its manifest lists, each of the version the manifest names.
// It returns the number of rows of properties, -1 when absent.
func wholeOrGone(t *testing.T, client *aztables.Client, pk, id string) int {
	t.Helper()
	rows := rawRows(t, client, pk, id)
	if len(rows) == 0 {
		return -1
	}
	h, ok := rows[keys.Compound(id, "00")]
	if !ok {
		t.Fatalf("%d rows of %s/%s stored without their head: a torn entity", len(rows), pk, id)
	}
	manifest, _ := h["WideManifest"].(string)
	var versions []string
	if manifest != "" {
		versions = splitSpace(manifest)
	}
	if len(rows) != len(versions)+1 {
		t.Fatalf("%s/%s: head lists %d rows, %d stored besides it", pk, id, len(versions), len(rows)-1)
	}
	for k, v := range versions {
		r, ok := rows[keys.Compound(id, pad2(k+1))]
		if !ok || r["WideVersion"] != v {
			t.Fatalf("%s/%s: row %02d is %v, the head lists version %s", pk, id, k+1, r["WideVersion"], v)
		}
	}
	return len(versions)
}

func splitSpace(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func pad2(k int) string { return string([]byte{byte('0' + k/10), byte('0' + k%10)}) }

// beforeBatch is a pipeline policy that runs fn once, before the first
// entity group transaction its client sends.
func beforeBatch(fn func()) policy.Policy {
	var done atomic.Bool
	return hook(func(req *policy.Request) {
		if isBatch(req.Raw()) && done.CompareAndSwap(false, true) {
			fn()
		}
	})
}

// A write whose entity another process deleted before the write's
// transaction was sent is refused by the service at once, with no reply
// lost: Replace and Modify report entity.ErrNotFound and nothing else (not
// ErrOutcomeUnknown), and Upsert, whose contract is "whatever the stored
// version", inserts.
func TestWriteAfterAnotherDeleteIsNotFound(t *testing.T) {
	t.Parallel()
	name := sharedTable(t)
	client := env.TableService.NewClient(name)
	other := wrap[Counted](t, client, wide.Config{})
	ctx := t.Context()
	const pk = "gone"

	t.Run("Replace", func(t *testing.T) {
		w := wrap[Counted](t, client, wide.Config{})
		v := Counted{PartitionKey: pk, RowKey: "replace", Writer: 1, Props: bagOf(pk, "replace", 1, size(1)).Props}
		if err := w.Insert(ctx, &v); err != nil {
			t.Fatal(err)
		}
		if err := other.Delete(ctx, pk, v.RowKey, entity.AnyETag); err != nil {
			t.Fatal(err)
		}
		v.Count = 5
		err := w.Replace(ctx, &v)
		if !errors.Is(err, entity.ErrNotFound) || errors.Is(err, entity.ErrOutcomeUnknown) {
			t.Fatalf("Replace of a deleted entity: %v, want ErrNotFound only", err)
		}
		if n := wholeOrGone(t, client, pk, v.RowKey); n != -1 {
			t.Fatalf("%d rows left, want none", n)
		}
	})
	t.Run("Modify", func(t *testing.T) {
		v := Counted{PartitionKey: pk, RowKey: "modify", Writer: 1, Props: bagOf(pk, "modify", 1, size(1)).Props}
		if err := other.Insert(ctx, &v); err != nil {
			t.Fatal(err)
		}
		w := wrap[Counted](t, env.With(beforeBatch(func() {
			if err := other.Delete(context.Background(), pk, v.RowKey, entity.AnyETag); err != nil {
				t.Error(err)
			}
		})).TableService.NewClient(name), wide.Config{})
		_, err := w.Modify(ctx, pk, v.RowKey, func(c *Counted) error { c.Count++; return nil }, entity.ModifyOptions{})
		if !errors.Is(err, entity.ErrNotFound) || errors.Is(err, entity.ErrOutcomeUnknown) {
			t.Fatalf("Modify of an entity deleted before its write: %v, want ErrNotFound only", err)
		}
		if n := wholeOrGone(t, client, pk, v.RowKey); n != -1 {
			t.Fatalf("%d rows left, want none", n)
		}
	})
	t.Run("Upsert", func(t *testing.T) {
		v := Counted{PartitionKey: pk, RowKey: "upsert", Writer: 1, Props: bagOf(pk, "upsert", 1, size(1)).Props}
		if err := other.Insert(ctx, &v); err != nil {
			t.Fatal(err)
		}
		w := wrap[Counted](t, env.With(beforeBatch(func() {
			if err := other.Delete(context.Background(), pk, v.RowKey, entity.AnyETag); err != nil {
				t.Error(err)
			}
		})).TableService.NewClient(name), wide.Config{})
		u := Counted{PartitionKey: pk, RowKey: v.RowKey, Writer: 2, Count: 7, Props: bagOf(pk, v.RowKey, 2, size(2)).Props}
		if err := w.Upsert(ctx, &u); err != nil {
			t.Fatalf("Upsert racing a Delete: %v, want it inserted", err)
		}
		if n := wholeOrGone(t, client, pk, v.RowKey); n < 0 {
			t.Fatal("nothing stored")
		}
		got, err := other.Get(ctx, pk, v.RowKey)
		if err != nil || got.Writer != 2 || got.Count != 7 || consistent(got) != "" || got.ETag != u.ETag {
			t.Fatalf("stored writer %d count %d etag %q (%v), want the upsert's, etag %q", got.Writer, got.Count, got.ETag, err, u.ETag)
		}
	})
}

// A Delete whose transaction was applied and whose reply was lost, while
// another process inserts the same id before azcore resends it: the resend
// meets the new entity (412), yet the version Delete targeted is gone.
// Delete reports success (never ErrPreconditionFailed) and the new entity
// is left whole.
func TestDeleteLostReplyThenAnotherInsert(t *testing.T) {
	t.Parallel()
	name := sharedTable(t)
	plain := env.TableService.NewClient(name)
	other := wrap[Counted](t, plain, wide.Config{})
	f := faults.New(faults.Config{})
	w := wrap[Counted](t, env.With(f).TableService.NewClient(name), wide.Config{})
	ctx := t.Context()
	const pk = "p"
	for _, anyETag := range []bool{false, true} {
		id := "del-etag"
		if anyETag {
			id = "del-any"
		}
		v := Counted{PartitionKey: pk, RowKey: id, Writer: 1, Props: bagOf(pk, id, 1, size(1)).Props}
		if err := w.Insert(ctx, &v); err != nil {
			t.Fatal(err)
		}
		var otherErr error
		f.LoseNextThen(1, isBatch, func(*http.Request) {
			n := Counted{PartitionKey: pk, RowKey: id, Writer: 3, Count: 3, Props: bagOf(pk, id, 3, size(3)).Props}
			otherErr = other.Insert(context.Background(), &n)
		})
		etag := v.ETag
		if anyETag {
			etag = entity.AnyETag
		}
		err := w.Delete(ctx, pk, id, etag)
		if otherErr != nil {
			t.Fatalf("the other writer's insert: %v", otherErr)
		}
		if err != nil {
			t.Errorf("Delete(any %v) applied, reply lost, another insert before the resend: %v, want success", anyETag, err)
		}
		if n := wholeOrGone(t, plain, pk, id); n < 0 {
			t.Fatal("the other writer's entity is gone")
		}
		got, err := other.Get(ctx, pk, id)
		if err != nil || got.Writer != 3 || consistent(got) != "" {
			t.Fatalf("stored writer %d (%v), want the other writer's whole entity", got.Writer, err)
		}
	}
	if s := f.Stats(); s.LostReplies != 2 {
		t.Fatalf("%d replies lost, want 2", s.LostReplies)
	}
}

// seamOp is one public write of a Table, run on an entity prepared for it.
type seamOp struct {
	name   string
	exists bool // the entity is inserted (writer 1) before the operation
	// run performs the operation with w on base (the stored version, its
	// ETag set; the keys alone when !exists) and returns the value it
	// wrote, nil for a delete.
	run func(ctx context.Context, w *wide.Table[Counted], base Counted) (*Counted, error)
}

var seamOps = []seamOp{
	{"Insert", false, func(ctx context.Context, w *wide.Table[Counted], base Counted) (*Counted, error) {
		v := versionOf(base, 2)
		return &v, w.Insert(ctx, &v)
	}},
	{"Replace", true, func(ctx context.Context, w *wide.Table[Counted], base Counted) (*Counted, error) {
		v := versionOf(base, 2)
		v.ETag = base.ETag
		return &v, w.Replace(ctx, &v)
	}},
	{"Upsert existing", true, func(ctx context.Context, w *wide.Table[Counted], base Counted) (*Counted, error) {
		v := versionOf(base, 2)
		return &v, w.Upsert(ctx, &v)
	}},
	{"Upsert new", false, func(ctx context.Context, w *wide.Table[Counted], base Counted) (*Counted, error) {
		v := versionOf(base, 2)
		return &v, w.Upsert(ctx, &v)
	}},
	{"Modify", true, func(ctx context.Context, w *wide.Table[Counted], base Counted) (*Counted, error) {
		calls := 0
		v, err := w.Modify(ctx, base.PartitionKey, base.RowKey, func(c *Counted) error {
			calls++
			c.Count++
			return nil
		}, entity.ModifyOptions{})
		if calls > 1 {
			return &v, errors.New("the change function ran more than once")
		}
		return &v, err
	}},
	{"Delete by ETag", true, func(ctx context.Context, w *wide.Table[Counted], base Counted) (*Counted, error) {
		return nil, w.Delete(ctx, base.PartitionKey, base.RowKey, base.ETag)
	}},
	{"Delete any", true, func(ctx context.Context, w *wide.Table[Counted], base Counted) (*Counted, error) {
		return nil, w.Delete(ctx, base.PartitionKey, base.RowKey, entity.AnyETag)
	}},
}

// versionOf is writer's complete version of base's entity, its count 10
// times the writer.
func versionOf(base Counted, writer int) Counted {
	return Counted{PartitionKey: base.PartitionKey, RowKey: base.RowKey, Writer: int32(writer), Count: int64(10 * writer),
		Props: bagOf(base.PartitionKey, base.RowKey, writer, size(writer)).Props}
}

// competitors are the other writer's changes of the same entity.
var competitors = []struct {
	name string
	run  func(ctx context.Context, other *wide.Table[Counted], pk, id string) error
}{
	{"insert", func(ctx context.Context, other *wide.Table[Counted], pk, id string) error {
		v := versionOf(Counted{PartitionKey: pk, RowKey: id}, 3)
		return other.Insert(ctx, &v)
	}},
	{"replace", func(ctx context.Context, other *wide.Table[Counted], pk, id string) error {
		v := versionOf(Counted{PartitionKey: pk, RowKey: id}, 4)
		return other.Upsert(ctx, &v)
	}},
	{"merge", func(ctx context.Context, other *wide.Table[Counted], pk, id string) error {
		_, err := other.Modify(ctx, pk, id, func(c *Counted) error { c.Count += 100; return nil }, entity.ModifyOptions{})
		return err
	}},
	{"delete", func(ctx context.Context, other *wide.Table[Counted], pk, id string) error {
		return other.Delete(ctx, pk, id, entity.AnyETag)
	}},
}

// Every write, applied and its reply lost, while another writer inserts,
// replaces, merges or deletes the same entity inside azcore's retry
// window (after the lost request was executed, before the resend): the
// write reports success or entity.ErrOutcomeUnknown, never a refusal; an
// ETag it reports is the stored version's, holding what it wrote; Modify
// applies its change once; and the stored entity, read with aztables
// alone, is one whole version or nothing.
func TestLostReplySeams(t *testing.T) {
	t.Parallel()
	name := sharedTable(t)
	plain := env.TableService.NewClient(name)
	other := wrap[Counted](t, plain, wide.Config{})
	for _, op := range seamOps {
		for _, c := range competitors {
			for _, lost := range []int{1, 3} { // one reply lost; every try's (the test clients retry twice)
				t.Run(fmt.Sprintf("%s/%s/%d lost", op.name, c.name, lost), func(t *testing.T) {
					t.Parallel()
					ctx := t.Context()
					f := faults.New(faults.Config{})
					w := wrap[Counted](t, env.With(f).TableService.NewClient(name), wide.Config{})
					const pk = "seam"
					id := fmt.Sprintf("%s-%s-%d", op.name, c.name, lost)
					base := Counted{PartitionKey: pk, RowKey: id}
					if op.exists {
						base = versionOf(base, 1)
						if err := other.Insert(ctx, &base); err != nil {
							t.Fatal(err)
						}
					}
					var otherErr error
					var once sync.Once
					f.LoseNextThen(lost, isBatch, func(*http.Request) {
						once.Do(func() { otherErr = c.run(context.Background(), other, pk, id) })
					})
					got, err := op.run(ctx, w, base)
					if f.Stats().LostReplies == 0 {
						t.Fatal("no reply was lost")
					}
					t.Logf("%s: %v; the other writer's %s: %v", op.name, err, c.name, otherErr)
					if err != nil && !errors.Is(err, entity.ErrOutcomeUnknown) {
						t.Fatalf("%s applied, reply lost, another %s before the resend: %v, want success or ErrOutcomeUnknown", op.name, c.name, err)
					}
					n := wholeOrGone(t, plain, pk, id)
					stored, gerr := other.Get(ctx, pk, id)
					if (n < 0) != errors.Is(gerr, entity.ErrNotFound) || (n >= 0 && gerr != nil) {
						t.Fatalf("raw rows %d, a fresh Table's Get: %v", n, gerr)
					}
					if n >= 0 {
						if msg := consistent(stored); msg != "" {
							t.Fatalf("stored: %s", msg)
						}
					}
					if err != nil || got == nil {
						return
					}
					if got.ETag != "" && (gerr != nil || stored.ETag != got.ETag || stored.Count != got.Count || stored.Writer != got.Writer) {
						t.Fatalf("%s reported ETag %q (writer %d, count %d); stored %q (writer %d, count %d, %v)", op.name, got.ETag, got.Writer, got.Count, stored.ETag, stored.Writer, stored.Count, gerr)
					}
					if op.name == "Modify" && got.Count != base.Count+1 {
						t.Fatalf("Modify returned count %d, want %d", got.Count, base.Count+1)
					}
				})
			}
		}
	}
}

// Every write crashed after each of its requests (the process dies: no
// later request is sent) leaves the old version or the new one, whole, as
// aztables alone reads it; a fresh Table reads it and writes over it.
func TestCrashAtEveryRequest(t *testing.T) {
	t.Parallel()
	for _, op := range seamOps {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
				name := sharedTable(t)
				plain := env.TableService.NewClient(name)
				fresh := wrap[Counted](t, plain, wide.Config{})
				base := Counted{PartitionKey: "crash", RowKey: "e"}
				if op.exists {
					base = versionOf(base, 1)
					if err := fresh.Insert(t.Context(), &base); err != nil {
						t.Fatal(err)
					}
				}
				return crashtest.Run{
					Work: func(ctx context.Context, env *integration.Env) error {
						tbl, err := entity.NewTable[Counted](env.TableService.NewClient(name))
						if err != nil {
							return err
						}
						w, err := wide.New(tbl, wide.Config{})
						if err != nil {
							return err
						}
						_, err = op.run(ctx, w, base)
						return err
					},
					Recover: func(context.Context) error { return nil }, // a transaction needs none
					Check: func(t *testing.T) {
						n := wholeOrGone(t, plain, base.PartitionKey, base.RowKey)
						got, err := fresh.Get(t.Context(), base.PartitionKey, base.RowKey)
						switch {
						case n < 0 && !errors.Is(err, entity.ErrNotFound), n >= 0 && err != nil:
							t.Fatalf("raw rows %d, a fresh Table's Get: %v", n, err)
						case n >= 0:
							if msg := consistent(got); msg != "" {
								t.Fatal(msg)
							}
							if ok := got.Writer == 1 && (got.Count == 10 || got.Count == 11) || got.Writer == 2 && got.Count == 20; !ok {
								t.Fatalf("stored writer %d count %d: neither the old version nor the new", got.Writer, got.Count)
							}
						}
						next := versionOf(base, 5)
						if err := fresh.Upsert(t.Context(), &next); err != nil {
							t.Fatalf("a fresh Table's Upsert after the crash: %v", err)
						}
						if n := wholeOrGone(t, plain, base.PartitionKey, base.RowKey); n != len(rawLayout(t, fresh, next)) {
							t.Fatalf("after the fresh Upsert: %d rows", n)
						}
					},
				}
			}})
		})
	}
}

// rawLayout reads v's entity back with w and returns its rows of
// properties as the head lists them (for their number).
func rawLayout(t *testing.T, w *wide.Table[Counted], v Counted) []string {
	t.Helper()
	got, err := w.Get(t.Context(), v.PartitionKey, v.RowKey)
	if err != nil || got.Writer != v.Writer || consistent(got) != "" {
		t.Fatalf("read back writer %d (%v), want %d", got.Writer, err, v.Writer)
	}
	n := 0
	if _, err := fmt.Sscanf(got.ETag, "%d;", &n); err != nil {
		t.Fatalf("ETag %q: %v", got.ETag, err)
	}
	return make([]string, n)
}
