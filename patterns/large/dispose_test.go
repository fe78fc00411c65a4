package large_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// A disposal judges which property a blob is of by its metadata, as
// Sweep does, not by its name: of an employee whose Resume reference was
// tampered with (unreadable), a blob named like a Photo but whose
// metadata says Resume is kept — it may be what the tampered reference
// meant — and one named like a Resume whose metadata says Photo, which
// the employee's Photo does not reference, is deleted. Read back with a
// raw azblob listing.
func TestDisposalGoesByMetadata(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testConfig())
	stored(t, f)
	refs := f.rawRefs(t)
	raw, err := entity.NewTable[entity.DynamicEntity](f.client)
	if err != nil {
		t.Fatal(err)
	}
	d, err := raw.Get(ctx, "Sales", "000123")
	if err != nil {
		t.Fatal(err)
	}
	d.Properties["Resume"] = "not a reference"
	if err := raw.Update(ctx, &d, entity.Replace); err != nil {
		t.Fatal(err)
	}
	prefix := f.table + "/"
	enc := func(s string) *string { v := base64.RawURLEncoding.EncodeToString([]byte(s)); return &v }
	put := func(nameProp, metaProp string) string {
		name := prefix + "Sales/000123/" + nameProp + "/" + uuid.NewString()
		md := map[string]*string{"tablekitpk": enc("Sales"), "tablekitrk": enc("000123"), "tablekitprop": enc(metaProp)}
		if _, err := f.cont.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader([]byte("x"))), &blockblob.UploadOptions{Metadata: md}); err != nil {
			t.Fatal(err)
		}
		return name
	}
	resume := put("Photo", "Resume") // a Resume blob, named otherwise
	photo := put("Resume", "Photo")  // a Photo blob no reference names
	payload, _ := json.Marshal(map[string]any{"own": []string{resume, photo}, "entity": map[string]string{"pk": "Sales", "rk": "000123"}})
	m, err := eventual.NewKind[json.RawMessage](disposalKind(f, prefix)).Message(payload)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.proc.Enqueue(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := f.drain(ctx); err != nil {
		t.Fatal(err)
	}
	left := f.blobNames(t)
	if !slices.Contains(left, resume) {
		t.Errorf("the blob of the unreadable Resume, named like a Photo, was deleted")
	}
	if slices.Contains(left, photo) {
		t.Errorf("the unreferenced Photo blob, named like a Resume, was kept")
	}
	for _, p := range []string{"Photo", "Resume", "Video"} {
		if name := refs["Sales/000123/"+p].Blob; !slices.Contains(left, name) {
			t.Errorf("the employee's %s blob %s is gone", p, name)
		}
	}
}
