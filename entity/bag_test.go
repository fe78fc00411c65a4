package entity_test

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
)

func TestToDynamicFromDynamicRoundTrip(t *testing.T) {
	in := sample()
	in.ETag = `W/"datetime'2024-05-01T10%3A00%3A00.1234567Z'"`
	in.When = time.Date(2024, 5, 1, 10, 0, 0, 123456700, time.UTC)
	in.Unknown = map[string]any{"Extra1": int32(7), "Extra2": "x"}
	bag, err := entity.ToDynamic(&in)
	if err != nil {
		t.Fatal(err)
	}
	if bag.PartitionKey != in.Dept || bag.RowKey != in.ID || bag.ETag != in.ETag || !bag.Timestamp.Equal(in.When) {
		t.Errorf("system properties: %+v", bag)
	}
	// Canonical types, as a read of the stored entity gives them.
	for name, want := range map[string]any{"Age": int32(-5), "Small": int32(3), "Plain": int64(-9007199254740993), "U32": int64(4294967295), "Ratio32": 0.1, "Salary": int64(123456), "IP": "2001:db8::1", "Tags": `["a","b"]`, "Home_Geo_Lon": float64(-122), "Extra1": int32(7)} {
		if got := bag.Properties[name]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v (%T), want %#v (%T)", name, got, got, want, want)
		}
	}
	if h, _ := entity.Prop[time.Time](bag, "Hired"); h.Location() != time.UTC || !h.Equal(in.Hired) {
		t.Errorf("Hired = %v", h)
	}
	var out Everything
	if err := entity.FromDynamic(bag, &out); err != nil {
		t.Fatal(err)
	}
	want := in
	want.Skipped = ""
	want.Hired = in.Hired.UTC()
	if !reflect.DeepEqual(out, want) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", out, want)
	}
}

// A logical entity may hold more than one stored entity can: the bag
// conversions check each property but not the 252-property and 1 MiB
// limits, which Marshal still applies.
func TestDynamicConversionsSkipWholeEntityLimits(t *testing.T) {
	type wide struct {
		PartitionKey, RowKey string
		Rest                 map[string]any `table:",extra"`
	}
	in := wide{PartitionKey: "p", RowKey: "r", Rest: map[string]any{}}
	for i := range 600 {
		in.Rest["P"+strconv.Itoa(i)] = string(make([]byte, 1000)) + strconv.Itoa(i)
	}
	if _, err := entity.Marshal(&in); !errors.Is(err, entity.ErrInvalid) {
		t.Fatalf("Marshal of 600 properties: %v, want ErrInvalid", err)
	}
	bag, err := entity.ToDynamic(&in)
	if err != nil {
		t.Fatal(err)
	}
	if len(bag.Properties) != 600 {
		t.Fatalf("bag has %d properties", len(bag.Properties))
	}
	var out wide
	if err := entity.FromDynamic(bag, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Error("600-property round trip differs")
	}
	if err := entity.Validate(bag); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("Validate(bag) = %v, want ErrInvalid", err)
	}

	// Each property is still checked.
	in.Rest["bad name"] = "x"
	if _, err := entity.ToDynamic(&in); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("ToDynamic with an invalid name: %v", err)
	}
	bag.Properties["Huge"] = make([]byte, entity.MaxBinaryBytes+1)
	if err := entity.FromDynamic(bag, &out); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("FromDynamic with a 64 KiB+1 binary: %v", err)
	}
}

func TestFromDynamicRangeAndTypeErrors(t *testing.T) {
	type small struct {
		PartitionKey, RowKey string
		N                    int8
	}
	bag := (&entity.DynamicEntity{PartitionKey: "p", RowKey: "r"}).Set("N", int32(300))
	var s small
	if err := entity.FromDynamic(bag, &s); !errors.Is(err, entity.ErrDecode) {
		t.Errorf("300 into an int8: %v, want ErrDecode", err)
	}
	if err := entity.FromDynamic(nil, &s); !errors.Is(err, entity.ErrInvalidType) {
		t.Errorf("nil bag: %v", err)
	}
	if err := entity.FromDynamic(bag, s); !errors.Is(err, entity.ErrInvalidType) {
		t.Errorf("non-pointer target: %v", err)
	}
	if _, err := entity.ToDynamic(s); !errors.Is(err, entity.ErrInvalidType) {
		t.Errorf("ToDynamic of a non-pointer: %v", err)
	}
	// A bag converts to a bag: a copy with canonical values.
	d, err := entity.ToDynamic((&entity.DynamicEntity{PartitionKey: "p", RowKey: "r", ETag: "e"}).Set("U", uint16(9)))
	if err != nil || d.Properties["U"] != int32(9) || d.ETag != "e" {
		t.Errorf("bag to bag: %+v, %v", d, err)
	}
}

// An annotation is usually next to its value; one anywhere else in the
// body still types it.
func TestAnnotationApartFromItsValue(t *testing.T) {
	body := []byte(`{"PartitionKey":"p","RowKey":"r","A":"5","B":"x","C":"2024-05-01T10:00:00Z","A@odata.type":"Edm.Int64","D":1,"C@odata.type":"Edm.DateTime"}`)
	var d entity.DynamicEntity
	if err := entity.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	if d.Properties["A"] != int64(5) || d.Properties["B"] != "x" || d.Properties["D"] != int32(1) {
		t.Errorf("bag: %#v", d.Properties)
	}
	if c, ok := entity.Prop[time.Time](&d, "C"); !ok || c.Year() != 2024 {
		t.Errorf("C = %#v", d.Properties["C"])
	}
}

// U+2028 and U+2029 travel escaped, as encoding/json writes them: Azurite
// takes them for line ends inside a $batch body.
func TestLineSeparatorsEscaped(t *testing.T) {
	in := (&entity.DynamicEntity{PartitionKey: "p", RowKey: "r"}).Set("S", "a\u2028b\u2029c\u2027\u202a")
	body, err := entity.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"S":"a\u2028b\u2029c` + "\u2027\u202a" + `"`; !strings.Contains(string(body), want) {
		t.Errorf("body %s lacks %s", body, want)
	}
	var out entity.DynamicEntity
	if err := entity.Unmarshal(body, &out); err != nil || out.Properties["S"] != in.Properties["S"] {
		t.Errorf("round trip: %q, %v", out.Properties["S"], err)
	}
}
