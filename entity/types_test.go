package entity_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
)

// minimal wraps properties in a minimal-metadata response body.
func minimal(props string) string {
	return `{"odata.metadata":"http://127.0.0.1/devstoreaccount1/$metadata#t/@Element","odata.etag":"W/\"datetime'2024-05-01T10%3A00%3A00.1234567Z'\"","PartitionKey":"p","RowKey":"r",` + props + `}`
}

// wantTypeMismatch checks that err is a *DecodeError naming the property,
// the stored EDM type and the Go type.
func wantTypeMismatch(t *testing.T, err error, prop string, stored entity.EDMType, goType reflect.Type) {
	t.Helper()
	var de *entity.DecodeError
	if !errors.Is(err, entity.ErrDecode) || !errors.As(err, &de) {
		t.Fatalf("got %v, want a *DecodeError", err)
	}
	if de.Property != prop || de.Stored != stored || de.Type != goType {
		t.Errorf("got property %q stored %v type %v, want %q %v %v (%v)", de.Property, de.Stored, de.Type, prop, stored, goType, err)
	}
	for _, word := range []string{prop, stored.String(), goType.String()} {
		if !strings.Contains(err.Error(), word) {
			t.Errorf("message %q does not name %q", err, word)
		}
	}
}

// TestStoredTypeDecides: in minimal (and full) metadata an unannotated
// string is an Edm.String and a number with a fraction or exponent an
// Edm.Double; neither is read into a field of another type, so that no
// later write stores it under that type.
func TestStoredTypeDecides(t *testing.T) {
	type Counter struct {
		PartitionKey, RowKey string
		N                    int64
		Small                int32
		ID                   uuid.UUID
		At                   time.Time
		Photo                []byte
		Ratio                float64
	}
	i64, i32 := reflect.TypeFor[int64](), reflect.TypeFor[int32]()
	cases := []struct {
		props  string
		prop   string
		stored entity.EDMType
		typ    reflect.Type
	}{
		{`"N":"12345"`, "N", entity.EDMString, i64},
		{`"N":2.0`, "N", entity.EDMDouble, i64},
		{`"N":1e3`, "N", entity.EDMDouble, i64},
		{`"N":1000.0`, "N", entity.EDMDouble, i64},
		{`"Small":2.0`, "Small", entity.EDMDouble, i32},
		{`"ID":"0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901"`, "ID", entity.EDMString, reflect.TypeFor[uuid.UUID]()},
		{`"At":"2012-03-04T05:06:07Z"`, "At", entity.EDMString, reflect.TypeFor[time.Time]()},
		{`"Photo":"AAEC"`, "Photo", entity.EDMString, reflect.TypeFor[[]byte]()},
		{`"Ratio":"2.5"`, "Ratio", entity.EDMString, reflect.TypeFor[float64]()},
		{`"Ratio":"NaN"`, "Ratio", entity.EDMString, reflect.TypeFor[float64]()},
		{`"Ratio@odata.type":"Edm.Int64","Ratio":"5"`, "Ratio", entity.EDMInt64, reflect.TypeFor[float64]()},
		{`"N@odata.type":"Edm.Double","N":"2"`, "N", entity.EDMDouble, i64},
	}
	for _, c := range cases {
		var got Counter
		err := entity.Unmarshal([]byte(minimal(c.props)), &got)
		t.Run(c.props, func(t *testing.T) { wantTypeMismatch(t, err, c.prop, c.stored, c.typ) })
	}

	// A number is typed by its form in every format: 2.0 and 1e3 are
	// Doubles in a no-metadata body too (Int64 travels as a string).
	for _, body := range []string{`{"N":2.0}`, `{"N":1e3}`, `{"N":5000000000}`} {
		var got Counter
		wantTypeMismatch(t, entity.Unmarshal([]byte(body), &got), "N", entity.EDMDouble, i64)
	}

	// What each type holds still reads, in both forms.
	ok := minimal(`"N@odata.type":"Edm.Int64","N":"9007199254740993","Small":-5,"ID@odata.type":"Edm.Guid","ID":"0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901",` +
		`"At@odata.type":"Edm.DateTime","At":"2012-03-04T05:06:07Z","Photo@odata.type":"Edm.Binary","Photo":"AAEC","Ratio":2`)
	var got Counter
	if err := entity.Unmarshal([]byte(ok), &got); err != nil {
		t.Fatal(err)
	}
	if got.N != 9007199254740993 || got.Small != -5 || got.ID.String() != "0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901" || got.At.Year() != 2012 || len(got.Photo) != 3 || got.Ratio != 2 {
		t.Errorf("got %+v", got)
	}
	// In a no-metadata body a string has no stored type: the field's type
	// parses it (the one place the format changes what a field accepts).
	got = Counter{}
	if err := entity.Unmarshal([]byte(`{"N":"12345","ID":"0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901","At":"2012-03-04T05:06:07Z","Ratio":"NaN"}`), &got); err != nil {
		t.Fatal(err)
	}
	if got.N != 12345 || got.ID == (uuid.UUID{}) || got.At.IsZero() || !math.IsNaN(got.Ratio) {
		t.Errorf("no metadata: %+v", got)
	}
	// ... but a no-metadata string is never a Double's digits.
	if err := entity.Unmarshal([]byte(`{"Ratio":"2.5"}`), &got); !errors.Is(err, entity.ErrDecode) {
		t.Errorf(`no-metadata "2.5" into float64: %v`, err)
	}
}

