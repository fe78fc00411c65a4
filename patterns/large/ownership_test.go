package large_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/large"
)

// What plain writes (a plain entity.Table of the same type, and raw
// aztables) do to a large Table's entities, as the Ownership section says,
// read back with raw aztables and azblob clients:
//   - a plain merge of other properties keeps the references: the entity
//     reads whole, with the merged value;
//   - a plain replace (entity's codec leaves the blob fields out) drops
//     the references: the entity reads without its values, and its blobs
//     are orphans that Sweep deletes; no message was sent for them;
//   - a plain delete leaves its blobs to Sweep likewise;
//   - a raw copy of an entity to other keys shares its blobs, which the
//     original's Replace disposes of: the copy's Get then fails with a
//     *BlobError matching ErrBlobMissing.
func TestPlainWriteBesideTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testConfig())
	plain, err := entity.NewTableFromService[Employee](env.TableService, f.table)
	if err != nil {
		t.Fatal(err)
	}
	insert := func(id string, v version) Employee {
		e := v.employee()
		e.ID = id
		if err := f.emps.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	insert("merged", v1)
	insert("replaced", v1)
	insert("deleted", v1)
	original := insert("original", v1)
	refs := f.rawRefs(t)

	// A plain merge of Name.
	if err := plain.Update(ctx, &Employee{Dept: "Sales", ID: "merged", ETag: entity.AnyETag, Name: "merged"}, entity.Merge); err != nil {
		t.Fatal(err)
	}
	if got, err := f.emps.Get(ctx, "Sales", "merged"); err != nil || got.Name != "merged" || same(got.Photo, v1.photo) != "" || got.CV != v1.cv {
		t.Errorf("after a plain merge: %q %v %s", got.Name, err, same(got.Photo, v1.photo))
	}
	// A plain replace and a plain delete.
	if err := plain.Update(ctx, &Employee{Dept: "Sales", ID: "replaced", ETag: entity.AnyETag, Name: "replaced"}, entity.Replace); err != nil {
		t.Fatal(err)
	}
	if got, err := f.emps.Get(ctx, "Sales", "replaced"); err != nil || got.Name != "replaced" || got.Photo != nil || got.CV != "" || !got.Video.Ref().IsZero() {
		t.Errorf("after a plain replace: %+v %v, want no blob values", got.Name, err)
	}
	if err := plain.Delete(ctx, "Sales", "deleted", entity.AnyETag); err != nil {
		t.Fatal(err)
	}
	// A raw copy of the original, references and all.
	resp, err := f.client.GetEntity(ctx, "Sales", "original", nil)
	if err != nil {
		t.Fatal(err)
	}
	var props map[string]any
	if err := json.Unmarshal(resp.Value, &props); err != nil {
		t.Fatal(err)
	}
	copied := map[string]any{"PartitionKey": "Sales", "RowKey": "copy"}
	for _, p := range []string{"Name", "Photo", "Resume", "Video"} {
		copied[p] = props[p]
	}
	body, _ := json.Marshal(copied)
	if _, err := f.client.AddEntity(ctx, body, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := f.emps.Get(ctx, "Sales", "copy"); err != nil || same(got.Photo, v1.photo) != "" {
		t.Fatalf("the copy before the original changes: %v", err)
	}
	next := v2.employee()
	next.ID, next.ETag = "original", original.ETag
	if err := f.emps.Replace(ctx, &next); err != nil {
		t.Fatal(err)
	}
	if err := f.drain(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = f.emps.Get(ctx, "Sales", "copy")
	var be *large.BlobError
	if !errors.Is(err, large.ErrBlobMissing) || !errors.As(err, &be) || be.Field != "Photo" {
		t.Errorf("Get of the copy after the original's Replace = %v, want a *BlobError matching ErrBlobMissing for Photo", err)
	}

	// Sweep deletes what the plain replace and delete orphaned; the merged
	// employee keeps its blobs.
	res, err := f.emps.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	left := f.blobNames(t)
	for where, r := range refs {
		kept := slices.Contains(left, r.Blob)
		switch {
		case strings.HasPrefix(where, "Sales/merged/") && !kept:
			t.Errorf("%s: blob %s of the merged employee is gone", where, r.Blob)
		case (strings.HasPrefix(where, "Sales/replaced/") || strings.HasPrefix(where, "Sales/deleted/")) && kept:
			t.Errorf("%s: blob %s orphaned by a plain write is left after Sweep (%+v)", where, r.Blob, res)
		}
	}
	// The copy still names the original's old photo, which is gone.
	if m := f.missing(t); len(m) != 2 || !strings.Contains(strings.Join(m, " "), "Sales/copy/Photo") {
		t.Errorf("references to missing blobs %q, want the copy's photo and video", m)
	}
	if _, err := f.client.GetEntity(ctx, "Sales", "deleted", nil); err == nil {
		t.Error("the deleted employee is there")
	}
}
