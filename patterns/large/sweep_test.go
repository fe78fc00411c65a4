package large_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
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

// One bad blob among many does not stop Sweep: a blob under the prefix
// whose metadata names keys no entity can have (not UTF-8, a '/') is left
// alone as foreign, and the orphans of other employees are still deleted.
func TestSweepGoesPastABadBlob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testConfig())
	stored(t, f)
	dup := v2.employee() // refused: its 3 uploads are orphans (no worker runs)
	if err := f.emps.Insert(ctx, &dup); !errors.Is(err, entity.ErrAlreadyExists) {
		t.Fatalf("second insert: %v", err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	for i, pk := range []string{"\xff", "a/b"} {
		md := map[string]*string{
			"tablekitpk":   to.Ptr(enc([]byte(pk))),
			"tablekitrk":   to.Ptr(enc([]byte("x"))),
			"tablekitprop": to.Ptr(enc([]byte("Photo"))),
		}
		name := f.table + "/bad/x/Photo/" + strconv.Itoa(i)
		if _, err := f.cont.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader([]byte("x"))), &blockblob.UploadOptions{Metadata: md}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := f.emps.Sweep(ctx)
	if err != nil {
		t.Fatalf("Sweep beside bad blobs: %v", err)
	}
	if want := (large.SweepResult{Blobs: 8, Foreign: 2, Referenced: 3, Deleted: 3}); res != want {
		t.Errorf("Sweep = %+v, want %+v", res, want)
	}
	readsAs(t, f, false, v1)

	// A partition whose references cannot be read (every query for it
	// fails) is left for the next Sweep; the others' orphans go.
	for _, dept := range []string{"Sales", "Other"} {
		e := v2.employee()
		e.Dept = dept
		if dept == "Other" {
			stored := v1.employee()
			stored.Dept = dept
			if err := f.emps.Insert(ctx, &stored); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.emps.Insert(ctx, &e); !errors.Is(err, entity.ErrAlreadyExists) {
			t.Fatalf("second insert in %s: %v", dept, err)
		}
	}
	inj := faults.New(faults.Config{FailBefore: 1, Match: func(r *http.Request) bool {
		return cost.Classify(r).Op == cost.OpQuery && strings.Contains(r.URL.RawQuery, "Other")
	}})
	res, err = f.on(t, env.With(inj)).emps.Sweep(ctx)
	if err == nil || !strings.Contains(err.Error(), `"Other"`) {
		t.Errorf("Sweep with partition Other unreadable: %v, want an error naming it", err)
	}
	if want := (large.SweepResult{Blobs: 14, Foreign: 2, Referenced: 3, Unchecked: 6, Deleted: 3}); res != want {
		t.Errorf("Sweep with partition Other unreadable = %+v, want %+v", res, want)
	}
	if res, err = f.emps.Sweep(ctx); err != nil || res.Deleted != 3 {
		t.Errorf("the next Sweep: %+v, %v; want the 3 orphans of Other deleted", res, err)
	}
}

// A Sweep that cannot list the blobs, or whose context is cancelled, says
// so as package large's error naming the step and the prefix, matching the
// cause (context.Canceled for a cancelled one), and deletes nothing.
func TestSweepErrorsNameTheStep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testConfig())
	dup := v2.employee() // refused: its 3 uploads are orphans (no worker runs)
	stored(t, f)
	if err := f.emps.Insert(ctx, &dup); !errors.Is(err, entity.ErrAlreadyExists) {
		t.Fatalf("second insert: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err := f.emps.Sweep(cctx)
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(fmt.Sprint(err), "large: sweep") {
		t.Errorf("cancelled Sweep: %v, want large's sweep error matching context.Canceled", err)
	}
	inj := faults.New(faults.Config{FailBefore: 1, Match: func(r *http.Request) bool {
		return cost.Classify(r).Op == cost.OpListBlobs
	}})
	res, err := f.on(t, env.With(inj)).emps.Sweep(ctx)
	if err == nil || !strings.HasPrefix(err.Error(), "large: sweep") || !strings.Contains(err.Error(), strconv.Quote(f.table+"/")) {
		t.Errorf("Sweep that cannot list: %v, want large's sweep error naming the prefix %q", err, f.table+"/")
	}
	if res.Deleted != 0 {
		t.Errorf("Sweep that cannot list deleted %d", res.Deleted)
	}
	if res, err := f.emps.Sweep(ctx); err != nil || res.Deleted != 3 {
		t.Errorf("the next Sweep: %+v, %v; want the 3 orphans deleted", res, err)
	}
}
