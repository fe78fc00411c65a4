package entity_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/entityfields"
)

type Address struct {
	Street string
	City   string
	Geo    *Geo `table:",flatten"`
}

type Geo struct {
	Lat, Lon float64
}

// Money is a custom type stored through the hook pair as Int64 cents.
type Money struct{ Cents int64 }

func (m Money) MarshalProperty() (any, error) { return m.Cents, nil }
func (m *Money) UnmarshalProperty(v any) error {
	c, ok := v.(int64)
	if !ok {
		return fmt.Errorf("want int64 cents, got %T", v)
	}
	m.Cents = c
	return nil
}

type Everything struct {
	Dept       string    `table:"PartitionKey,pk"`
	ID         string    `table:",rk"`
	ETag       string    `table:",etag"`
	When       time.Time `table:",timestamp"`
	Name       string
	Age        int32
	Small      int8
	Count      int64
	Plain      int
	U16        uint16
	U32        uint32
	Big        uint64
	Ratio      float64
	Ratio32    float32
	Active     bool
	Hired      time.Time
	Badge      uuid.UUID
	Photo      []byte
	Nick       *string
	Manager    *int64
	IP         netip.Addr
	Salary     Money
	Tags       []string       `table:",json"`
	Home       Address        `table:",flatten"`
	Renamed    string         `table:"Title"`
	Skipped    string         `table:"-"`
	Note       string         `table:",omitempty"`
	Unknown    map[string]any `table:",extra"`
	_          struct{}       // blank fields are ignored
	Timestamp2 *time.Time     `table:"Reviewed,omitempty"`
}

func sample() Everything {
	nick := "Jo"
	mgr := int64(7)
	return Everything{
		Dept: "Sales", ID: "O'Brien", Name: "Jo \"quoted\" \\ ünïcödé 😀", Age: -5, Small: 3, Count: math.MaxInt64,
		Plain: -9007199254740993, U16: 65535, U32: math.MaxUint32, Big: math.MaxInt64,
		Ratio: 2, Ratio32: 0.1, Active: true,
		Hired: time.Date(2012, 3, 4, 5, 6, 7, 123456700, time.FixedZone("X", 5*3600+1800)),
		Badge: uuid.MustParse("0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901"),
		Photo: []byte{0, 1, 2, 250, 251, 255},
		Nick:  &nick, Manager: &mgr,
		IP:      netip.MustParseAddr("2001:db8::1"),
		Salary:  Money{Cents: 123456},
		Tags:    []string{"a", "b"},
		Home:    Address{Street: "1 Main", City: "Redmond", Geo: &Geo{Lat: 47.6, Lon: -122}},
		Renamed: "Boss", Skipped: "never",
	}
}

func TestRoundTripEveryType(t *testing.T) {
	in := sample()
	body, err := entity.Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	var out Everything
	if err := entity.Unmarshal(body, &out); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	want := in
	want.Skipped = ""
	want.Hired = in.Hired.UTC()
	if !reflect.DeepEqual(out, want) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v\nbody %s", out, want, body)
	}
}

func TestMarshalWireForm(t *testing.T) {
	in := sample()
	body, err := entity.Marshal(in) // by value works too
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, body)
	}
	checks := map[string]any{
		"PartitionKey":            "Sales",
		"RowKey":                  "O'Brien", // not doubled: the trap of EDMEntity
		"Count@odata.type":        "Edm.Int64",
		"Count":                   "9223372036854775807",
		"Plain":                   "-9007199254740993",
		"Plain@odata.type":        "Edm.Int64",
		"Age":                     float64(-5),
		"U16":                     float64(65535),
		"U32@odata.type":          "Edm.Int64",
		"Ratio@odata.type":        "Edm.Double",
		"Hired@odata.type":        "Edm.DateTime",
		"Hired":                   "2012-03-03T23:36:07.1234567Z",
		"Badge@odata.type":        "Edm.Guid",
		"Badge":                   "0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901",
		"Photo@odata.type":        "Edm.Binary",
		"Photo":                   "AAEC+vv/",
		"IP":                      "2001:db8::1",
		"Salary@odata.type":       "Edm.Int64",
		"Salary":                  "123456",
		"Tags":                    `["a","b"]`,
		"Home_Street":             "1 Main",
		"Home_Geo_Lat@odata.type": "Edm.Double",
		"Title":                   "Boss",
		"Nick":                    "Jo",
	}
	for k, v := range checks {
		if got, ok := m[k]; !ok || got != v {
			t.Errorf("%s = %#v (present %v), want %#v", k, got, ok, v)
		}
	}
	for _, absent := range []string{"ETag", "odata.etag", "When", "Timestamp", "Skipped", "Note", "Reviewed", "Unknown", "private", "Name@odata.type", "Age@odata.type", "Active@odata.type"} {
		if _, ok := m[absent]; ok {
			t.Errorf("%s must not be sent", absent)
		}
	}
	// A whole-number Double is written with a fraction so it stays a Double.
	if !bytes.Contains(body, []byte(`"Ratio":2.0`)) {
		t.Errorf("whole-number float not written as 2.0: %s", body)
	}
	if !bytes.Contains(body, []byte(`"Ratio32":0.1,`)) {
		t.Errorf("float32 not written in its shortest form: %s", body)
	}
}

