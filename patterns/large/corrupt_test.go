package large_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/patterns/large"
)

// stored inserts v1 and returns the employee as written, with its
// references.
func stored(t *testing.T, f *fixture) Employee {
	t.Helper()
	e := v1.employee()
	if err := f.emps.Insert(context.Background(), &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// photoBlob returns the name of the employee's photo blob, from the
// entity as stored.
func photoBlob(t testing.TB, f *fixture) string {
	t.Helper()
	for _, name := range f.referenced(t) {
		if bytes.Contains([]byte(name), []byte("/Photo/")) {
			return name
		}
	}
	t.Fatal("no photo blob")
	return ""
}

// overwrite replaces a blob's content behind the package's back.
func overwrite(t *testing.T, f *fixture, name string, data []byte) {
	t.Helper()
	if _, err := f.cont.NewBlockBlobClient(name).Upload(context.Background(), streaming.NopCloser(bytes.NewReader(data)), nil); err != nil {
		t.Fatal(err)
	}
}

// A blob whose bytes were changed — same size, or not — fails the check
// against its entity's SHA-256 and size: Get returns a *BlobError
// matching ErrBlobCorrupt and no photo.
func TestTamperedBlobFailsTheHashCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, tamper := range map[string]func([]byte) []byte{
		"one bit":   func(b []byte) []byte { c := bytes.Clone(b); c[len(c)/2] ^= 1; return c },
		"truncated": func(b []byte) []byte { return b[:len(b)-1] },
		"longer":    func(b []byte) []byte { return append(bytes.Clone(b), 0) },
		"empty":     func([]byte) []byte { return nil },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, testConfig())
			stored(t, f)
			overwrite(t, f, photoBlob(t, f), tamper(v1.photo))
			e, err := f.emps.Get(ctx, "Sales", "000123")
			var be *large.BlobError
			if !errors.Is(err, large.ErrBlobCorrupt) || !errors.As(err, &be) || be.Field != "Photo" {
				t.Fatalf("Get = %v, want a *BlobError matching ErrBlobCorrupt for Photo", err)
			}
			if e.Photo != nil || e.Name != "" {
				t.Errorf("Get returned data with its error: %d bytes, name %q", len(e.Photo), e.Name)
			}
		})
	}
}

// A Stream reads a tampered blob's bytes but, where io.EOF would come,
// returns ErrBlobCorrupt: a reader that reads to the end never takes the
// bad bytes for the value.
func TestTamperedStreamFailsAtTheEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testConfig())
	e := stored(t, f)
	bad := bytes.Clone(v1.video)
	bad[len(bad)-1] ^= 0x80
	overwrite(t, f, e.Video.Ref().Blob, bad)
	got, err := f.emps.Get(ctx, "Sales", "000123")
	if err != nil {
		t.Fatal(err) // the video is not read by Get
	}
	r, err := got.Video.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, err := io.Copy(io.Discard, r)
	if !errors.Is(err, large.ErrBlobCorrupt) {
		t.Errorf("reading the video to the end: %d bytes, %v; want ErrBlobCorrupt", n, err)
	}
}

// A blob that is gone, while its entity still references it, is an error
// matching ErrBlobMissing, after Get made sure by reading the entity
// again; a reference property that is not one is ErrBadReference.
func TestMissingBlobAndBadReference(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testConfig())
	stored(t, f)
	if _, err := f.cont.NewBlobClient(photoBlob(t, f)).Delete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	_, err := f.emps.Get(ctx, "Sales", "000123")
	if !errors.Is(err, large.ErrBlobMissing) {
		t.Errorf("Get of a deleted photo = %v, want ErrBlobMissing", err)
	}

	raw, err := entity.NewTable[entity.DynamicEntity](f.client)
	if err != nil {
		t.Fatal(err)
	}
	d, err := raw.Get(ctx, "Sales", "000123")
	if err != nil {
		t.Fatal(err)
	}
	d.Properties["Photo"] = `{"blob":"x","size":-1}`
	if err := raw.Update(ctx, &d, entity.Replace); err != nil {
		t.Fatal(err)
	}
	_, err = f.emps.Get(ctx, "Sales", "000123")
	var be *large.BlobError
	if !errors.Is(err, large.ErrBadReference) || !errors.As(err, &be) || be.Field != "Photo" {
		t.Errorf("Get of a bad reference = %v, want ErrBadReference for Photo", err)
	}

	// A replace repairs the entity; the sweep collects what is left over.
	e := v2.employee()
	e.ETag = entity.AnyETag
	if err := f.emps.Replace(ctx, &e); err != nil {
		t.Fatal(err)
	}
	readsAs(t, f, false, v2)
	f.settle(t)
	f.checkClean(t)
}

// One employee among several whose photo reference was tampered with (it
// no longer parses): Sweep cannot tell which blob that value meant, so it
// keeps that employee's photo blob and counts it Unreadable, while it
// still deletes the orphans of the others. Once the employee is deleted,
// the blob is an orphan that goes.
func TestSweepKeepsTheBlobOfAnUnreadableReference(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testConfig())
	stored(t, f)
	photo := photoBlob(t, f)
	other := v2.employee()
	other.ID = "000456"
	if err := f.emps.Insert(ctx, &other); err != nil {
		t.Fatal(err)
	}
	// An orphan of the other employee: an upload whose write never came.
	orphan := v2.employee()
	orphan.ID, orphan.ETag = "000456", entity.AnyETag
	orphan.Photo, orphan.Video = payload(99, 1000), large.Stream{} // one upload
	killed := f.on(t, env.With(crashtest.NewKiller(2)))            // the read and the photo's upload
	if err := killed.emps.Replace(ctx, &orphan); !errors.Is(err, crashtest.ErrKilled) {
		t.Fatalf("the crashing replace: %v", err)
	}
	body, err := f.client.GetEntity(ctx, "Sales", "000123", nil)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body.Value, &m); err != nil {
		t.Fatal(err)
	}
	m["Photo"] = `{"blob":"` + photo + `","size":-1}` // tampered: not a reference any more
	tampered, _ := json.Marshal(map[string]any{"PartitionKey": "Sales", "RowKey": "000123", "Photo": m["Photo"], "Resume": m["Resume"], "Video": m["Video"]})
	if _, err := f.client.UpsertEntity(ctx, tampered, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
		t.Fatal(err)
	}
	res, err := f.emps.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (large.SweepResult{Blobs: 7, Referenced: 5, Unreadable: 1, Deleted: 1}); res != want {
		t.Errorf("Sweep = %+v, want %+v", res, want)
	}
	if _, err := f.cont.NewBlobClient(photo).GetProperties(ctx, nil); err != nil {
		t.Fatalf("the photo of the unreadable reference: %v", err)
	}
	if err := f.emps.Delete(ctx, "Sales", "000123", entity.AnyETag); err != nil {
		t.Fatal(err)
	}
	f.settle(t) // the entity is gone: the photo is an orphan now
	f.checkClean(t)
	readsAs(t, f, true)
	if n := len(f.blobNames(t)); n != 3 {
		t.Errorf("%d blobs left, want the other employee's 3", n)
	}
}
