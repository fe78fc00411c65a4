package eventual_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/eventual"
)

type stepItem struct {
	PartitionKey string
	RowKey       string
	ETag         string
	Value        string
	Count        int64
}

func newStepTable(t *testing.T, e *integration.Env) *entity.Table[stepItem] {
	t.Helper()
	name := e.TableName(t)
	if _, err := e.TableService.CreateTable(context.Background(), name, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := entity.NewTableFromService[stepItem](e.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// stepView is tbl seen through e's clients.
func stepView(t *testing.T, e *integration.Env, tbl *entity.Table[stepItem]) *entity.Table[stepItem] {
	t.Helper()
	v, err := entity.NewTableFromService[stepItem](e.TableService, tbl.Name())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestInsertAndDeleteTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{})
	tbl := newStepTable(t, env)
	lossy := stepView(t, env.With(f), tbl)
	// The insert's reply is lost: azcore resends it and gets 409.
	f.LoseNext(1, func(r *http.Request) bool { return r.Method == http.MethodPost })
	if err := eventual.Insert(ctx, lossy, &stepItem{PartitionKey: "p", RowKey: "r", Value: "v"}); err != nil {
		t.Fatalf("Insert after a lost reply = %v", err)
	}
	if f.Stats().LostReplies != 1 {
		t.Fatal("no reply was lost")
	}
	if err := eventual.Insert(ctx, tbl, &stepItem{PartitionKey: "p", RowKey: "r", Value: "v"}); err != nil {
		t.Fatalf("second Insert = %v", err)
	}
	f.LoseNext(1, func(r *http.Request) bool { return r.Method == http.MethodDelete })
	for i := range 2 {
		if err := eventual.Delete(ctx, lossy, "p", "r"); err != nil {
			t.Fatalf("Delete %d = %v", i, err)
		}
	}
	if _, err := tbl.Get(ctx, "p", "r"); !errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("Get after Delete = %v", err)
	}
	missing, err := entity.NewTableFromService[stepItem](env.TableService, env.TableName(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := eventual.Delete(ctx, missing, "p", "r"); !errors.Is(err, entity.ErrTableNotFound) {
		t.Errorf("Delete in a missing table = %v, want ErrTableNotFound", err)
	}
}

func TestMove(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	from, to := newStepTable(t, env), newStepTable(t, env)
	if err := from.Insert(ctx, &stepItem{PartitionKey: "p", RowKey: "r", Value: "v1"}); err != nil {
		t.Fatal(err)
	}
	// A writer changes the source between Move's read and its delete: the
	// conditional delete fails and the round starts again, so the target
	// gets the writer's version.
	rounds := 0
	edit := func(e *stepItem) error {
		rounds++
		if rounds == 1 {
			changed := stepItem{PartitionKey: "p", RowKey: "r", Value: "v2"}
			if err := from.UpdateAny(ctx, &changed, entity.Replace); err != nil {
				return err
			}
		}
		e.Value += " archived"
		return nil
	}
	if err := eventual.Move(ctx, from, to, "p", "r", edit); err != nil {
		t.Fatal(err)
	}
	if rounds != 2 {
		t.Errorf("%d rounds, want 2", rounds)
	}
	got, err := to.Get(ctx, "p", "r")
	if err != nil || got.Value != "v2 archived" {
		t.Errorf("target holds %+v (%v), want v2 archived", got, err)
	}
	if _, err := from.Get(ctx, "p", "r"); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("source still holds it: %v", err)
	}
	// Moving again is done at once.
	if err := eventual.Move(ctx, from, to, "p", "r", nil); err != nil {
		t.Errorf("second Move = %v", err)
	}
}

func TestMoveLostDeleteReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{})
	from, to := newStepTable(t, env), newStepTable(t, env)
	if err := from.Insert(ctx, &stepItem{PartitionKey: "p", RowKey: "r", Value: "v"}); err != nil {
		t.Fatal(err)
	}
	f.LoseNext(1, func(r *http.Request) bool { return r.Method == http.MethodDelete })
	if err := eventual.Move(ctx, stepView(t, env.With(f), from), to, "p", "r", nil); err != nil {
		t.Fatalf("Move after a lost delete reply = %v", err)
	}
	if f.Stats().LostReplies != 1 {
		t.Fatal("no reply was lost")
	}
	if _, err := to.Get(ctx, "p", "r"); err != nil {
		t.Errorf("target: %v", err)
	}
}