func TestNilPointersAreAbsent(t *testing.T) {
	type T struct {
		PartitionKey, RowKey string
		N                    *int32
		G                    *Geo `table:",flatten"`
	}
	body, err := entity.Marshal(T{PartitionKey: "p", RowKey: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != `{"PartitionKey":"p","RowKey":"r"}` {
		t.Errorf("got %s", body)
	}
	var out T
	if err := entity.Unmarshal([]byte(`{"PartitionKey":"p","RowKey":"r","N":4,"G_Lat":1.5}`), &out); err != nil {
		t.Fatal(err)
	}
	if out.N == nil || *out.N != 4 || out.G == nil || out.G.Lat != 1.5 {
		t.Errorf("pointers not allocated on decode: %+v", out)
	}
}

func TestTimesInAnyZoneAreTheSameInstant(t *testing.T) {
	type T struct {
		PartitionKey, RowKey string
		At                   time.Time
	}
	instant := time.Date(2024, 2, 29, 23, 30, 0, 999, time.UTC)
	for _, zone := range []*time.Location{time.UTC, time.FixedZone("minus", -11*3600), time.FixedZone("plus", 14*3600), time.Local} {
		body, err := entity.Marshal(T{"p", "r", instant.In(zone)})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(body, []byte(`"At":"2024-02-29T23:30:00.0000009Z"`)) {
			t.Errorf("zone %v: %s", zone, body)
		}
		var out T
		if err := entity.Unmarshal(body, &out); err != nil {
			t.Fatal(err)
		}
		// 100 ns precision: the 999 ns instant is truncated to 900 ns.
		if !out.At.Equal(instant.Truncate(100)) || out.At.Location() != time.UTC {
			t.Errorf("zone %v: got %v", zone, out.At)
		}
	}
}

// Bodies as the service returns them in each metadata format, and as the
// .NET and Python SDKs write them (annotation before or after the value).
const fullMetadata = `{"odata.metadata":"http://127.0.0.1:10002/devstoreaccount1/$metadata#t/@Element",
"odata.type":"devstoreaccount1.t","odata.id":"http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='Sales',RowKey='O''Brien')",
"odata.etag":"W/\"datetime'2024-05-01T10%3A00%3A00.1234567Z'\"","odata.editLink":"t(PartitionKey='Sales',RowKey='O''Brien')",
"PartitionKey":"Sales","RowKey":"O'Brien","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-05-01T10:00:00.1234567Z",
"Name":"Jo","Age":42,"Count@odata.type":"Edm.Int64","Count":"12345678901","Ratio@odata.type":"Edm.Double","Ratio":2,
"Active":true,"Hired@odata.type":"Edm.DateTime","Hired":"2012-03-04T05:06:07Z","Badge@odata.type":"Edm.Guid",
"Badge":"0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901","Photo@odata.type":"Edm.Binary","Photo":"AAEC\/vv\/","Other":"x"}`

const noMetadata = `{"PartitionKey":"Sales","RowKey":"O'Brien","Timestamp":"2024-05-01T10:00:00.1234567Z",
"Name":"Jo","Age":42,"Count":"12345678901","Ratio":2,"Active":true,"Hired":"2012-03-04T05:06:07Z",
"Badge":"0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901","Photo":"AAEC/vv/"}`

// pythonStyle puts each annotation after its value, as azure-data-tables does.
const pythonStyle = `{"PartitionKey":"Sales","RowKey":"O'Brien","Name":"Jo","Age":42,
"Count":"12345678901","Count@odata.type":"Edm.Int64","Ratio":2.0,"Ratio@odata.type":"Edm.Double","Active":true,
"Hired":"2012-03-04T05:06:07.0000000Z","Hired@odata.type":"Edm.DateTime",
"Badge":"0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901","Badge@odata.type":"Edm.Guid","Photo":"AAEC/vv/","Photo@odata.type":"Edm.Binary"}`

type Employee struct {
	PartitionKey string
	RowKey       string
	ETag         string
	Timestamp    time.Time
	Name         string
	Age          int32
	Count        int64
	Ratio        float64
	Active       bool
	Hired        time.Time
	Badge        uuid.UUID
	Photo        []byte
}

func TestUnmarshalEveryMetadataFormat(t *testing.T) {
	want := Employee{
		PartitionKey: "Sales", RowKey: "O'Brien", Name: "Jo", Age: 42, Count: 12345678901, Ratio: 2, Active: true,
		Hired: time.Date(2012, 3, 4, 5, 6, 7, 0, time.UTC), Badge: uuid.MustParse("0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901"),
		Photo: []byte{0, 1, 2, 254, 251, 255},
	}
	for name, body := range map[string]string{"full": fullMetadata, "none": noMetadata, "python": pythonStyle} {
		t.Run(name, func(t *testing.T) {
			var got Employee
			if err := entity.Unmarshal([]byte(body), &got); err != nil {
				t.Fatal(err)
			}
			w := want
			if name == "full" {
				w.ETag = `W/"datetime'2024-05-01T10%3A00%3A00.1234567Z'"`
			}
			if name != "python" {
				w.Timestamp = time.Date(2024, 5, 1, 10, 0, 0, 123456700, time.UTC)
			}
			if !reflect.DeepEqual(got, w) {
				t.Errorf("\n got %+v\nwant %+v", got, w)
			}
		})
	}
}

func TestDynamicEntityKeepsTypes(t *testing.T) {
	var d entity.DynamicEntity
	if err := entity.Unmarshal([]byte(fullMetadata), &d); err != nil {
		t.Fatal(err)
	}
	wantTypes := map[string]any{
		"Name": "", "Age": int32(0), "Count": int64(0), "Ratio": float64(0), "Active": false,
		"Hired": time.Time{}, "Badge": uuid.UUID{}, "Photo": []byte(nil), "Other": "",
	}
	for k, v := range wantTypes {
		if reflect.TypeOf(d.Properties[k]) != reflect.TypeOf(v) {
			t.Errorf("%s: got %T, want %T", k, d.Properties[k], v)
		}
	}
	if len(d.Properties) != len(wantTypes) {
		t.Errorf("properties: %v", d.Properties)
	}
	if d.PartitionKey != "Sales" || d.RowKey != "O'Brien" || d.ETag == "" || d.Timestamp.IsZero() {
		t.Errorf("system properties: %+v", d)
	}
	// Marshal the bag and read it back: same values, same types.
	body, err := entity.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	var again entity.DynamicEntity
	if err := entity.Unmarshal(body, &again); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Properties, d.Properties) {
		t.Errorf("bag round trip:\n got %#v\nwant %#v", again.Properties, d.Properties)
	}
	if n, ok := entity.Prop[int32](&again, "Age"); !ok || n != 42 {
		t.Errorf("Prop[int32](Age) = %v, %v", n, ok)
	}
	if _, ok := entity.Prop[string](&again, "Age"); ok {
		t.Error("Prop with the wrong type must report false")
	}
}

func TestExtraCapturesUnknownProperties(t *testing.T) {
	type T struct {
		PartitionKey, RowKey string
		Name                 string
		Rest                 map[string]any `table:",extra"`
	}
	var got T
	if err := entity.Unmarshal([]byte(fullMetadata), &got); err != nil {
		t.Fatal(err)
	}
	if got.Rest["Count"] != int64(12345678901) || got.Rest["Other"] != "x" || got.Rest["Name"] != nil {
		t.Errorf("extra: %#v", got.Rest)
	}
	if _, ok := got.Rest["odata.etag"]; ok {
		t.Error("odata.* must not be captured")
	}
	body, err := entity.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, []byte(`"Count@odata.type":"Edm.Int64","Count":"12345678901"`)) {
		t.Errorf("extra not written back: %s", body)
	}
}

