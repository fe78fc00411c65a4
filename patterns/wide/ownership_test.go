package wide_test

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/wide"
)

// TestPlainWrites writes the rows of a wide entity beside the Table,
// through a plain entity.Table of the same table, and records what the
// package doc's Ownership section says each leaves:
//
//   - a merge of a changed value into a row of properties: every read
//     returns that value inside the version, without error — a mix of the
//     version and the foreign value — and the entity's ETag does not
//     change, so a Replace conditional on an ETag read before overwrites
//     it;
//   - a row replaced without the package's version property: every read
//     fails with ErrCorrupt;
//   - a row deleted: every read fails with ErrTorn (after
//     Config.ReadAttempts reads);
//   - either way Upsert, Modify and Delete with AnyETag, which read
//     first, fail as the read does and write nothing;
//   - in both cases a Replace with the ETag read before the damage
//     rewrites every row and the entity reads whole again;
//   - an entity.Table write of the logical entity's own keys is another
//     entity, outside the wide entity's rows: reads never see it.
func TestPlainWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, client := newTable[Bag](t, wide.Config{})
	plain, err := entity.NewTable[entity.DynamicEntity](client)
	if err != nil {
		t.Fatal(err)
	}
	// insert stores a wide entity of 400 properties (two or more rows)
	// and returns it as read, and the name of a property of row 01.
	insert := func(id string) (Bag, string) {
		t.Helper()
		if err := w.Insert(ctx, bagOf("p", id, 1, 400)); err != nil {
			t.Fatal(err)
		}
		if rows := physical(t, client, "p"); rows[keys.Compound(id, "02")] == 0 {
			t.Fatalf("%s has fewer than two rows: %v", id, rows)
		}
		b, err := w.Get(ctx, "p", id)
		if err != nil {
			t.Fatal(err)
		}
		row, err := plain.Get(ctx, "p", keys.Compound(id, "01"))
		if err != nil {
			t.Fatal(err)
		}
		for name := range row.Properties {
			if name != "WideVersion" {
				return b, name
			}
		}
		t.Fatal("row 01 holds no property")
		return b, ""
	}
	// repair replaces the entity with what was read before the damage,
	// conditional on that read's ETag, and checks it reads whole.
	repair := func(id string, before Bag) {
		t.Helper()
		v := before
		if err := w.Replace(ctx, &v); err != nil {
			t.Fatalf("%s: Replace with the ETag read before: %v", id, err)
		}
		got, err := w.Get(ctx, "p", id)
		if err != nil || len(got.Props) != 400 {
			t.Fatalf("%s after the Replace: %d properties, %v", id, len(got.Props), err)
		}
		for name, v := range before.Props {
			if got.Props[name] != v {
				t.Fatalf("%s after the Replace: %s = %v, want %v", id, name, got.Props[name], v)
			}
		}
	}

	t.Run("merge into a row", func(t *testing.T) {
		before, name := insert("merged")
		raw := &entity.DynamicEntity{PartitionKey: "p", RowKey: keys.Compound("merged", "01"), ETag: entity.AnyETag}
		raw.Set(name, "foreign")
		if err := plain.Update(ctx, raw, entity.Merge); err != nil {
			t.Fatal(err)
		}
		got, err := w.Get(ctx, "p", "merged")
		if err != nil {
			t.Fatalf("Get after a merge into row 01: %v", err)
		}
		if got.Props[name] != "foreign" || len(got.Props) != 400 || got.ETag != before.ETag {
			t.Errorf("Get after a merge into row 01: %s = %v, %d properties, ETag %q (before %q); want the foreign value in the version, same ETag",
				name, got.Props[name], len(got.Props), got.ETag, before.ETag)
		}
		repair("merged", before) // the ETag read before still holds: the foreign value is overwritten
	})

	// Upsert and Modify read first: they fail as Get does, and write
	// nothing.
	readersFail := func(t *testing.T, id string, want error) {
		t.Helper()
		was := rowETags(t, client, "p")
		up := bagOf("p", id, 9, 3)
		if err := w.Upsert(ctx, up); !errors.Is(err, want) {
			t.Errorf("Upsert of %s: %v, want %v", id, err, want)
		}
		if _, err := w.Modify(ctx, "p", id, func(b *Bag) error { b.Props["P0"] = "modified"; return nil }, entity.ModifyOptions{}); !errors.Is(err, want) {
			t.Errorf("Modify of %s: %v, want %v", id, err, want)
		}
		if now := rowETags(t, client, "p"); !maps.Equal(now, was) {
			t.Errorf("rows after the failed Upsert and Modify: %v, were %v", now, was)
		}
	}

	t.Run("row replaced", func(t *testing.T) {
		before, name := insert("replaced")
		raw := &entity.DynamicEntity{PartitionKey: "p", RowKey: keys.Compound("replaced", "01"), ETag: entity.AnyETag}
		raw.Set(name, "foreign")
		if err := plain.Update(ctx, raw, entity.Replace); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Get(ctx, "p", "replaced"); !errors.Is(err, wide.ErrCorrupt) {
			t.Errorf("Get after a plain replace of row 01: %v, want ErrCorrupt", err)
		}
		readersFail(t, "replaced", wide.ErrCorrupt)
		repair("replaced", before)
	})

	t.Run("row deleted", func(t *testing.T) {
		before, _ := insert("deleted")
		if err := plain.Delete(ctx, "p", keys.Compound("deleted", "01"), entity.AnyETag); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Get(ctx, "p", "deleted"); !errors.Is(err, wide.ErrTorn) {
			t.Errorf("Get after a plain delete of row 01: %v, want ErrTorn", err)
		}
		if err := w.Delete(ctx, "p", "deleted", entity.AnyETag); !errors.Is(err, wide.ErrTorn) {
			t.Errorf("Delete with AnyETag after a plain delete of row 01: %v, want ErrTorn", err)
		}
		readersFail(t, "deleted", wide.ErrTorn)
		repair("deleted", before)
	})

	t.Run("the logical keys", func(t *testing.T) {
		before, _ := insert("keys")
		typed, err := entity.NewTable[Bag](client)
		if err != nil {
			t.Fatal(err)
		}
		if err := typed.Insert(ctx, &Bag{PartitionKey: "p", RowKey: "keys", Props: map[string]any{"P0": "plain"}}); err != nil {
			t.Fatal(err)
		}
		got, err := w.Get(ctx, "p", "keys")
		if err != nil || got.Props["P0"] != before.Props["P0"] || got.ETag != before.ETag {
			t.Errorf("Get beside a plain entity of the same keys: P0 %v, %v", got.Props["P0"], err)
		}
		if err := w.Delete(ctx, "p", "keys", got.ETag); err != nil {
			t.Fatal(err)
		}
		if _, err := typed.Get(ctx, "p", "keys"); err != nil {
			t.Errorf("the plain entity after the wide entity's Delete: %v; want it left", err)
		}
	})
}