// stepIncrement adds one to the counter entity in Once's transaction.
func stepIncrement(tbl *entity.Table[stepItem]) func(context.Context, *entity.Batch) error {
	return func(ctx context.Context, b *entity.Batch) error {
		c, err := tbl.Get(ctx, "p", "counter")
		if err != nil {
			return err
		}
		c.Count++
		b.Update(&c, entity.Merge)
		return nil
	}
}

func stepCounter(t *testing.T, tbl *entity.Table[stepItem]) int64 {
	t.Helper()
	c, err := tbl.Get(context.Background(), "p", "counter")
	if err != nil {
		t.Fatal(err)
	}
	return c.Count
}

func TestOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newStepTable(t, env)
	if err := tbl.Insert(ctx, &stepItem{PartitionKey: "p", RowKey: "counter"}); err != nil {
		t.Fatal(err)
	}
	applied, err := eventual.OnceKey(ctx, tbl, "p", "msg-1", eventual.OnceConfig{}, stepIncrement(tbl))
	if err != nil || !applied {
		t.Fatalf("first Once = %v, %v", applied, err)
	}
	applied, err = eventual.OnceKey(ctx, tbl, "p", "msg-1", eventual.OnceConfig{}, stepIncrement(tbl))
	if err != nil || applied {
		t.Fatalf("second Once = %v, %v; want not applied", applied, err)
	}
	if got := stepCounter(t, tbl); got != 1 {
		t.Fatalf("counter = %d after two runs of one key, want 1", got)
	}
	// The transaction's reply is lost: azcore resends it, the resend fails
	// at the marker, and Once still reports that this call applied it.
	f := faults.New(faults.Config{})
	f.LoseNext(1, isBatch)
	lossy := stepView(t, env.With(f), tbl)
	applied, err = eventual.OnceKey(ctx, lossy, "p", "msg-2", eventual.OnceConfig{}, stepIncrement(lossy))
	if err != nil || !applied {
		t.Fatalf("Once after a lost reply = %v, %v; want applied", applied, err)
	}
	if f.Stats().LostReplies != 1 {
		t.Fatal("no reply was lost")
	}
	if got := stepCounter(t, tbl); got != 2 {
		t.Fatalf("counter = %d, want 2", got)
	}
	// The effect's error comes back, and nothing is written.
	boom := errors.New("boom")
	if _, err := eventual.OnceKey(ctx, tbl, "p", "msg-3", eventual.OnceConfig{}, func(context.Context, *entity.Batch) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("Once with a failing effect = %v", err)
	}
	if applied, err := eventual.OnceKey(ctx, tbl, "p", "msg-3", eventual.OnceConfig{}, stepIncrement(tbl)); err != nil || !applied {
		t.Errorf("Once after a failed effect = %v, %v; want applied", applied, err)
	}
	// Bad keys are refused before any request.
	if _, err := eventual.OnceKey(ctx, tbl, "p", "a/b", eventual.OnceConfig{}, stepIncrement(tbl)); err == nil {
		t.Error("Once accepted a key with '/'")
	}
}