func TestUnknownPropertiesIgnored(t *testing.T) {
	type T struct{ PartitionKey, RowKey, Name string }
	var got T
	if err := entity.Unmarshal([]byte(fullMetadata), &got); err != nil {
		t.Fatal(err)
	}
	if got != (T{"Sales", "O'Brien", "Jo"}) {
		t.Errorf("got %+v", got)
	}
}

func TestServiceQuirksTolerated(t *testing.T) {
	type T struct {
		PartitionKey, RowKey string
		D                    float64
		I                    int64
		N                    float64
		P                    float64
	}
	var got T
	body := `{"PartitionKey":"p","RowKey":"r","D":2,"I":5,"N@odata.type":"Edm.Double","N":"NaN","P@odata.type":"Edm.Double","P":"Infinity"}`
	if err := entity.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if got.D != 2 || got.I != 5 || !math.IsNaN(got.N) || !math.IsInf(got.P, 1) {
		t.Errorf("got %+v", got)
	}
}

func TestDecodeRangeErrors(t *testing.T) {
	type T struct {
		PartitionKey, RowKey string
		Small                int32
		U                    uint16
		B                    bool
	}
	for _, body := range []string{
		`{"Small@odata.type":"Edm.Int64","Small":"5000000000"}`,
		`{"U":-1}`,
		`{"U":70000}`,
		`{"Small":1.5}`,
		`{"B":"true"}`,
		`{"Small":"x"}`,
	} {
		var got T
		err := entity.Unmarshal([]byte(body), &got)
		var de *entity.DecodeError
		if !errors.Is(err, entity.ErrDecode) || !errors.As(err, &de) || de.Property == "" {
			t.Errorf("%s: got %v, want a DecodeError naming the property", body, err)
		}
	}
}