// TestRepeatedSteps runs the writes a handler of package eventual may use
// twice, as a message delivered twice runs them: Upsert leaves the entity
// it writes (the second run a new version of the same content), Modify
// with a change that sets values leaves the same content, and Delete with
// AnyETag finds nothing to delete the second time, without error; Insert's
// second run is entity.ErrAlreadyExists (a handler counts it as done, as
// eventual.Insert does).
func TestRepeatedSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, client := newTable[Bag](t, wide.Config{})
	if err := w.Insert(ctx, bagOf("p", "deleted", 3, 300)); err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		err := w.Insert(ctx, bagOf("p", "inserted", 1, 300))
		if run == 0 && err != nil || run == 1 && !errors.Is(err, entity.ErrAlreadyExists) {
			t.Fatalf("Insert, run %d: %v", run+1, err)
		}
		if err := w.Upsert(ctx, bagOf("p", "upserted", 2, 300)); err != nil {
			t.Fatalf("Upsert, run %d: %v", run+1, err)
		}
		if _, err := w.Modify(ctx, "p", "upserted", func(b *Bag) error { b.Props["P0"] = "set"; return nil }, entity.ModifyOptions{}); err != nil {
			t.Fatalf("Modify, run %d: %v", run+1, err)
		}
		if err := w.Delete(ctx, "p", "deleted", entity.AnyETag); err != nil {
			t.Fatalf("Delete, run %d: %v", run+1, err)
		}
	}
	got, err := w.Get(ctx, "p", "upserted")
	if err != nil || len(got.Props) != 300 || got.Props["P0"] != "set" || got.Props["P1"] != "w2-p1" {
		t.Errorf("after two runs: %d properties, P0 %v, P1 %v, %v", len(got.Props), got.Props["P0"], got.Props["P1"], err)
	}
	if rows := rawRows(t, client, "p", "deleted"); len(rows) != 0 {
		t.Errorf("rows of the deleted entity left: %d", len(rows))
	}
	wholeOrGone(t, client, "p", "upserted")
	if got, err := w.Get(ctx, "p", "inserted"); err != nil || got.Props["P1"] != "w1-p1" {
		t.Errorf("the inserted entity: %v, %v", got.Props["P1"], err)
	}
}
