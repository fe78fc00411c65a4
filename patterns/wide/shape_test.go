package wide_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/wide"
)

// rowETags returns the ETag of every stored row of the partition.
func rowETags(t *testing.T, client *aztables.Client, pk string) map[string]string {
	t.Helper()
	raw, err := entity.NewTable[entity.DynamicEntity](client)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for d, err := range raw.Query(t.Context(), entity.Query{Filter: filter.PK(pk)}) {
		if err != nil {
			t.Fatal(err)
		}
		out[d.RowKey] = d.ETag
	}
	return out
}

// checkRows asserts that the partition holds exactly the rows of one
// logical entity id with n rows of properties: 00 … n, nothing else.
func checkRows(t *testing.T, client *aztables.Client, pk, id string, n int) {
	t.Helper()
	got := slices.Sorted(maps.Keys(physical(t, client, pk)))
	var want []string
	for k := 0; k <= n; k++ {
		want = append(want, keys.Compound(id, fmt.Sprintf("%02d", k)))
	}
	if n < 0 {
		want = nil
	}
	if !slices.Equal(got, want) {
		t.Errorf("stored rows %q, want %q", got, want)
	}
}

// Growing and shrinking an entity, by every kind of write, leaves exactly
// the rows the current version needs: the transaction that shrinks it
// deletes the others.
func TestGrowAndShrinkLeaveNoStaleRows(t *testing.T) {
	t.Parallel()
	w, client := newTable[Bag](t, wide.Config{})
	ctx := t.Context()
	const pk, id = "p", "grow"

	v := bagOf(pk, id, 1, 10)
	if err := w.Insert(ctx, v); err != nil {
		t.Fatal(err)
	}
	checkRows(t, client, pk, id, 1)

	big := bagOf(pk, id, 2, 2000)
	big.ETag = v.ETag
	if err := w.Replace(ctx, big); err != nil {
		t.Fatal(err)
	}
	n := len(physical(t, client, pk)) - 1
	if n < 8 {
		t.Fatalf("2,000 properties in %d rows", n)
	}
	checkRows(t, client, pk, id, n)
	expect(t, w, pk, id, big.Props)

	got, err := w.Modify(ctx, pk, id, func(b *Bag) error {
		for i := 300; i < 2000; i++ {
			delete(b.Props, "P"+strconv.Itoa(i))
		}
		return nil
	}, entity.ModifyOptions{Mode: entity.Replace})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Props) != 300 {
		t.Fatalf("Modify returned %d properties", len(got.Props))
	}
	m := len(physical(t, client, pk)) - 1
	if m >= n || m < 2 {
		t.Fatalf("300 properties in %d rows (2,000 were in %d)", m, n)
	}
	checkRows(t, client, pk, id, m)
	expect(t, w, pk, id, bagOf(pk, id, 2, 300).Props)

	if err := w.Upsert(ctx, &Bag{PartitionKey: pk, RowKey: id}); err != nil {
		t.Fatal(err)
	}
	checkRows(t, client, pk, id, 0) // the head alone
	expect(t, w, pk, id, map[string]any{})

	if err := w.Upsert(ctx, bagOf(pk, id, 3, 700)); err != nil {
		t.Fatal(err)
	}
	expect(t, w, pk, id, bagOf(pk, id, 3, 700).Props)
	if err := w.Delete(ctx, pk, id, entity.AnyETag); err != nil {
		t.Fatal(err)
	}
	checkRows(t, client, pk, id, -1)
	if _, err := w.Get(ctx, pk, id); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("Get after Delete: %v", err)
	}
}

// expect asserts that the stored entity holds exactly props.
func expect(t *testing.T, w *wide.Table[Bag], pk, id string, props map[string]any) {
	t.Helper()
	got, err := w.Get(t.Context(), pk, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Props) != len(props) {
		t.Fatalf("stored %d properties, want %d", len(got.Props), len(props))
	}
	for k, v := range props {
		if got.Props[k] != v {
			t.Fatalf("property %s = %v, want %v", k, got.Props[k], v)
		}
	}
}