func TestDecodeSyntaxErrors(t *testing.T) {
	for _, body := range []string{``, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":"\x"}`, `{"a":tru}`, `{"a":1} x`, "{\"a\":\"\x01\"}"} {
		var d entity.DynamicEntity
		if err := entity.Unmarshal([]byte(body), &d); !errors.Is(err, entity.ErrDecode) {
			t.Errorf("%q: got %v, want ErrDecode", body, err)
		}
	}
}

func TestTypeErrorsAtPlanTime(t *testing.T) {
	type badOption struct {
		PartitionKey, RowKey string
		X                    string `table:",bogus"`
	}
	type badType struct {
		PartitionKey, RowKey string
		X                    chan int
	}
	type badSlice struct {
		PartitionKey, RowKey string
		X                    []int
	}
	type dupName struct {
		PartitionKey, RowKey string
		X                    string `table:"Y"`
		Y                    string
	}
	type twoPK struct {
		A      string `table:",pk"`
		B      string `table:",pk"`
		RowKey string
	}
	type badName struct {
		PartitionKey, RowKey string
		X                    string `table:"1abc"`
	}
	type structNoFlatten struct {
		PartitionKey, RowKey string
		G                    Geo
	}
	type intKey struct {
		PartitionKey int `table:",pk"`
		RowKey       string
	}
	type reserved struct {
		PartitionKey, RowKey string
		X                    string `table:"Timestamp"`
	}
	type noKeys struct{ Name string }
	for _, v := range []any{badOption{}, badType{}, badSlice{}, dupName{}, twoPK{}, badName{}, structNoFlatten{}, intKey{}, reserved{}, noKeys{}, 42, nil, (*Employee)(nil)} {
		_, err := entity.Marshal(v)
		var te *entity.TypeError
		if !errors.Is(err, entity.ErrInvalidType) || !errors.As(err, &te) {
			t.Errorf("%T: got %v, want a TypeError", v, err)
		}
	}
}

func TestValidationRules(t *testing.T) {
	type T struct {
		PartitionKey, RowKey string
		S                    string
		B                    []byte
		U                    uint64
		D                    float64
		At                   time.Time `table:",omitempty"`
	}
	ok := T{PartitionKey: "p", RowKey: "r"}
	long := func(unit string, n int) string { return strings.Repeat(unit, n) }
	cases := []struct {
		name string
		v    any
		rule entity.Rule
		prop string
	}{
		{"pk slash", T{PartitionKey: "a/b", RowKey: "r"}, entity.RuleKey, "PartitionKey"},
		{"rk hash", T{PartitionKey: "p", RowKey: "a#b"}, entity.RuleKey, "RowKey"},
		{"rk control", T{PartitionKey: "p", RowKey: "a\x7fb"}, entity.RuleKey, "RowKey"},
		{"pk too long", T{PartitionKey: long("k", 2000), RowKey: "r"}, entity.RuleKey, "PartitionKey"},
		{"string 32K+1 units", with(ok, func(t *T) { t.S = long("a", entity.MaxStringUnits+1) }), entity.RuleStringLength, "S"},
		{"string surrogates count twice", with(ok, func(t *T) { t.S = long("😀", entity.MaxStringUnits/2+1) }), entity.RuleStringLength, "S"},
		{"invalid utf8", with(ok, func(t *T) { t.S = "a\xffb" }), entity.RuleUTF8, "S"},
		{"binary 64K+1", with(ok, func(t *T) { t.B = make([]byte, entity.MaxBinaryBytes+1) }), entity.RuleBinaryLength, "B"},
		{"uint64 overflow", with(ok, func(t *T) { t.U = math.MaxInt64 + 1 }), entity.RuleIntegerRange, "U"},
		{"before 1601", with(ok, func(t *T) { t.At = time.Date(1600, 12, 31, 23, 59, 59, 0, time.UTC) }), entity.RuleDateTimeRange, "At"},
		{"bag bad name", bag("has space", "x"), entity.RulePropertyName, "has space"},
		{"bag reserved", bag("Timestamp", "x"), entity.RuleReservedName, "Timestamp"},
		{"bag long name", bag(long("n", 256), "x"), entity.RulePropertyName, long("n", 256)},
		{"bag unsupported", bag("X", []int{1}), entity.RulePropertyType, "X"},
		{"bag int32 from uint64", bag("X", uint64(math.MaxUint64)), entity.RuleIntegerRange, "X"},
		{"253 properties", manyProps(253, 1), entity.RulePropertyCount, ""},
		{"over 1 MiB", manyProps(40, 32000), entity.RuleEntitySize, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := entity.Marshal(c.v)
			var ve *entity.ValidationError
			if !errors.Is(err, entity.ErrInvalid) || !errors.As(err, &ve) {
				t.Fatalf("got %v, want a ValidationError", err)
			}
			if ve.Rule != c.rule || ve.Property != c.prop {
				t.Errorf("got rule %q property %q, want %q %q (%v)", ve.Rule, ve.Property, c.rule, c.prop, err)
			}
			if err.Error() == "" || !strings.Contains(err.Error(), string(c.rule)) {
				t.Errorf("message does not name the rule: %v", err)
			}
			if verr := entity.Validate(c.v); !errors.Is(verr, entity.ErrInvalid) {
				t.Errorf("Validate: %v", verr)
			}
		})
	}
	// The limits themselves are allowed.
	edge := []any{
		with(ok, func(t *T) { t.S = long("a", entity.MaxStringUnits) }),
		with(ok, func(t *T) { t.S = long("😀", entity.MaxStringUnits/2) }),
		with(ok, func(t *T) { t.B = make([]byte, entity.MaxBinaryBytes) }),
		with(ok, func(t *T) { t.U = math.MaxInt64 }),
		with(ok, func(t *T) { t.At = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC) }),
		with(ok, func(t *T) { t.At = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC) }),
		manyProps(252, 1),
		T{PartitionKey: "", RowKey: ""},
		T{PartitionKey: long("k", 512), RowKey: "r"},
	}
	for i, v := range edge {
		if err := entity.Validate(v); err != nil {
			t.Errorf("edge %d: %v", i, err)
		}
	}
}