// TestReadModifyWriteKeepsOtherApplicationsTypes: another application stores
// Strings that look like an integer, a GUID and a time. A type with an ETag
// (read in minimal metadata) refuses them at the read, naming the property,
// the stored type and the Go type, and so never writes them back as Int64,
// Guid or DateTime.
func TestReadModifyWriteKeepsOtherApplicationsTypes(t *testing.T) {
	ctx := context.Background()
	client := env.Table(t)
	body := `{"PartitionKey":"p","RowKey":"r","N":"12345","ID":"0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901","At":"2012-03-04T05:06:07Z","D@odata.type":"Edm.Double","D":2.0}`
	if _, err := client.AddEntity(ctx, []byte(body), nil); err != nil {
		t.Fatal(err)
	}
	type WithN struct {
		PartitionKey, RowKey, ETag string
		N                          int64
	}
	type WithID struct {
		PartitionKey, RowKey, ETag string
		ID                         uuid.UUID
	}
	type WithAt struct {
		PartitionKey, RowKey, ETag string
		At                         time.Time
	}
	type WithD struct {
		PartitionKey, RowKey, ETag string
		D                          int64
	}
	check := func(err error, prop string, stored entity.EDMType, goType reflect.Type) {
		t.Helper()
		wantTypeMismatch(t, err, prop, stored, goType)
	}
	nt, _ := entity.NewTable[WithN](client)
	_, err := nt.Get(ctx, "p", "r")
	check(err, "N", entity.EDMString, reflect.TypeFor[int64]())
	_, err = nt.Modify(ctx, "p", "r", func(w *WithN) error { w.N++; return nil }, entity.ModifyOptions{})
	check(err, "N", entity.EDMString, reflect.TypeFor[int64]())
	it, _ := entity.NewTable[WithID](client)
	_, err = it.Get(ctx, "p", "r")
	check(err, "ID", entity.EDMString, reflect.TypeFor[uuid.UUID]())
	at, _ := entity.NewTable[WithAt](client)
	_, err = at.Get(ctx, "p", "r")
	check(err, "At", entity.EDMString, reflect.TypeFor[time.Time]())
	dt, _ := entity.NewTable[WithD](client)
	for _, err := range dt.Query(ctx, entity.Query{}) {
		check(err, "D", entity.EDMDouble, reflect.TypeFor[int64]())
	}
	types, _ := storedTypes(t, client, "p", "r")
	for _, p := range []string{"N", "ID", "At"} {
		if types[p] != "Edm.String" {
			t.Errorf("%s is now stored as %s", p, types[p])
		}
	}
	if types["D"] != "Edm.Double" {
		t.Errorf("D is now stored as %s", types["D"])
	}
}

// formatProbes are the Go field types the format matrix reads each stored
// value into.
var formatProbes = []reflect.Type{
	reflect.TypeFor[string](), reflect.TypeFor[int32](), reflect.TypeFor[int64](), reflect.TypeFor[float64](),
	reflect.TypeFor[bool](), reflect.TypeFor[time.Time](), reflect.TypeFor[uuid.UUID](), reflect.TypeFor[[]byte](),
}

