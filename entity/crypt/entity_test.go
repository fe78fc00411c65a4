package crypt_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
)

// device has one encrypted property.
type device struct {
	PartitionKey string
	RowKey       string
	ETag         string `table:",etag"`
	Name         string
	APIKey       string `table:",encrypt"`
}

// TestEntityViews: a view of the Entity table (entity.ViewAs) protects the
// properties T's tags encrypt, by name, whatever its type: a property bag
// written through it is stored encrypted, one read through it decrypted;
// the conversions of the table convert T in clear, in memory, where the
// package-level ones refuse it.
func TestEntityViews(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ct, raw := onAzurite[device](t, env, crypt.Config{})
	ent := ct.Entity()
	if !ent.Protected() {
		t.Fatal("Entity is not Protected")
	}
	if always, maybe := ent.Encrypts("APIKey"); !always || !maybe {
		t.Errorf("Encrypts(APIKey) = %v, %v", always, maybe)
	}
	if always, maybe := ent.Encrypts("Name"); always || maybe {
		t.Errorf("Encrypts(Name) = %v, %v", always, maybe)
	}
	bags, err := entity.ViewAs[entity.DynamicEntity](ent)
	if err != nil {
		t.Fatal(err)
	}
	bag := (&entity.DynamicEntity{PartitionKey: "p", RowKey: "bag"}).Set("APIKey", "secret-of-a-bag").Set("Name", "n")
	if err := bags.Insert(ctx, bag); err != nil {
		t.Fatal(err)
	}
	for _, b := range rawBodies(t, raw) {
		if bytes.Contains(b, []byte("secret-of-a-bag")) {
			t.Fatalf("a bag written through a view is stored in clear: %s", b)
		}
	}
	d, err := ent.Get(ctx, "p", "bag")
	if err != nil || d.APIKey != "secret-of-a-bag" {
		t.Fatalf("the bag read as T: %+v, %v", d, err)
	}
	back, err := bags.Get(ctx, "p", "bag")
	if err != nil || back.Properties["APIKey"] != "secret-of-a-bag" || len(back.Properties) != 2 {
		t.Fatalf("the bag read back: %+v, %v", back, err)
	}
	if _, err := entity.ToDynamic(&d); !errors.Is(err, entity.ErrInvalidType) {
		t.Errorf("entity.ToDynamic of an encrypted type: %v, want ErrInvalidType", err)
	}
	plainBag, err := ent.ToDynamic(&d)
	if err != nil || plainBag.Properties["APIKey"] != "secret-of-a-bag" {
		t.Fatalf("Table.ToDynamic: %+v, %v", plainBag, err)
	}
	var again device
	if err := ent.FromDynamic(plainBag, &again); err != nil || again.APIKey != d.APIKey || again.ETag != d.ETag {
		t.Fatalf("Table.FromDynamic: %+v, %v", again, err)
	}
	// Modify writes the entity whole (Replace) on a protected table.
	got, err := ent.Modify(ctx, "p", "bag", func(d *device) error { d.Name = "m"; return nil }, entity.ModifyOptions{})
	if err != nil || got.APIKey != "secret-of-a-bag" || got.Name != "m" {
		t.Fatalf("Modify: %+v, %v", got, err)
	}
	if _, err := ent.Modify(ctx, "p", "bag", func(*device) error { return nil }, entity.ModifyOptions{Mode: entity.Merge}); !errors.Is(err, crypt.ErrMerge) {
		t.Errorf("Modify with Merge: %v, want ErrMerge", err)
	}
}

// TestSealOpen: Seal turns a logical entity into its stored form (the
// encrypted values ciphertexts, bound to its keys), Open reverses it, and
// a sealed value moved to another entity does not open there.
func TestSealOpen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ct, _ := onAzurite[device](t, env, crypt.Config{})
	ent := ct.Entity()
	bag := (&entity.DynamicEntity{PartitionKey: "p", RowKey: "r"}).Set("APIKey", "sealed-secret").Set("Name", "n")
	sealed, err := ent.Seal(ctx, bag)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := sealed.Properties["APIKey"].([]byte); !ok || bytes.Contains(v, []byte("sealed-secret")) {
		t.Fatalf("sealed APIKey: %#v", sealed.Properties["APIKey"])
	}
	if _, ok := sealed.Properties[crypt.MetadataProperty]; !ok || sealed.Properties["Name"] != "n" {
		t.Fatalf("sealed: %v", sealed.Properties)
	}
	opened, err := ent.Open(ctx, sealed)
	if err != nil || opened.Properties["APIKey"] != "sealed-secret" || len(opened.Properties) != 2 {
		t.Fatalf("Open: %+v, %v", opened, err)
	}
	moved := *sealed
	moved.RowKey = "other"
	if _, err := ent.Open(ctx, &moved); !errors.Is(err, crypt.ErrTampered) {
		t.Errorf("Open of a sealed entity under other keys: %v, want ErrTampered", err)
	}
	plain, err := entity.NewTable[device](env.TableService.NewClient("sealopenunprotected"))
	if err != nil {
		t.Fatal(err)
	}
	if c, err := plain.Seal(ctx, bag); err != nil || c.Properties["APIKey"] != "sealed-secret" {
		t.Errorf("Seal of an unprotected table: %+v, %v", c, err)
	}
}