// TestOnceConcurrent runs one key's Once from eight goroutines that read
// the counter at the same moment: exactly one applies it.
func TestOnceConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newStepTable(t, env)
	if err := tbl.Insert(ctx, &stepItem{PartitionKey: "p", RowKey: "counter"}); err != nil {
		t.Fatal(err)
	}
	const n = 8
	barrier := crashtest.NewBarrier(n)
	var mu sync.Mutex
	applied := 0
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			first := true
			ok, err := eventual.OnceKey(ctx, tbl, "p", "same", eventual.OnceConfig{}, func(ctx context.Context, b *entity.Batch) error {
				if first {
					first = false
					wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
					defer cancel()
					if err := barrier.Wait(wctx); err != nil {
						return err
					}
				}
				return stepIncrement(tbl)(ctx, b)
			})
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				applied++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if applied != 1 {
		t.Errorf("%d calls applied the change, want 1", applied)
	}
	if got := stepCounter(t, tbl); got != 1 {
		t.Errorf("counter = %d, want 1", got)
	}
}

func TestSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newStepTable(t, env)
	for _, pk := range []string{"p", "q"} {
		if err := tbl.Insert(ctx, &stepItem{PartitionKey: pk, RowKey: "counter"}); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	old := eventual.OnceConfig{Now: func() time.Time { return long }, TTL: time.Hour}
	fresh := eventual.OnceConfig{Now: func() time.Time { return long.Add(48 * time.Hour) }, TTL: time.Hour}
	for i, key := range []string{"a", "b", "c"} {
		for _, pk := range []string{"p", "q"} {
			cfg := old
			if i == 2 {
				cfg = fresh
			}
			if _, err := eventual.OnceKey(ctx, tbl, pk, key, cfg, func(context.Context, *entity.Batch) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := long.Add(24 * time.Hour) // a and b expired, c not
	n, err := eventual.SweepMarkers(ctx, tbl, now, "p")
	if err != nil || n != 2 {
		t.Fatalf("Sweep of p = %d, %v; want 2", n, err)
	}
	n, err = eventual.SweepMarkers(ctx, tbl, now)
	if err != nil || n != 2 {
		t.Fatalf("Sweep of the table = %d, %v; want 2 (in q)", n, err)
	}
	var left []string
	for e, err := range tbl.Query(ctx, entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, e.PartitionKey+"/"+e.RowKey)
	}
	want := []string{"p/counter", "p/" + eventual.MarkerPrefix + "c", "q/counter", "q/" + eventual.MarkerPrefix + "c"}
	if strings.Join(left, " ") != strings.Join(want, " ") {
		t.Errorf("left %v, want %v", left, want)
	}
}

func TestBlobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{})
	c := env.With(f).Container(t)
	f.LoseNext(1, func(r *http.Request) bool { return r.Method == http.MethodPut })
	created, err := eventual.PutBlobIfAbsent(ctx, c, "a/b.json", []byte("one"))
	if err != nil || !created {
		t.Fatalf("PutBlobIfAbsent after a lost reply = %v, %v; want created", created, err)
	}
	if f.Stats().LostReplies != 1 {
		t.Fatal("no reply was lost")
	}
	created, err = eventual.PutBlobIfAbsent(ctx, c, "a/b.json", []byte("two"))
	if err != nil || created {
		t.Fatalf("second PutBlobIfAbsent = %v, %v; want not created", created, err)
	}
	read := func() string {
		resp, err := c.NewBlobClient("a/b.json").DownloadStream(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if got := read(); got != "one" {
		t.Errorf("blob holds %q, want the first write", got)
	}
	if err := eventual.PutBlob(ctx, c, "a/b.json", []byte("three")); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != "three" {
		t.Errorf("blob holds %q after PutBlob", got)
	}
	f.LoseNext(1, func(r *http.Request) bool { return r.Method == http.MethodDelete })
	for i := range 2 {
		if err := eventual.DeleteBlob(ctx, c, "a/b.json"); err != nil {
			t.Fatalf("DeleteBlob %d = %v", i, err)
		}
	}
	if _, err := c.NewBlobClient("a/b.json").GetProperties(ctx, nil); err == nil {
		t.Error("the blob is still there")
	}
}