// A change of one value rewrites the head and the one row that holds it;
// the other rows keep their ETags.
func TestModifyRewritesOnlyChangedRows(t *testing.T) {
	t.Parallel()
	w, client := newTable[Bag](t, wide.Config{})
	ctx := t.Context()
	const pk, id = "p", "few"
	if err := w.Insert(ctx, bagOf(pk, id, 1, 1000)); err != nil {
		t.Fatal(err)
	}
	before := rowETags(t, client, pk)
	for _, mode := range []entity.UpdateMode{entity.Merge, entity.Replace} {
		_, err := w.Modify(ctx, pk, id, func(b *Bag) error {
			b.Props["P500"] = "changed " + strconv.Itoa(int(mode))
			return nil
		}, entity.ModifyOptions{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		after := rowETags(t, client, pk)
		var rewritten []string
		for rk, etag := range after {
			if before[rk] != etag {
				rewritten = append(rewritten, rk)
			}
		}
		slices.Sort(rewritten)
		if len(after) != len(before) || len(rewritten) != 2 || rewritten[0] != keys.Compound(id, "00") {
			t.Errorf("mode %d: one changed value rewrote rows %q of %d", mode, rewritten, len(after))
		}
		before = after
	}
	want := bagOf(pk, id, 1, 1000).Props
	want["P500"] = "changed 2"
	expect(t, w, pk, id, want)

	// Merge keeps what the struct does not hold; Replace removes it.
	type Partial struct {
		PartitionKey, RowKey string
		P1                   string
	}
	p := wrap[Partial](t, client, wide.Config{})
	if _, err := p.Modify(ctx, pk, id, func(v *Partial) error { v.P1 = "merged"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	want["P1"] = "merged"
	expect(t, w, pk, id, want)
	if _, err := p.Modify(ctx, pk, id, func(v *Partial) error { v.P1 = "alone"; return nil }, entity.ModifyOptions{Mode: entity.Replace}); err != nil {
		t.Fatal(err)
	}
	expect(t, w, pk, id, map[string]any{"P1": "alone"})
	checkRows(t, client, pk, id, 1)
}

// Optimistic concurrency on the logical entity: a write or delete from a
// stale read fails and changes nothing.
func TestStaleETagChangesNothing(t *testing.T) {
	t.Parallel()
	w, client := newTable[Bag](t, wide.Config{})
	ctx := t.Context()
	const pk, id = "p", "stale"
	if err := w.Insert(ctx, bagOf(pk, id, 1, 600)); err != nil {
		t.Fatal(err)
	}
	if err := w.Insert(ctx, bagOf(pk, id, 9, 5)); !errors.Is(err, entity.ErrAlreadyExists) {
		t.Fatalf("second Insert: %v, want ErrAlreadyExists", err)
	}
	a, err := w.Get(ctx, pk, id)
	if err != nil {
		t.Fatal(err)
	}
	b := a
	b.Props = maps.Clone(a.Props)
	a.Props["P1"] = "from a"
	if err := w.Replace(ctx, &a); err != nil {
		t.Fatal(err)
	}
	rows := rowETags(t, client, pk)
	b.Props = bagOf(pk, id, 2, 1500).Props // would grow to more rows
	if err := w.Replace(ctx, &b); !errors.Is(err, entity.ErrPreconditionFailed) {
		t.Fatalf("Replace from a stale read: %v, want ErrPreconditionFailed", err)
	}
	if err := w.Delete(ctx, pk, id, b.ETag); !errors.Is(err, entity.ErrPreconditionFailed) {
		t.Fatalf("Delete from a stale read: %v, want ErrPreconditionFailed", err)
	}
	if after := rowETags(t, client, pk); !maps.Equal(after, rows) {
		t.Errorf("refused writes changed rows:\n%v\n%v", rows, after)
	}
	want := bagOf(pk, id, 1, 600).Props
	want["P1"] = "from a"
	expect(t, w, pk, id, want)

	if err := w.Delete(ctx, pk, id, a.ETag); err != nil {
		t.Fatal(err)
	}
	checkRows(t, client, pk, id, -1)
	if err := w.Delete(ctx, pk, id, a.ETag); err != nil {
		t.Errorf("deleting again: %v, want nil (idempotent)", err)
	}
	if err := w.Replace(ctx, &a); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("Replace of a deleted entity: %v, want ErrNotFound", err)
	}
	if _, err := w.Modify(ctx, pk, id, func(*Bag) error { return nil }, entity.ModifyOptions{}); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("Modify of a deleted entity: %v, want ErrNotFound", err)
	}
}

// The property bag itself can be the logical entity's type.
func TestDynamicEntityAsLogicalEntity(t *testing.T) {
	t.Parallel()
	w, client := newTable[entity.DynamicEntity](t, wide.Config{})
	ctx := t.Context()
	d := &entity.DynamicEntity{PartitionKey: "p", RowKey: "bag", Properties: bagOf("p", "bag", 1, 900).Props}
	d.Set("Count", int64(1)).Set("When", time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC))
	if err := w.Insert(ctx, d); err != nil {
		t.Fatal(err)
	}
	got, err := w.Get(ctx, "p", "bag")
	if err != nil {
		t.Fatal(err)
	}
	if got.ETag != d.ETag || got.RowKey != "bag" || len(got.Properties) != 902 || got.Properties["Count"] != int64(1) || !got.Properties["When"].(time.Time).Equal(d.Properties["When"].(time.Time)) {
		t.Errorf("bag read back: %d properties, ETag %q (wrote %q)", len(got.Properties), got.ETag, d.ETag)
	}
	checkRows(t, client, "p", "bag", len(physical(t, client, "p"))-1)
}