// formatValues are stored by hand, with their EDM types, and the probes a
// typed read (full or minimal metadata) accepts for each.
var formatValues = []struct {
	name, json string
	stored     entity.EDMType
	accepts    []string
}{
	{"S", `"S":"hello"`, entity.EDMString, []string{"string"}},
	{"SNum", `"SNum":"12345"`, entity.EDMString, []string{"string"}},
	{"SBig", `"SBig":"9007199254740993"`, entity.EDMString, []string{"string"}},
	{"SDate", `"SDate":"2012-03-04T05:06:07Z"`, entity.EDMString, []string{"string"}},
	{"SGuid", `"SGuid":"0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901"`, entity.EDMString, []string{"string"}},
	{"SB64", `"SB64":"AAEC"`, entity.EDMString, []string{"string"}},
	{"SNaN", `"SNaN":"NaN"`, entity.EDMString, []string{"string"}},
	{"STrue", `"STrue":"true"`, entity.EDMString, []string{"string"}},
	{"I32", `"I32":42`, entity.EDMInt32, []string{"int32", "int64", "float64"}},
	{"I64", `"I64@odata.type":"Edm.Int64","I64":"9007199254740993"`, entity.EDMInt64, []string{"int64"}},
	{"I64Small", `"I64Small@odata.type":"Edm.Int64","I64Small":"5"`, entity.EDMInt64, []string{"int32", "int64"}},
	{"D", `"D@odata.type":"Edm.Double","D":2.5`, entity.EDMDouble, []string{"float64"}},
	{"DWhole", `"DWhole@odata.type":"Edm.Double","DWhole":2.0`, entity.EDMDouble, []string{"float64"}},
	{"DNaN", `"DNaN@odata.type":"Edm.Double","DNaN":"NaN"`, entity.EDMDouble, []string{"float64"}},
	{"DInf", `"DInf@odata.type":"Edm.Double","DInf":"-Infinity"`, entity.EDMDouble, []string{"float64"}},
	{"B", `"B":true`, entity.EDMBoolean, []string{"bool"}},
	{"T", `"T@odata.type":"Edm.DateTime","T":"2012-03-04T05:06:07.1234567Z"`, entity.EDMDateTime, []string{"time.Time"}},
	{"G", `"G@odata.type":"Edm.Guid","G":"0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901"`, entity.EDMGuid, []string{"uuid.UUID"}},
	{"Bin", `"Bin@odata.type":"Edm.Binary","Bin":"AAEC/vv/"`, entity.EDMBinary, []string{"[]uint8"}},
	{"BinDigits", `"BinDigits@odata.type":"Edm.Binary","BinDigits":"12345678"`, entity.EDMBinary, []string{"[]uint8"}},
}

// probe decodes body into a struct whose one property field, named prop,
// has type typ, and returns the field's value.
func probe(body []byte, prop string, typ reflect.Type) (any, error) {
	st := reflect.StructOf([]reflect.StructField{
		{Name: "PartitionKey", Type: reflect.TypeFor[string]()},
		{Name: "RowKey", Type: reflect.TypeFor[string]()},
		{Name: "V", Type: typ, Tag: reflect.StructTag(`table:"` + prop + `"`)},
	})
	v := reflect.New(st)
	err := entity.Unmarshal(body, v.Interface())
	return v.Elem().Field(2).Interface(), err
}

// noMetadataParses is the documented difference, written independently of
// the decoder: in no metadata a value that travels as a JSON string (every
// String, Int64, DateTime, Guid and Binary, and a Double's NaN and
// ±Infinity) is accepted by a field whose type parses its text.
func noMetadataParses(text string, typ reflect.Type) bool {
	switch typ {
	case reflect.TypeFor[string]():
		return true
	case reflect.TypeFor[int32]():
		_, err := strconv.ParseInt(text, 10, 32)
		return err == nil
	case reflect.TypeFor[int64]():
		_, err := strconv.ParseInt(text, 10, 64)
		return err == nil
	case reflect.TypeFor[float64]():
		return text == "NaN" || text == "Infinity" || text == "-Infinity"
	case reflect.TypeFor[time.Time]():
		_, err := time.Parse(time.RFC3339Nano, text)
		return err == nil
	case reflect.TypeFor[uuid.UUID]():
		_, err := uuid.Parse(text)
		return err == nil
	case reflect.TypeFor[[]byte]():
		_, err := base64.StdEncoding.DecodeString(text)
		return err == nil
	}
	return false
}

