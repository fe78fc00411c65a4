package large_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/tablekit/tablekit/patterns/large"
)

// An employee with a photo, a résumé and a video round-trips, each value
// checked; a replace that changes one value uploads one blob and deletes
// the old one; a delete leaves no blob.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testConfig())
	photo, video := payload(1, 300<<10), payload(2, 200<<10) // video: 4 blocks of 64 KiB
	e := Employee{Dept: "Sales", ID: "000123", Name: "Jones", Photo: photo, CV: "résumé", Video: large.NewStream(bytes.NewReader(video))}
	if err := f.emps.Insert(ctx, &e); err != nil {
		t.Fatal(err)
	}
	if e.ETag == "" || e.Video.Size() != int64(len(video)) {
		t.Errorf("after Insert ETag %q, video ref %+v", e.ETag, e.Video.Ref())
	}
	got, err := f.emps.Get(ctx, "Sales", "000123")
	if err != nil {
		t.Fatal(err)
	}
	if d := same(got.Photo, photo); d != "" || got.CV != "résumé" || got.Name != "Jones" || got.ETag != e.ETag {
		t.Errorf("Get: photo %s, %+v", d, got)
	}
	v, err := readAll(t, got.Video)
	if err != nil {
		t.Fatal(err)
	}
	if d := same(v, video); d != "" {
		t.Errorf("video: %s", d)
	}
	if n := len(f.blobNames(t)); n != 3 {
		t.Errorf("%d blobs, want 3", n)
	}

	// Replace the photo only: the résumé and video keep their blobs.
	got.Photo = payload(3, 100<<10)
	if err := f.emps.Replace(ctx, &got); err != nil {
		t.Fatal(err)
	}
	f.settle(t)
	f.checkClean(t)
	again, err := f.emps.Get(ctx, "Sales", "000123")
	if err != nil {
		t.Fatal(err)
	}
	if d := same(again.Photo, got.Photo); d != "" || again.Video.Ref() != e.Video.Ref() {
		t.Errorf("after Replace: photo %s; video %+v, want %+v", d, again.Video.Ref(), e.Video.Ref())
	}
	if err := f.emps.Delete(ctx, "Sales", "000123", again.ETag); err != nil {
		t.Fatal(err)
	}
	f.settle(t)
	if names := f.blobNames(t); len(names) != 0 {
		t.Errorf("after Delete: blobs %q", names)
	}
}

// A non-nil empty []byte, like nil, "" and the zero Stream, is no value:
// no property, no blob, and it reads back nil. Replacing a photo by an
// empty one removes the reference, and the worker deletes the old blob.
func TestEmptyValuesAreNoValue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testConfig())
	e := Employee{Dept: "Sales", ID: "000123", Name: "Jones", Photo: []byte{}, CV: ""}
	if err := f.emps.Insert(ctx, &e); err != nil {
		t.Fatal(err)
	}
	if refs, names := f.rawRefs(t), f.blobNames(t); len(refs) != 0 || len(names) != 0 {
		t.Errorf("an employee without values stores references %v and blobs %q", refs, names)
	}
	got, err := f.emps.Get(ctx, "Sales", "000123")
	if err != nil {
		t.Fatal(err)
	}
	if got.Photo != nil || got.CV != "" || !got.Video.Ref().IsZero() {
		t.Errorf("read back photo %#v, résumé %q, video %+v; want nil, \"\" and no value", got.Photo, got.CV, got.Video.Ref())
	}
	got.Photo = payload(1, 1000)
	if err := f.emps.Replace(ctx, &got); err != nil {
		t.Fatal(err)
	}
	got.Photo = []byte{}
	if err := f.emps.Replace(ctx, &got); err != nil {
		t.Fatal(err)
	}
	f.settle(t)
	if refs, names := f.rawRefs(t), f.blobNames(t); len(refs) != 0 || len(names) != 0 {
		t.Errorf("after an empty photo replaced one: references %v and blobs %q", refs, names)
	}
}