// TestEntitySizeFormula pins the documented formula at the 1 MiB boundary:
// 4 + 2·len(PK+RK) + Σ(8 + 2·len(name) + 2·len(value) + 4) for strings.
func TestEntitySizeFormula(t *testing.T) {
	// PK "p", RK "r": 4 + 4 = 8 bytes. Properties "Pnn" (3 chars): 8+6+4 = 18 bytes plus 2 per char.
	// 33 properties of 15,000 chars: 33·(18+30,000) = 990,594; total 990,602.
	// The 34th property of n chars adds 18+2n; the limit 1,048,576 leaves n = 28,978.
	build := func(lastLen int) *entity.DynamicEntity {
		d := &entity.DynamicEntity{PartitionKey: "p", RowKey: "r"}
		for i := 0; i < 33; i++ {
			d.Set(fmt.Sprintf("P%02d", i), strings.Repeat("x", 15000))
		}
		d.Set("P99", strings.Repeat("x", lastLen))
		return d
	}
	if err := entity.Validate(build(28978)); err != nil {
		t.Errorf("exactly 1 MiB must pass: %v", err)
	}
	if err := entity.Validate(build(28979)); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("1 MiB + 2 bytes must fail, got %v", err)
	}
}

func with[T any](v T, f func(*T)) T { f(&v); return v }