// TestBatchThrough: one transaction writes entities of two protected views
// of one table, each through its own protection (here under different
// keys), and takes a fence (a merge of nothing) but no other merge.
func TestBatchThrough(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, raw := onAzurite[device](t, env, crypt.Config{Key: newLocalKey(t, "kek-a", 1)})
	base, err := entity.NewTable[device](raw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := crypt.New(base, crypt.Config{Key: newLocalKey(t, "kek-b", 2)})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Insert(ctx, &device{PartitionKey: "p", RowKey: "fenced", APIKey: "k0"}); err != nil {
		t.Fatal(err)
	}
	fenced, err := a.Get(ctx, "p", "fenced")
	if err != nil {
		t.Fatal(err)
	}
	batch := a.Entity().NewBatch().Insert(&device{PartitionKey: "p", RowKey: "1", APIKey: "ka"})
	batch.Through(b.Entity()).Insert(&device{PartitionKey: "p", RowKey: "2", APIKey: "kb"})
	batch.Update(&entity.DynamicEntity{PartitionKey: "p", RowKey: "fenced", ETag: fenced.ETag}, entity.Merge) // a fence
	if _, err := a.Entity().Submit(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if d, err := a.Get(ctx, "p", "1"); err != nil || d.APIKey != "ka" {
		t.Errorf("the entity of view a: %+v, %v", d, err)
	}
	if d, err := b.Get(ctx, "p", "2"); err != nil || d.APIKey != "kb" {
		t.Errorf("the entity of view b: %+v, %v", d, err)
	}
	if _, err := a.Get(ctx, "p", "2"); !errors.Is(err, crypt.ErrUnknownKey) {
		t.Errorf("view b's entity read under a's key: %v, want ErrUnknownKey", err)
	}
	if d, err := a.Get(ctx, "p", "fenced"); err != nil || d.APIKey != "k0" {
		t.Errorf("the fenced entity: %+v, %v", d, err)
	}
	merge := a.Entity().NewBatch().Update((&entity.DynamicEntity{PartitionKey: "p", RowKey: "fenced", ETag: "*"}).Set("Name", "x"), entity.Merge)
	if _, err := a.Entity().Submit(ctx, merge); !errors.Is(err, crypt.ErrMerge) {
		t.Errorf("a merge of a property: %v, want ErrMerge", err)
	}
	other, err := entity.NewTable[device](env.TableService.NewClient("batchthroughother"))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Entity().NewBatch().Through(other).Validate(); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("Through a view of another table: %v, want ErrInvalid", err)
	}
}

// TestValidateEncryptedType: entity.Validate checks a type with encrypted
// fields as crypt stores it — a value counted at its ciphertext's size —
// and withholds an encrypted value from its error.
func TestValidateEncryptedType(t *testing.T) {
	t.Parallel()
	if err := entity.Validate(&device{PartitionKey: "p", RowKey: "r", APIKey: "fine"}); err != nil {
		t.Errorf("a valid entity: %v", err)
	}
	err := entity.Validate(&device{PartitionKey: "p", RowKey: "r", APIKey: "withheld-value\xff"})
	if !errors.Is(err, entity.ErrInvalid) || strings.Contains(err.Error(), "withheld-value") {
		t.Errorf("an invalid encrypted value: %v", err)
	}
	// Counted at its ciphertext's size: a Binary that fits in clear but
	// not once encrypted is refused.
	type blob struct {
		PartitionKey, RowKey string
		Data                 []byte `table:",encrypt"`
	}
	if err := entity.Validate(&blob{PartitionKey: "p", RowKey: "r", Data: make([]byte, entity.MaxBinaryBytes-30)}); err != nil {
		t.Errorf("a value whose ciphertext fits: %v", err)
	}
	if err := entity.Validate(&blob{PartitionKey: "p", RowKey: "r", Data: make([]byte, entity.MaxBinaryBytes-10)}); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("a value whose ciphertext does not fit: %v, want ErrInvalid", err)
	}
}

// TestBeacon: entity.Table.Beacon computes the beacon crypt stores beside
// an encrypted value, the seam an index of encrypted values keys its
// entries by; a property in clear is indexed as it is; one encrypted
// without a beacon cannot be indexed.
func TestBeacon(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ct, raw := onAzurite[device](t, env, crypt.Config{Beacons: []string{"APIKey"}, BeaconKey: bytes.Repeat([]byte{7}, 32)})
	if err := ct.Insert(ctx, &device{PartitionKey: "p", RowKey: "r", APIKey: "beaconed"}); err != nil {
		t.Fatal(err)
	}
	var stored []byte
	for _, b := range rawBodies(t, raw) {
		var d entity.DynamicEntity
		if err := entity.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		stored, _ = entity.Prop[[]byte](&d, crypt.BeaconPrefix+"APIKey")
	}
	view, err := entity.ViewAs[entity.DynamicEntity](ct.Entity())
	if err != nil {
		t.Fatal(err)
	}
	for _, tbl := range []interface {
		Beacon(string, any) ([]byte, bool, error)
	}{ct.Entity(), view} {
		b, ok, err := tbl.Beacon("APIKey", "beaconed")
		if err != nil || !ok || len(stored) == 0 || !bytes.Equal(b, stored) {
			t.Errorf("Beacon: %x, %v, %v; stored %x", b, ok, err, stored)
		}
		if other, _, _ := tbl.Beacon("APIKey", "other"); bytes.Equal(other, stored) {
			t.Error("two values have one beacon")
		}
		if _, ok, err := tbl.Beacon("Name", "n"); ok || err != nil {
			t.Errorf("Beacon of a clear property: %v, %v", ok, err)
		}
	}
	if _, _, err := ct.Entity().Beacon("APIKey", int64(3)); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("a value of another type: %v, want ErrInvalid", err)
	}
	plain, _ := onAzurite[device](t, env, crypt.Config{})
	if _, ok, err := plain.Entity().Beacon("APIKey", "x"); !ok || !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("an encrypted property without a beacon: %v, %v, want ErrInvalid", ok, err)
	}
}
