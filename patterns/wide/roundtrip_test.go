package wide_test

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/wide"
)

// A struct of 1,000 properties, 125 of each of the eight EDM types with
// values at the edges of their ranges, is stored as several rows within
// the service's limits and reads back exactly.
func TestThousandPropertiesRoundTrip(t *testing.T) {
	t.Parallel()
	w, client := newTable[Thousand](t, wide.Config{})
	ctx := t.Context()
	in := Thousand{PK: "Sales", ID: "emp 000123"}
	fill(&in, rand.New(rand.NewPCG(1, 2)))
	if err := w.Insert(ctx, &in); err != nil {
		t.Fatal(err)
	}
	// Cosmos DB's ETags carry no time: Insert has no Timestamp to set.
	if in.ETag == "" || in.Updated.IsZero() != env.Cosmos() {
		t.Errorf("Insert set ETag and Timestamp: %q %v", in.ETag, in.Updated)
	}
	rows := physical(t, client, "Sales")
	if len(rows) < 5 {
		t.Errorf("1,000 properties in %d rows, want at least 5 (head and 4 × 252)", len(rows))
	}
	total := 0
	for rk, n := range rows {
		if n > entity.MaxUserProperties {
			t.Errorf("row %s has %d properties", rk, n)
		}
		if parts, err := keys.SplitCompound(rk); err != nil || len(parts) != 2 || parts[0] != in.ID {
			t.Errorf("row key %q is not Compound(id, nn)", rk)
		}
		total += n
	}
	// 1,000 properties, a version in every row of properties, and the
	// head's six bookkeeping properties (its history holds one version).
	if total != 1000+len(rows)-1+6 {
		t.Errorf("%d properties stored in %d rows", total, len(rows))
	}

	out, err := w.Get(ctx, "Sales", in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if env.Cosmos() {
		in.Updated = out.Updated // read, not written back
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("round trip differs")
		diff(t, reflect.ValueOf(out), reflect.ValueOf(in), "")
	}
	if _, err := w.Get(ctx, "Sales", "emp 000124"); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("Get of a missing entity: %v, want ErrNotFound", err)
	}
}

// diff reports the first fields that differ.
func diff(t *testing.T, a, b reflect.Value, path string) {
	t.Helper()
	if a.Kind() == reflect.Struct && a.Type().NumField() > 0 && a.Type().Field(0).IsExported() {
		for i := range a.NumField() {
			diff(t, a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name)
		}
		return
	}
	if !reflect.DeepEqual(a.Interface(), b.Interface()) {
		t.Errorf("%s: got %#v, want %#v", path, a.Interface(), b.Interface())
	}
}
