package eventual_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"path"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// TestOnceLostReplyWithACopyInTheWindow: Once's transaction is applied and
// its reply lost; inside azcore's retry window a second copy of the same
// message runs Once for the same key through a client without faults.
// The copy finds the marker and reports not applied; the first call's
// resend fails at the marker, which carries its attempt id: it reports
// applied. The counter, read back, is 1.
func TestOnceLostReplyWithACopyInTheWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newStepTable(t, env)
	if err := tbl.Insert(ctx, &stepItem{PartitionKey: "p", RowKey: "counter"}); err != nil {
		t.Fatal(err)
	}
	f := faults.New(faults.Config{})
	lossy := stepView(t, env.With(f), tbl)
	var copyApplied bool
	var copyErr error
	f.LoseNextThen(1, isBatch, func(*http.Request) {
		copyApplied, copyErr = eventual.OnceKey(ctx, tbl, "p", "msg-1", eventual.OnceConfig{}, stepIncrement(tbl))
	})
	applied, err := eventual.OnceKey(ctx, lossy, "p", "msg-1", eventual.OnceConfig{}, stepIncrement(lossy))
	if err != nil || !applied {
		t.Errorf("Once whose reply was lost = %v, %v; want applied", applied, err)
	}
	if copyErr != nil || copyApplied {
		t.Errorf("the copy's Once = %v, %v; want not applied", copyApplied, copyErr)
	}
	if f.Stats().LostReplies != 1 {
		t.Fatal("no reply was lost")
	}
	if got := stepCounter(t, tbl); got != 1 {
		t.Errorf("counter = %d, want 1", got)
	}
}

// TestMoveLostDeleteReplyReinsertInTheWindow: Move's delete of the source
// is applied and its reply lost; inside the retry window another writer
// inserts a new version under the same keys. The resend (If-Match: the
// version read) meets the new version: nothing is deleted twice blindly;
// Move reads again and moves the new version too, as a Move running after
// that insert would: the source ends empty and the target holds the
// latest version (read back with a plain client).
func TestMoveLostDeleteReplyReinsertInTheWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{})
	from, to := newStepTable(t, env), newStepTable(t, env)
	if err := from.Insert(ctx, &stepItem{PartitionKey: "p", RowKey: "r", Value: "v1"}); err != nil {
		t.Fatal(err)
	}
	f.LoseNextThen(1, func(r *http.Request) bool { return r.Method == http.MethodDelete }, func(*http.Request) {
		if err := from.Insert(ctx, &stepItem{PartitionKey: "p", RowKey: "r", Value: "v2"}); err != nil {
			t.Error(err)
		}
	})
	if err := eventual.Move(ctx, stepView(t, env.With(f), from), to, "p", "r", nil); err != nil {
		t.Fatalf("Move = %v", err)
	}
	if f.Stats().LostReplies != 1 {
		t.Fatal("no reply was lost")
	}
	if _, err := from.Get(ctx, "p", "r"); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("source: %v, want gone", err)
	}
	if got, err := to.Get(ctx, "p", "r"); err != nil || got.Value != "v2" {
		t.Errorf("target holds %+v (%v), want v2", got, err)
	}
}

// TestPutBlobIfAbsentReplacedInTheRetryWindow: PutBlobIfAbsent's upload is
// applied and its reply lost; inside the retry window another writer
// replaces the blob unconditionally. The resend is refused (the blob
// exists), and the stored blob is not this call's: created is false, as
// documented, and the blob holds the other writer's data.
func TestPutBlobIfAbsentReplacedInTheRetryWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{})
	lossyC := env.With(f).Container(t)
	clean := env.BlobService.ServiceClient().NewContainerClient(path.Base(lossyC.URL()))
	f.LoseNextThen(1, func(r *http.Request) bool { return r.Method == http.MethodPut }, func(*http.Request) {
		if _, err := clean.NewBlockBlobClient("x").Upload(ctx, streaming.NopCloser(bytes.NewReader([]byte("theirs"))), nil); err != nil {
			t.Error(err)
		}
	})
	created, err := eventual.PutBlobIfAbsent(ctx, lossyC, "x", []byte("mine"))
	if err != nil || created {
		t.Errorf("PutBlobIfAbsent = %v, %v; want not created (the blob stored is not this call's)", created, err)
	}
	resp, err := clean.NewBlobClient("x").DownloadStream(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if string(data) != "theirs" {
		t.Errorf("blob holds %q, want the other writer's", data)
	}
}