func bag(name string, v any) *entity.DynamicEntity {
	return (&entity.DynamicEntity{PartitionKey: "p", RowKey: "r"}).Set(name, v)
}

func manyProps(n, size int) *entity.DynamicEntity {
	d := &entity.DynamicEntity{PartitionKey: "p", RowKey: "r"}
	for i := 0; i < n; i++ {
		d.Set(fmt.Sprintf("P%03d", i), strings.Repeat("v", size))
	}
	return d
}

func TestHookErrorsSurface(t *testing.T) {
	type T struct {
		PartitionKey, RowKey string
		M                    Money
	}
	var got T
	err := entity.Unmarshal([]byte(`{"M":"not cents"}`), &got)
	if !errors.Is(err, entity.ErrDecode) {
		t.Errorf("got %v", err)
	}
}

func TestEmbeddedStructsArePromoted(t *testing.T) {
	type Base struct {
		PartitionKey string
		RowKey       string
		ETag         string
	}
	type T struct {
		Base
		Name string
	}
	body, err := entity.Marshal(T{Base{"p", "r", "etag"}, "n"})
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != `{"PartitionKey":"p","RowKey":"r","Name":"n"}` {
		t.Errorf("got %s", body)
	}
	var got T
	if err := entity.Unmarshal([]byte(`{"odata.etag":"e","PartitionKey":"p","RowKey":"r","Name":"n"}`), &got); err != nil {
		t.Fatal(err)
	}
	if got != (T{Base{"p", "r", "e"}, "n"}) {
		t.Errorf("got %+v", got)
	}
}

func TestReviewedEdgeCases(t *testing.T) {
	// A value stored under another EDM type is refused, not converted.
	type S struct {
		PartitionKey, RowKey string
		ID                   string
		N                    int64
		F                    float64
	}
	for _, body := range []string{
		`{"ID@odata.type":"Edm.Int64","ID":"7"}`,
		`{"N@odata.type":"Edm.String","N":"007"}`,
		`{"F@odata.type":"Edm.DateTime","F":"2024-01-01T00:00:00Z"}`,
	} {
		var s S
		if err := entity.Unmarshal([]byte(body), &s); !errors.Is(err, entity.ErrDecode) {
			t.Errorf("%s: got %v, want ErrDecode", body, err)
		}
	}
	// The service's integer-for-Double quirk is still read; an Int64 is
	// read from its annotated string, or from a no-metadata body's string.
	var s S
	if err := entity.Unmarshal([]byte(`{"F@odata.type":"Edm.Int32","F":2,"N@odata.type":"Edm.Int64","N":"5"}`), &s); err != nil || s.F != 2 || s.N != 5 {
		t.Errorf("quirks: %+v %v", s, err)
	}
	s = S{}
	if err := entity.Unmarshal([]byte(`{"F":2,"N":"5"}`), &s); err != nil || s.F != 2 || s.N != 5 {
		t.Errorf("no metadata: %+v %v", s, err)
	}

	// A nil value in a property bag is an absent property, never a panic.
	body, err := entity.Marshal(bag("X", nil).Set("Y", int32(1)))
	if err != nil || string(body) != `{"PartitionKey":"p","RowKey":"r","Y":1}` {
		t.Errorf("nil bag value: %s %v", body, err)
	}

	// Keys behind an embedded pointer are refused when the codec is built: a nil
	// pointer would leave the entity without keys.
	type Keys struct{ PartitionKey, RowKey string }
	type E struct {
		*Keys
		Name string
	}
	if _, err := entity.Marshal(E{Name: "x"}); !errors.Is(err, entity.ErrInvalidType) {
		t.Errorf("keys behind an embedded pointer: %v", err)
	}
}

