package large_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/large"
)

// Sweep deletes the orphans older than the grace period and nothing else:
// not the blobs an entity references, not a young orphan (a write may be
// under way), not a blob without the package's metadata.
func TestSweepKeepsWhatIsReferencedOrYoung(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Now()
	cfg := testConfig()
	cfg.Grace = time.Hour
	cfg.Now = func() time.Time { return now }
	f := newFixture(t, cfg)
	stored(t, f) // 3 referenced blobs
	// Orphans: a second insert of the same keys uploads 3 blobs and is
	// refused; its clean-up message is never run (no worker).
	dup := v2.employee()
	if err := f.emps.Insert(ctx, &dup); !errors.Is(err, entity.ErrAlreadyExists) {
		t.Fatalf("second insert: %v", err)
	}
	foreign := f.table + "/not-ours"
	if _, err := f.cont.NewBlockBlobClient(foreign).Upload(ctx, streaming.NopCloser(bytes.NewReader([]byte("x"))), nil); err != nil {
		t.Fatal(err)
	}
	res, err := f.emps.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (large.SweepResult{Blobs: 7, Young: 6, Foreign: 1}); res != want {
		t.Errorf("sweep within the grace period: %+v, want %+v", res, want)
	}
	now = now.Add(2 * time.Hour)
	if res, err = f.emps.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if want := (large.SweepResult{Blobs: 7, Foreign: 1, Referenced: 3, Deleted: 3}); res != want {
		t.Errorf("sweep past the grace period: %+v, want %+v", res, want)
	}
	readsAs(t, f, false, v1)
	names := f.blobNames(t)
	if len(names) != 4 {
		t.Errorf("left %q, want the 3 referenced blobs and the foreign one", names)
	}
}

// A write whose uploads took longer than half the grace period does not
// write its entity (Sweep may already take its blobs for orphans): it
// fails with ErrUploadExpired, and its blobs are deleted.
func TestSlowUploadExpires(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Grace = 2 * time.Nanosecond
	f := newFixture(t, cfg)
	e := v1.employee()
	err := f.emps.Insert(context.Background(), &e)
	if !errors.Is(err, large.ErrUploadExpired) {
		t.Fatalf("Insert = %v, want ErrUploadExpired", err)
	}
	readsAs(t, f, true)
	if err := f.drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if names := f.blobNames(t); len(names) != 0 {
		t.Errorf("the expired write left %q", names)
	}
}
