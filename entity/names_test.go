package entity_test

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

// keywordNames are property names that are OData keywords, as the service
// and other SDKs store them.
var keywordNames = []string{
	"and", "or", "not", "eq", "ne", "gt", "ge", "lt", "le", "true", "false", "null", "INF", "NaN",
	"AND", "Or", "NOT", "Eq", "TRUE", "Null", "inf", "nan",
}

// Keywords maps struct fields to keyword names.
type Keywords struct {
	PartitionKey, RowKey string
	ETag                 string
	And                  string `table:"and"`
	True                 bool   `table:"true"`
	Null                 string `table:"null"`
	NaN                  string `table:"NaN"`
	Eq                   int32  `table:"eq"`
}

// TestKeywordPropertyNamesAreWritten: every name the service stores can be
// written back — OData keywords in any case, and formatting characters the
// C# and XML rules allow — by a property bag and by struct fields.
func TestKeywordPropertyNamesAreWritten(t *testing.T) {
	d := &entity.DynamicEntity{PartitionKey: "p", RowKey: "r"}
	for i, n := range keywordNames {
		d.Set(n, int32(i))
	}
	d.Set("a\ufeffb", "bom")
	body, err := entity.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back entity.DynamicEntity
	if err := entity.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Properties, d.Properties) {
		t.Errorf("bag round trip:\n got %v\nwant %v", back.Properties, d.Properties)
	}
	k := Keywords{PartitionKey: "p", RowKey: "r", And: "a", True: true, Null: "n", NaN: "x", Eq: 7}
	body, err = entity.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"and":"a"`, `"true":true`, `"null":"n"`, `"NaN":"x"`, `"eq":7`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("body %s lacks %s", body, want)
		}
	}
	var kb Keywords
	if err := entity.Unmarshal(body, &kb); err != nil || kb != k {
		t.Errorf("struct round trip: %+v %v", kb, err)
	}
	// What the service refuses is still refused before any request.
	for _, n := range []string{"µ", "a b", "a\u200bb", "1a", "a.b", "Timestamp"} {
		var ve *entity.ValidationError
		if _, err := entity.Marshal(bag(n, "x")); !errors.As(err, &ve) || ve.Property != n {
			t.Errorf("name %q: got %v, want a ValidationError naming it", n, err)
		}
	}
}

// TestBagReadFromATableIsSavedUnchanged: an entity another SDK wrote with
// keyword-named properties is read as a bag, written back unchanged with a
// conditional merge, and read back the same; a typed table maps fields to
// those names. A filter that names one is refused before any request, with
// an error saying the name cannot be referenced.
func TestBagReadFromATableIsSavedUnchanged(t *testing.T) {
	ctx := context.Background()
	client := env.Table(t)
	// The body the JavaScript SDK sent (testdata/interop/js/keywords.request.json).
	body := `{"PartitionKey":"js","RowKey":"keywords","and":"a","or":"o","not":"n","eq":1,"ne":2,"gt":3,"ge":4,"lt":5,"le":6,"true":false,"false":true,"null":"null","INF":1.5,"NaN":"x","AND":"A","Or":"O","NOT":"N","Eq":7,"TRUE":"T","Null":"N","inf":"i","nan":"n"}`
	if _, err := client.AddEntity(ctx, []byte(body), nil); err != nil {
		t.Fatal(err)
	}
	bags, err := entity.NewTable[entity.DynamicEntity](client)
	if err != nil {
		t.Fatal(err)
	}
	got, err := bags.Get(ctx, "js", "keywords")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Properties) != len(keywordNames) {
		t.Fatalf("read %d properties, want %d: %v", len(got.Properties), len(keywordNames), got.Properties)
	}
	before := got.Properties
	if err := bags.Update(ctx, &got, entity.Merge); err != nil {
		t.Fatalf("saving the bag unchanged: %v", err)
	}
	again, err := bags.Get(ctx, "js", "keywords")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Properties, before) {
		t.Errorf("after the write back:\n got %v\nwant %v", again.Properties, before)
	}

	kw, err := entity.NewTable[Keywords](client)
	if err != nil {
		t.Fatal(err)
	}
	k, err := kw.Get(ctx, "js", "keywords")
	if err != nil {
		t.Fatal(err)
	}
	if k.And != "a" || k.True || k.Null != "null" || k.NaN != "x" || k.Eq != 1 {
		t.Errorf("typed: %+v", k)
	}
	k.And = "changed"
	if err := kw.Update(ctx, &k, entity.Merge); err != nil {
		t.Fatal(err)
	}
	if b, _ := bags.Get(ctx, "js", "keywords"); b.Properties["and"] != "changed" || b.Properties["AND"] != "A" {
		t.Errorf("typed write: and = %v, AND = %v", b.Properties["and"], b.Properties["AND"])
	}

	// A projection names them; a filter cannot.
	sel, err := bags.QueryPage(ctx, entity.Query{Select: []string{"and", "NaN"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Items) != 1 || sel.Items[0].Properties["and"] != "changed" || sel.Items[0].Properties["NaN"] != "x" || len(sel.Items[0].Properties) != 2 {
		t.Errorf("select: %+v", sel.Items)
	}
	for _, err := range bags.Query(ctx, entity.Query{Filter: filter.Eq("and", "a")}) {
		var fe *filter.Error
		if !errors.Is(err, filter.ErrInvalidFilter) || !errors.As(err, &fe) || fe.Property != "and" || !strings.Contains(err.Error(), "cannot reference") {
			t.Errorf("filter on \"and\": %v", err)
		}
	}
}
