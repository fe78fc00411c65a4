package wide

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tablekit/tablekit/entity"
)

// version returns the rows one committed version of props leaves, as a
// read returns them (head first), the head holding a history.
func version(t testing.TB, pk, id string, props map[string]any) []entity.DynamicEntity {
	t.Helper()
	layout, ok := assign(pk, id, props)
	if !ok {
		t.Fatal("no layout")
	}
	tokens := make([]string, len(layout))
	for k := range tokens {
		tokens[k] = fmt.Sprintf("t%d", k%3) // rows left by three writes
	}
	h := headRow(pk, id, `W/"1"`, "t0", 40, 7, tokens, true)
	for s := int64(25); s < 40; s++ {
		h.Set(historyProp(s), fmt.Sprintf("old%d", s))
	}
	out := []entity.DynamicEntity{*h}
	for k, names := range layout {
		r := entity.DynamicEntity{PartitionKey: pk, RowKey: rowKey(id, k+1)}
		for _, name := range names {
			r.Set(name, props[name])
		}
		out = append(out, *r.Set(propVersion, tokens[k]))
	}
	return out
}

func clone(rows []entity.DynamicEntity) []entity.DynamicEntity {
	out := make([]entity.DynamicEntity, len(rows))
	for i, r := range rows {
		out[i] = r
		out[i].Properties = make(map[string]any, len(r.Properties))
		for k, v := range r.Properties {
			out[i].Properties[k] = v
		}
	}
	return out
}

func TestAssemble(t *testing.T) {
	props := propsOf(rand.New(rand.NewPCG(3, 3)), 700, 10)
	rows := version(t, "p", "id", props)
	if len(rows) < 4 {
		t.Fatalf("%d rows", len(rows))
	}
	st, err := assemble("p", "id", clone(rows))
	if err != nil {
		t.Fatal(err)
	}
	bag := st.bag()
	if len(bag.Properties) != len(props) || bag.RowKey != "id" || bag.ETag != formatETag(len(rows)-1, 40, `W/"1"`) {
		t.Fatalf("bag: %d properties, keys %q/%q, etag %q", len(bag.Properties), bag.PartitionKey, bag.RowKey, bag.ETag)
	}
	for k, v := range props {
		if !sameValue(bag.Properties[k], v) {
			t.Fatalf("%s = %v, want %v", k, bag.Properties[k], v)
		}
	}
	// Rows of other entities around it are not its.
	foreign := append(clone(rows), entity.DynamicEntity{PartitionKey: "p", RowKey: rowKey("id", 3) + " x"},
		entity.DynamicEntity{PartitionKey: "p", RowKey: "id"}, entity.DynamicEntity{PartitionKey: "q", RowKey: rowKey("id", 1)})
	if _, err := assemble("p", "id", foreign); err != nil {
		t.Errorf("with foreign rows: %v", err)
	}
	if _, err := assemble("p", "id", nil); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("no rows: %v", err)
	}

	isTorn := func(err error) bool { var te *tornError; return errors.As(err, &te) }
	isCorrupt := func(err error) bool { return errors.Is(err, ErrCorrupt) }
	last := len(rows) - 1
	for _, c := range []struct {
		name  string
		edit  func([]entity.DynamicEntity) []entity.DynamicEntity
		check func(error) bool
	}{
		{"a row of a newer version", func(r []entity.DynamicEntity) []entity.DynamicEntity { r[2].Set(propVersion, "t9"); return r }, isTorn},
		{"a row missing", func(r []entity.DynamicEntity) []entity.DynamicEntity { return append(r[:2], r[3:]...) }, isTorn},
		{"the head missing", func(r []entity.DynamicEntity) []entity.DynamicEntity { return r[1:] }, isTorn},
		{"a row beyond the head's count", func(r []entity.DynamicEntity) []entity.DynamicEntity {
			return append(r, *(&entity.DynamicEntity{PartitionKey: "p", RowKey: rowKey("id", last+1)}).Set(propVersion, "t0"))
		}, isTorn},
		{"the head counts fewer rows", func(r []entity.DynamicEntity) []entity.DynamicEntity {
			r[0].Set(propRows, int32(last-1))
			return r
		}, isCorrupt},
		{"a row without version", func(r []entity.DynamicEntity) []entity.DynamicEntity { delete(r[1].Properties, propVersion); return r }, isCorrupt},
		{"a property in two rows", func(r []entity.DynamicEntity) []entity.DynamicEntity {
			for name, v := range r[1].Properties {
				if name != propVersion {
					r[2].Set(name, v)
					break
				}
			}
			return r
		}, isCorrupt},
		{"a head without sequence", func(r []entity.DynamicEntity) []entity.DynamicEntity { delete(r[0].Properties, propSeq); return r }, isCorrupt},
		{"a sequence of another type", func(r []entity.DynamicEntity) []entity.DynamicEntity { r[0].Set(propSeq, int32(40)); return r }, isCorrupt},
		{"a history without the version", func(r []entity.DynamicEntity) []entity.DynamicEntity { r[0].Set(historyProp(40), "x"); return r }, isCorrupt},
		{"an empty token", func(r []entity.DynamicEntity) []entity.DynamicEntity { r[0].Set(propManifest, "t0  t2"); return r }, isCorrupt},
	} {
		_, err := assemble("p", "id", c.edit(clone(rows)))
		if !c.check(err) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// A head alone is an entity without properties.
func TestAssembleEmptyEntity(t *testing.T) {
	rows := version(t, "p", "id", nil)
	st, err := assemble("p", "id", rows)
	if err != nil || len(st.rows) != 0 || len(st.bag().Properties) != 0 {
		t.Fatalf("%+v, %v", st, err)
	}
}