func TestSystemAccessors(t *testing.T) {
	ts := time.Date(2024, 5, 1, 10, 0, 0, 123456700, time.UTC)
	etag := `W/"datetime'2024-05-01T10%3A00%3A00.1234567Z'"`
	p := &Everything{Dept: "d", ID: "i", Name: "n"}
	if err := entityfields.SetSystem(p, entityfields.System{PartitionKey: "P", RowKey: "R", ETag: "e", Timestamp: ts}); err != nil {
		t.Fatal(err)
	}
	if p.Dept != "P" || p.ID != "R" || p.ETag != "e" || !p.When.Equal(ts) || p.Name != "n" {
		t.Fatalf("SetSystem: %+v", p)
	}
	if err := entityfields.SetWritten(p, etag); err != nil || p.ETag != etag || !p.When.Equal(ts) {
		t.Fatalf("SetWritten: %+v %v", p, err)
	}
	got, err := entity.SystemOf(p)
	if err != nil || got != (entity.System{PartitionKey: "P", RowKey: "R", ETag: etag, Timestamp: ts}) {
		t.Fatalf("SystemOf: %+v %v", got, err)
	}
	d := &entity.DynamicEntity{}
	_ = entityfields.SetSystem(d, entityfields.System(got))
	if back, _ := entity.SystemOf(d); back != got {
		t.Fatalf("bag: %+v", back)
	}
	// A type without ETag and Timestamp fields keeps just the keys.
	type Keys struct{ PartitionKey, RowKey string }
	k := &Keys{}
	if err := entityfields.SetSystem(k, entityfields.System(got)); err != nil || *k != (Keys{"P", "R"}) {
		t.Fatalf("keys only: %+v %v", k, err)
	}
	for _, bad := range []any{nil, Keys{}, (*Keys)(nil), new(int), &struct{ Name string }{}} {
		if _, err := entity.SystemOf(bad); !errors.Is(err, entity.ErrInvalidType) {
			t.Errorf("SystemOf(%T): %v", bad, err)
		}
	}
}

func TestRowKeyField(t *testing.T) {
	f, err := entityfields.RowKeyFieldOf(reflect.TypeFor[Everything]())
	if err != nil {
		t.Fatal(err)
	}
	e := &Everything{ID: "EMP_1"}
	if rk, err := f.Get(e); rk != "EMP_1" || err != nil {
		t.Fatalf("Get = %q, %v", rk, err)
	}
	if err := f.Set(e, "1"); err != nil || e.ID != "1" {
		t.Fatalf("Set: %v %+v", err, e.ID)
	}
	for _, bad := range []any{nil, Everything{}, (*Everything)(nil), &Employee{}} {
		if _, err := f.Get(bad); !errors.Is(err, entity.ErrInvalidType) {
			t.Errorf("Get(%T): %v", bad, err)
		}
	}
	bf, err := entityfields.RowKeyFieldOf(reflect.TypeFor[entity.DynamicEntity]())
	if err != nil {
		t.Fatal(err)
	}
	d := &entity.DynamicEntity{RowKey: "x"}
	if err := bf.Set(d, "y"); err != nil || d.RowKey != "y" {
		t.Fatalf("bag: %v %+v", err, d)
	}
	if _, err := entityfields.RowKeyFieldOf(reflect.TypeFor[struct{ Name string }]()); !errors.Is(err, entity.ErrInvalidType) {
		t.Errorf("type without keys: %v", err)
	}
}