// TestReadFormatChangesAcceptanceOnlyWhereDocumented stores one value of
// every EDM type, and Strings that look like the others, reads the entity
// back from the service in full, minimal and no metadata, and decodes each
// property into fields of eight Go types. Full and minimal metadata accept
// exactly the same, as the stored type says; no metadata accepts the same
// plus exactly the documented difference, and every value accepted twice is
// the same value.
func TestReadFormatChangesAcceptanceOnlyWhereDocumented(t *testing.T) {
	ctx := context.Background()
	client := env.Table(t)
	var props []string
	for _, v := range formatValues {
		props = append(props, v.json)
	}
	if _, err := client.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r",`+strings.Join(props, ",")+`}`), nil); err != nil {
		t.Fatal(err)
	}
	types, _ := storedTypes(t, client, "p", "r")
	bodies := map[string][]byte{}
	for _, f := range []aztables.MetadataFormat{aztables.MetadataFormatFull, aztables.MetadataFormatMinimal, aztables.MetadataFormatNone} {
		bodies[string(f)] = rawGet(t, client, "p", "r", f)
	}
	noneBody := bodies[string(aztables.MetadataFormatNone)]
	var bag entity.DynamicEntity
	if err := entity.Unmarshal(noneBody, &bag); err != nil {
		t.Fatal(err)
	}
	differences := 0
	for _, v := range formatValues {
		if types[v.name] != v.stored.String() {
			t.Fatalf("%s stored as %s, want %s", v.name, types[v.name], v.stored)
		}
		// Does the value travel as a string in no metadata, and as what text?
		text, isString := bag.Properties[v.name].(string)
		for _, typ := range formatProbes {
			name := fmt.Sprintf("%s into %v", v.name, typ)
			full, ferr := probe(bodies[string(aztables.MetadataFormatFull)], v.name, typ)
			min, merr := probe(bodies[string(aztables.MetadataFormatMinimal)], v.name, typ)
			none, nerr := probe(noneBody, v.name, typ)
			wantTyped := false
			for _, a := range v.accepts {
				wantTyped = wantTyped || a == typ.String()
			}
			if (merr == nil) != wantTyped || (ferr == nil) != wantTyped {
				t.Errorf("%s: minimal %v, full %v; want accepted = %v", name, merr, ferr, wantTyped)
				continue
			}
			if merr != nil {
				var de *entity.DecodeError
				if !errors.As(merr, &de) || de.Property != v.name || de.Type != typ {
					t.Errorf("%s: %v does not name the property and the Go type", name, merr)
				}
			}
			wantNone := wantTyped || (isString && noMetadataParses(text, typ))
			if (nerr == nil) != wantNone {
				t.Errorf("%s: no metadata %v; want accepted = %v", name, nerr, wantNone)
				continue
			}
			if nerr == nil && !wantTyped {
				differences++
				continue
			}
			if merr == nil && (!sameValue(min, full) || !sameValue(min, none)) {
				t.Errorf("%s: values differ: minimal %#v, full %#v, none %#v", name, min, full, none)
			}
		}
	}
	// The difference is not empty: the test would notice a decoder that
	// typed no-metadata strings as strictly as the others.
	if differences < 10 {
		t.Errorf("only %d no-metadata differences", differences)
	}
}

func sameValue(a, b any) bool {
	if x, ok := a.(float64); ok {
		y, ok := b.(float64)
		return ok && (x == y || math.IsNaN(x) && math.IsNaN(y))
	}
	if x, ok := a.(time.Time); ok {
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	}
	return reflect.DeepEqual(a, b)
}

// TestSpecialDoublesAreWritten: NaN and the infinities, which the service
// and the other SDKs store as the strings "NaN", "Infinity" and
// "-Infinity", are written that way, annotated, and read back.
func TestSpecialDoublesAreWritten(t *testing.T) {
	type T struct {
		PartitionKey, RowKey string
		N, P, M              float64
		F                    float32
	}
	in := T{PartitionKey: "p", RowKey: "r", N: math.NaN(), P: math.Inf(1), M: math.Inf(-1), F: float32(math.Inf(-1))}
	body, err := entity.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"N@odata.type":"Edm.Double","N":"NaN"`, `"P@odata.type":"Edm.Double","P":"Infinity"`, `"M@odata.type":"Edm.Double","M":"-Infinity"`, `"F":"-Infinity"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("body %s lacks %s", body, want)
		}
	}
	ctx := context.Background()
	client := env.Table(t)
	if _, err := client.AddEntity(ctx, body, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []aztables.MetadataFormat{aztables.MetadataFormatFull, aztables.MetadataFormatMinimal, aztables.MetadataFormatNone} {
		var out T
		if err := entity.Unmarshal(rawGet(t, client, "p", "r", f), &out); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !math.IsNaN(out.N) || !math.IsInf(out.P, 1) || !math.IsInf(out.M, -1) || !math.IsInf(float64(out.F), -1) {
			t.Errorf("%s: %+v", f, out)
		}
	}
}
