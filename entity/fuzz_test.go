package entity_test

import (
	"errors"
	"maps"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
)

// The committed corpora under testdata/fuzz run as ordinary tests; run the
// fuzzers with: go test -run '^$' -fuzz '^FuzzUnmarshal$' ./entity/

// FuzzUnmarshal feeds arbitrary bodies to both decoders: no input panics,
// every failure is a typed error, and a property bag that decodes encodes
// again (or is refused with ErrInvalid) and then decodes to the same values.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{fullMetadata, noMetadata, pythonStyle, `{}`, `{"a":[1,{"b":"}"}]}`, `{"X@odata.type":"Edm.Int64","X":"-9223372036854775808"}`,
		`{"D@odata.type":"Edm.Double","D":"-Infinity"}`, `{"S":"\ud83d\ude00\u0000"}`, `{"T@odata.type":"Edm.DateTime","T":"2024-02-30T00:00:00Z"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Everything
		if err := entity.Unmarshal(data, &s); err != nil && !errors.Is(err, entity.ErrDecode) {
			t.Fatalf("struct: untyped error %v", err)
		}
		var e Employee
		if err := entity.Unmarshal(data, &e); err != nil && !errors.Is(err, entity.ErrDecode) {
			t.Fatalf("employee: untyped error %v", err)
		}
		var d entity.DynamicEntity
		if err := entity.Unmarshal(data, &d); err != nil {
			if !errors.Is(err, entity.ErrDecode) {
				t.Fatalf("bag: untyped error %v", err)
			}
			return
		}
		body, err := entity.Marshal(&d)
		if err != nil {
			if !errors.Is(err, entity.ErrInvalid) {
				t.Fatalf("re-encode: untyped error %v", err)
			}
			return
		}
		var again entity.DynamicEntity
		if err := entity.Unmarshal(body, &again); err != nil {
			t.Fatalf("our own body does not decode: %v\n%s", err, body)
		}
		if !sameProperties(d.Properties, again.Properties) {
			t.Fatalf("bag changed:\n was %#v\n now %#v", d.Properties, again.Properties)
		}
	})
}

// FuzzMarshalBag builds property bags from arbitrary values: Marshal never
// panics, refuses with a ValidationError, or produces a body that decodes to
// the same typed values.
func FuzzMarshalBag(f *testing.F) {
	f.Add("Sales", "O'Brien", "Name", "Jo", int64(42), 2.0, []byte{1, 2}, int64(0))
	f.Add("", "", "_x", "", int64(math.MinInt64), math.Inf(1), []byte(nil), int64(-1))
	f.Add("a/b", "r", "Ünï", "\x00\"\\", int64(math.MaxInt64), math.NaN(), make([]byte, 70000), int64(1<<62))
	f.Add("p", "r", "Timestamp", "x", int64(1), math.Copysign(0, -1), []byte{}, int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, pk, rk, name, s string, n int64, x float64, b []byte, unixNano int64) {
		d := &entity.DynamicEntity{PartitionKey: pk, RowKey: rk}
		d.Set(name, s).Set("N", n).Set("X", x).Set("B", b).Set("I", int32(n)).Set("T", time.Unix(0, unixNano))
		body, err := entity.Marshal(d)
		if err != nil {
			var ve *entity.ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, entity.ErrInvalid) || ve.Rule == "" {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		var got entity.DynamicEntity
		if err := entity.Unmarshal(body, &got); err != nil {
			t.Fatalf("decode own body: %v\n%s", err, body)
		}
		if got.PartitionKey != pk || got.RowKey != rk {
			t.Fatalf("keys changed: %q %q", got.PartitionKey, got.RowKey)
		}
		// name is set first: a later Set of the same name wins.
		want := map[string]any{name: s}
		maps.Copy(want, map[string]any{"N": n, "X": x, "B": b, "I": int32(n), "T": time.Unix(0, unixNano).UTC().Truncate(100)})
		if b == nil {
			want["B"] = []byte{}
		}
		if !sameProperties(got.Properties, want) {
			t.Fatalf("values changed:\n got %#v\nwant %#v", got.Properties, want)
		}
	})
}

// FuzzValidate: Validate and Marshal agree, and neither panics.
func FuzzValidate(f *testing.F) {
	f.Add("p", "r", "Name", "value")
	f.Add("a#b", "r?", "1bad", "\xff")
	f.Add("", "", "PartitionKey", "")
	f.Fuzz(func(t *testing.T, pk, rk, name, value string) {
		d := (&entity.DynamicEntity{PartitionKey: pk, RowKey: rk}).Set(name, value)
		verr := entity.Validate(d)
		_, merr := entity.Marshal(d)
		if (verr == nil) != (merr == nil) {
			t.Fatalf("Validate %v but Marshal %v", verr, merr)
		}
		if verr != nil && !errors.Is(verr, entity.ErrInvalid) {
			t.Fatalf("untyped error %v", verr)
		}
	})
}

func sameProperties(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok {
			return false
		}
		switch x := va.(type) {
		case float64:
			y, ok := vb.(float64)
			if !ok || !(x == y || math.IsNaN(x) && math.IsNaN(y)) || math.Signbit(x) != math.Signbit(y) {
				return false
			}
		case time.Time:
			y, ok := vb.(time.Time)
			if !ok || !x.Equal(y) {
				return false
			}
		case []byte:
			y, ok := vb.([]byte)
			if !ok || len(x) != len(y) || (len(x) > 0 && !reflect.DeepEqual(x, y)) {
				return false
			}
		default:
			if !reflect.DeepEqual(va, vb) {
				return false
			}
		}
	}
	return true
}
