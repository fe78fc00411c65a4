package entity_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
)

// The interop corpus (testdata/interop, see its README): bodies written by
// the JavaScript SDK and captured from the service, and bodies the Python
// SDK writes, built by hand from its encoder's rules.

func readFixture(t *testing.T, sdk, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "interop", sdk, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeBag(t *testing.T, what string, body []byte) entity.DynamicEntity {
	t.Helper()
	var d entity.DynamicEntity
	if err := entity.Unmarshal(body, &d); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return d
}

// SDKTypes is the "types" entity of both SDKs as a Go type.
type SDKTypes struct {
	PartitionKey, RowKey string
	Str                  string
	Int32                int32
	Int32Min             int32
	Int64Big             int64
	DoubleFrac           float64
	DoubleWhole          float64
	DoubleExp            float64
	DoubleTiny           float64
	DoubleNaN            float64
	DoubleInf            float64
	DoubleNegInf         float64
	Bool                 bool
	Date                 time.Time
	Guid                 uuid.UUID
	Bin                  []byte
	BinEmpty             []byte
	StrTyped             string
	Int32Typed           int32
}

func checkSDKTypes(t *testing.T, what string, body []byte, frac time.Duration) {
	t.Helper()
	var got SDKTypes
	if err := entity.Unmarshal(body, &got); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	want := SDKTypes{
		PartitionKey: got.PartitionKey, RowKey: "types",
		Str: "hello ünïcödé 😀 \"q\" \\ /", Int32: 42, Int32Min: math.MinInt32, Int64Big: 9007199254740993,
		DoubleFrac: 2.5, DoubleWhole: 2, DoubleExp: 1e21, DoubleTiny: 5e-324,
		Bool: true, Date: time.Date(2012, 3, 4, 5, 6, 7, 0, time.UTC).Add(frac),
		Guid: uuid.MustParse("0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901"), Bin: []byte{0, 1, 2, 254, 251, 255}, BinEmpty: []byte{},
		StrTyped: "typed", Int32Typed: 7,
	}
	if !math.IsNaN(got.DoubleNaN) || !math.IsInf(got.DoubleInf, 1) || !math.IsInf(got.DoubleNegInf, -1) {
		t.Errorf("%s: NaN %v, Inf %v, -Inf %v", what, got.DoubleNaN, got.DoubleInf, got.DoubleNegInf)
	}
	got.DoubleNaN, got.DoubleInf, got.DoubleNegInf = 0, 0, 0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

// Lookalikes holds the lookalike strings in fields of the types they look
// like: with metadata each is refused as a String; without, parsed.
type Lookalikes struct {
	PartitionKey, RowKey string
	NumStr               int64
	DateStr              time.Time
	GuidStr              uuid.UUID
	BoolStr              string
}

// TestInteropCorpus decodes every committed body of the corpus on every run.
func TestInteropCorpus(t *testing.T) {
	formats := []string{"request", "full", "minimal", "none"}

	// JavaScript: every entity in every format it was captured in.
	for _, name := range []string{"types", "lookalikes", "keywords", "quote-key", "empty-keys", "empty-pk", "empty-rk", "unicode-keys"} {
		bags := map[string]entity.DynamicEntity{}
		for _, f := range formats {
			bags[f] = decodeBag(t, "js "+name+" "+f, readFixture(t, "js", name+"."+f+".json"))
		}
		// The types survive the service in full and minimal metadata;
		// without metadata, Int64, DateTime, Guid, Binary and the Double
		// specials arrive as strings.
		req := bags["request"].Properties
		for _, f := range []string{"full", "minimal"} {
			if !sameProperties(bags[f].Properties, req) {
				t.Errorf("js %s %s:\n got %#v\nwant %#v", name, f, bags[f].Properties, req)
			}
		}
		for k, v := range req {
			nv := bags["none"].Properties[k]
			switch x := v.(type) {
			case string, bool, int32:
				if nv != v {
					t.Errorf("js %s none: %s = %#v, want %#v", name, k, nv, v)
				}
			case float64:
				if _, isStr := nv.(string); (math.IsNaN(x) || math.IsInf(x, 0)) != isStr || (!isStr && nv != v) {
					t.Errorf("js %s none: %s = %#v, want %#v", name, k, nv, v)
				}
			default:
				if _, isStr := nv.(string); !isStr {
					t.Errorf("js %s none: %s = %#v, want its text", name, k, nv)
				}
			}
		}
		for _, f := range formats {
			if f != "request" && (bags[f].Timestamp.IsZero() || (f != "none" && bags[f].ETag == "")) {
				t.Errorf("js %s %s: system properties %+v", name, f, bags[f])
			}
		}
	}
	for _, f := range []string{"request", "full", "minimal"} {
		checkSDKTypes(t, "js types "+f, readFixture(t, "js", "types."+f+".json"), 123*time.Millisecond)
	}
	// The JavaScript SDK writes a whole-number double as an Int32 unless
	// typed; the typed one is a Double.
	jsTypes := decodeBag(t, "js types", readFixture(t, "js", "types.minimal.json"))
	if _, ok := jsTypes.Properties["DoubleWholeNumber"].(int32); !ok {
		t.Errorf("DoubleWholeNumber: %#v", jsTypes.Properties["DoubleWholeNumber"])
	}
	if v, ok := jsTypes.Properties["Int64BigInt"].(int64); !ok || v != math.MaxInt64 {
		t.Errorf("Int64BigInt: %#v", jsTypes.Properties["Int64BigInt"])
	}

	// Python: the request bodies, in both encoder generations.
	py := map[string]entity.DynamicEntity{}
	for _, name := range []string{"types", "types-12.0", "lookalikes", "keywords", "quote-key", "empty-keys", "unicode-keys"} {
		py[name] = decodeBag(t, "python "+name, readFixture(t, "python", name+".request.json"))
	}
	checkSDKTypes(t, "python types", readFixture(t, "python", "types.request.json"), 123456*time.Microsecond)
	// The older encoder annotates every string (keys too) and sends finite
	// doubles bare: a whole-number 2.0 is still a Double, a typed Double 2
	// is an Int32 (the value is kept, the type is not).
	old := py["types-12.0"].Properties
	if old["DoubleWhole"] != 2.0 || old["DoubleWholeTyped"] != int32(2) || old["Str"] != py["types"].Properties["Str"] {
		t.Errorf("python 12.0: DoubleWhole %#v, DoubleWholeTyped %#v, Str %#v", old["DoubleWhole"], old["DoubleWholeTyped"], old["Str"])
	}
	// A plain int beyond Int32 goes out bare: it is a Double (the service
	// keeps it as one), refused by integer fields; 2^53 + 1, which no
	// Double holds, is refused rather than read as 2^53
	// (TestUnannotatedIntegers).
	var de *entity.DecodeError
	var bigBag entity.DynamicEntity
	if err := entity.Unmarshal(readFixture(t, "python", "bare-big-int.request.json"), &bigBag); !errors.As(err, &de) || de.Property != "Inexact" {
		t.Errorf("bare 2^53 + 1: %v, want a *DecodeError naming Inexact", err)
	}
	var floats struct {
		PartitionKey, RowKey string
		Small, Exact         float64
	}
	if err := entity.Unmarshal(readFixture(t, "python", "bare-big-int.request.json"), &floats); err != nil || floats.Small != 1<<31 || floats.Exact != 1<<53 {
		t.Errorf("bare big ints: %+v, %v", floats, err)
	}
	var ints struct {
		PartitionKey, RowKey string
		Small                int64
	}
	if err := entity.Unmarshal(readFixture(t, "python", "bare-big-int.request.json"), &ints); !errors.As(err, &de) || de.Stored != entity.EDMDouble {
		t.Errorf("bare big int into int64: %v", err)
	}

	// Lookalike strings: refused where the body types them, parsed where
	// it cannot (no metadata).
	// (The JavaScript request body has neither annotations nor odata.*
	// members: like a no-metadata body, it leaves its strings untyped.)
	lookalikes := map[string][]byte{
		"js full":    readFixture(t, "js", "lookalikes.full.json"),
		"js minimal": readFixture(t, "js", "lookalikes.minimal.json"), "python request": readFixture(t, "python", "lookalikes.request.json"),
	}
	for what, body := range lookalikes {
		var l Lookalikes
		err := entity.Unmarshal(body, &l)
		var de *entity.DecodeError
		if !errors.As(err, &de) || de.Stored != entity.EDMString || de.Type == nil {
			t.Errorf("%s: got %v, want a DecodeError for a String", what, err)
		}
	}
	var l Lookalikes
	if err := entity.Unmarshal(readFixture(t, "js", "lookalikes.none.json"), &l); err != nil || l.NumStr != 12345 || l.DateStr.IsZero() || l.GuidStr == (uuid.UUID{}) || l.BoolStr != "true" {
		t.Errorf("js lookalikes none: %+v %v", l, err)
	}

	// Keyword names: read, and written back unchanged.
	for what, d := range map[string]entity.DynamicEntity{"js": decodeBag(t, "js keywords", readFixture(t, "js", "keywords.minimal.json")), "python": py["keywords"]} {
		if len(d.Properties) != len(keywordNames) {
			t.Errorf("%s keywords: %d properties", what, len(d.Properties))
		}
		body, err := entity.Marshal(&d)
		if err != nil {
			t.Fatalf("%s keywords cannot be written back: %v", what, err)
		}
		if again := decodeBag(t, what+" keywords again", body); !sameProperties(again.Properties, d.Properties) {
			t.Errorf("%s keywords changed on the way back", what)
		}
	}

	// Awkward keys arrive exactly.
	keys := map[string][2]string{
		"quote-key": {"Ü'p k", "O'Brien"}, "empty-keys": {"", ""}, "unicode-keys": {"日本語", "😀 100% a+b ''"},
	}
	for name, k := range keys {
		for _, d := range []entity.DynamicEntity{py[name], decodeBag(t, "js "+name, readFixture(t, "js", name+".minimal.json"))} {
			if d.PartitionKey != k[0] || d.RowKey != k[1] {
				t.Errorf("%s: keys %q %q, want %q", name, d.PartitionKey, d.RowKey, k)
			}
		}
	}

	// The transaction's rows, as query pages in every format.
	for _, f := range []string{"full", "minimal", "none"} {
		var page struct{ Value []json.RawMessage }
		if err := json.Unmarshal(readFixture(t, "js", "transaction.query."+f+".json"), &page); err != nil {
			t.Fatal(err)
		}
		var rks []string
		for _, raw := range page.Value {
			d := decodeBag(t, "js transaction "+f, raw)
			if d.PartitionKey != "Ü'p k" {
				t.Errorf("transaction %s: PartitionKey %q", f, d.PartitionKey)
			}
			rks = append(rks, d.RowKey)
			if d.RowKey == "b'2" && f != "none" && d.Properties["Big"] != int64(9007199254740993) {
				t.Errorf("transaction %s: Big = %#v", f, d.Properties["Big"])
			}
		}
		if want := []string{"", "O'Brien", "b'2", "b1"}; !slices.Equal(rks, want) {
			t.Errorf("transaction %s: RowKeys %q, want %q", f, rks, want)
		}
	}
}

// TestInteropBodiesThroughTheService stores every SDK-written body of the
// corpus, reads it back as a property bag in minimal metadata and checks it
// against the body as written, then writes the bag back unchanged with
// tablekit and checks that no value and no stored type changed.
func TestInteropBodiesThroughTheService(t *testing.T) {
	ctx := context.Background()
	client := env.Table(t)
	bags, err := entity.NewTable[entity.DynamicEntity](client)
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, sdk := range []string{"js", "python"} {
		files, _ := filepath.Glob(filepath.Join("testdata", "interop", sdk, "*.request.json"))
		for _, f := range files {
			bodies = append(bodies, sdk+"/"+filepath.Base(f))
		}
	}
	if len(bodies) < 15 {
		t.Fatalf("only %d bodies in the corpus", len(bodies))
	}
	n := 0
	for _, name := range bodies {
		sdk, file, _ := strings.Cut(name, "/")
		body := readFixture(t, sdk, file)
		decodable := body
		if name == "python/bare-big-int.request.json" {
			// tablekit refuses to read 2^53 + 1 as 2^53 (TestUnannotatedIntegers);
			// the service stores it so (below).
			decodable = bytes.Replace(body, []byte("9007199254740993"), []byte("9007199254740992"), 1)
		}
		written := decodeBag(t, name, decodable)
		// One table holds every body: give each its own partition.
		written.PartitionKey = sdk + " " + file + "|" + written.PartitionKey
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		m["PartitionKey"] = written.PartitionKey
		relabeled, _ := json.Marshal(m)
		if _, err := client.AddEntity(ctx, relabeled, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n++
		got, err := bags.Get(ctx, written.PartitionKey, written.RowKey)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := written.Properties
		if name == "python/types-12.0.request.json" {
			// Azurite stores a bare 2.0 as an Int32 (the service keeps a
			// Double).
			want = maps.Clone(want)
			want["DoubleWhole"] = int32(2)
		}
		if name == "python/bare-big-int.request.json" {
			// Azurite keeps a JavaScript number: 2^53 + 1 becomes 2^53.
			want = maps.Clone(want)
			want["Inexact"] = float64(1 << 53)
		}
		if !sameProperties(got.Properties, want) {
			t.Errorf("%s read back:\n got %#v\nwant %#v", name, got.Properties, want)
		}
		typesBefore := edmTypes(t, rawGet(t, client, got.PartitionKey, got.RowKey, aztables.MetadataFormatFull))
		if err := bags.Update(ctx, &got, entity.Replace); err != nil {
			t.Fatalf("%s: writing the bag back: %v", name, err)
		}
		again, err := bags.Get(ctx, got.PartitionKey, got.RowKey)
		if err != nil {
			t.Fatal(err)
		}
		typesAfter := edmTypes(t, rawGet(t, client, got.PartitionKey, got.RowKey, aztables.MetadataFormatFull))
		if !sameProperties(again.Properties, got.Properties) || !reflect.DeepEqual(typesAfter, typesBefore) {
			t.Errorf("%s changed on write back:\n values %#v\n    was %#v\n  types %v\n    was %v", name, again.Properties, got.Properties, typesAfter, typesBefore)
		}
	}
	// And in no metadata, every row reads as the same keys.
	raw := rawGet(t, client, "js types.request.json|js", "types", aztables.MetadataFormatNone)
	if d := decodeBag(t, "none", raw); d.RowKey != "types" || len(d.Properties) == 0 {
		t.Errorf("no metadata: %+v", d)
	}
	t.Logf("%d SDK bodies stored, read and written back", n)
}

// edmTypes types each user property of a full-metadata body by the
// service's rule, written here independently of the decoder: the
// annotation; else a string is a String, a boolean a Boolean, an integer
// literal in Int32 range an Int32 and any other number a Double.
func edmTypes(t *testing.T, body []byte) map[string]string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for k, v := range m {
		if strings.Contains(k, "@") || strings.HasPrefix(k, "odata.") || k == "PartitionKey" || k == "RowKey" || k == "Timestamp" {
			continue
		}
		var annotation string
		if a, ok := m[k+"@odata.type"]; ok {
			_ = json.Unmarshal(a, &annotation)
			types[k] = annotation
			continue
		}
		switch lit := string(v); {
		case strings.HasPrefix(lit, `"`):
			types[k] = "Edm.String"
		case lit == "true" || lit == "false":
			types[k] = "Edm.Boolean"
		default:
			if _, err := strconv.ParseInt(lit, 10, 32); err == nil {
				types[k] = "Edm.Int32"
			} else {
				types[k] = "Edm.Double"
			}
		}
	}
	return types
}
