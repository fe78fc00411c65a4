package entity_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// storedTypes reads an entity back in full metadata and returns each
// property's @odata.type as the service stored it (String, Int32 and
// Boolean carry none in JSON and are reported as such).
func storedTypes(t *testing.T, client *aztables.Client, pk, rk string) (map[string]string, []byte) {
	t.Helper()
	raw := rawGet(t, client, pk, rk, aztables.MetadataFormatFull)
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for k, v := range m {
		if len(k) > 11 && k[len(k)-11:] == "@odata.type" {
			types[k[:len(k)-11]] = v.(string)
			continue
		}
		if _, annotated := m[k+"@odata.type"]; annotated {
			continue
		}
		switch v := v.(type) {
		case string:
			types[k] = "Edm.String"
		case bool:
			types[k] = "Edm.Boolean"
		case json.Number:
			// The service writes Doubles with a fraction or exponent (2.0).
			if strings.ContainsAny(string(v), ".eE") {
				types[k] = "Edm.Double"
			} else {
				types[k] = "Edm.Int32"
			}
		}
	}
	return types, raw
}

// rawGet reads an entity's body as the service sent it, captured through
// azcore's pipeline: aztables re-encodes what it returns (2.0 becomes 2).
func rawGet(t *testing.T, client *aztables.Client, pk, rk string, format aztables.MetadataFormat) []byte {
	t.Helper()
	var resp *http.Response
	ctx := policy.WithCaptureResponse(context.Background(), &resp)
	if _, err := client.GetEntity(ctx, pk, rk, &aztables.GetEntityOptions{Format: &format}); err != nil {
		t.Fatal(err)
	}
	body, err := runtime.Payload(resp)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// TestEveryTypeRoundTripsThroughTheService writes with Marshal and the raw
// aztables client, checks the EDM type the service stored for every
// property, and reads the entity back with Unmarshal.
func TestEveryTypeRoundTripsThroughTheService(t *testing.T) {
	ctx := context.Background()
	client := env.Table(t)
	in := sample()
	body, err := entity.Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.AddEntity(ctx, body, nil); err != nil {
		t.Fatal(err)
	}
	types, raw := storedTypes(t, client, in.Dept, in.ID)
	want := map[string]string{
		"Name": "Edm.String", "Age": "Edm.Int32", "Small": "Edm.Int32", "Count": "Edm.Int64", "Plain": "Edm.Int64",
		"U16": "Edm.Int32", "U32": "Edm.Int64", "Big": "Edm.Int64", "Ratio": "Edm.Double", "Ratio32": "Edm.Double",
		"Active": "Edm.Boolean", "Hired": "Edm.DateTime", "Badge": "Edm.Guid", "Photo": "Edm.Binary",
		"Nick": "Edm.String", "Manager": "Edm.Int64", "IP": "Edm.String", "Salary": "Edm.Int64", "Tags": "Edm.String",
		"Home_Street": "Edm.String", "Home_City": "Edm.String", "Home_Geo_Lat": "Edm.Double", "Home_Geo_Lon": "Edm.Double",
		"Title": "Edm.String", "Timestamp": "Edm.DateTime",
	}
	for k, v := range want {
		if types[k] != v {
			t.Errorf("%s stored as %q, want %q", k, types[k], v)
		}
	}
	var out Everything
	if err := entity.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	exp := in
	exp.Skipped = ""
	exp.Hired = in.Hired.UTC()
	exp.ETag, exp.When = out.ETag, out.When
	if !reflect.DeepEqual(out, exp) {
		t.Errorf("read back differs:\n got %+v\nwant %+v", out, exp)
	}
	if out.ETag == "" || out.When.IsZero() {
		t.Errorf("etag %q and timestamp %v must be filled", out.ETag, out.When)
	}
	// The key with a quote is stored exactly, not doubled.
	if out.ID != "O'Brien" {
		t.Errorf("RowKey stored as %q", out.ID)
	}
}

// TestSDKWrittenBodiesDecode stores bodies written the way the .NET and
// Python SDKs write them and reads them back with Unmarshal, in every
// metadata format.
func TestSDKWrittenBodiesDecode(t *testing.T) {
	ctx := context.Background()
	client := env.Table(t)
	dotnet := `{"PartitionKey":"Sales","RowKey":"dotnet","Name":"Jo","Age":42,"Count@odata.type":"Edm.Int64","Count":"12345678901",
"Ratio@odata.type":"Edm.Double","Ratio":2.0,"Active":true,"Hired@odata.type":"Edm.DateTime","Hired":"2012-03-04T05:06:07.0000000Z",
"Badge@odata.type":"Edm.Guid","Badge":"0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901","Photo@odata.type":"Edm.Binary","Photo":"AAEC/vv/"}`
	python := `{"PartitionKey":"Sales","RowKey":"python","Name":"Jo","Age":42,"Count":"12345678901","Count@odata.type":"Edm.Int64",
"Ratio":2.0,"Ratio@odata.type":"Edm.Double","Active":true,"Hired":"2012-03-04T05:06:07Z","Hired@odata.type":"Edm.DateTime",
"Badge":"0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901","Badge@odata.type":"Edm.Guid","Photo":"AAEC/vv/","Photo@odata.type":"Edm.Binary"}`
	want := Employee{
		PartitionKey: "Sales", Name: "Jo", Age: 42, Count: 12345678901, Ratio: 2, Active: true,
		Hired: time.Date(2012, 3, 4, 5, 6, 7, 0, time.UTC), Badge: uuid.MustParse("0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901"),
		Photo: []byte{0, 1, 2, 254, 251, 255},
	}
	for rk, body := range map[string]string{"dotnet": dotnet, "python": python} {
		if _, err := client.AddEntity(ctx, []byte(body), nil); err != nil {
			t.Fatal(err)
		}
		for _, format := range []aztables.MetadataFormat{aztables.MetadataFormatFull, aztables.MetadataFormatMinimal, aztables.MetadataFormatNone} {
			body := rawGet(t, client, "Sales", rk, format)
			var got Employee
			if err := entity.Unmarshal(body, &got); err != nil {
				t.Fatalf("%s %s: %v", rk, format, err)
			}
			w := want
			w.RowKey = rk
			w.ETag, w.Timestamp = got.ETag, got.Timestamp
			if !reflect.DeepEqual(got, w) {
				t.Errorf("%s %s:\n got %+v\nwant %+v", rk, format, got, w)
			}
			if got.Timestamp.IsZero() {
				t.Errorf("%s %s: no Timestamp", rk, format)
			}
			if format != aztables.MetadataFormatNone && got.ETag == "" {
				t.Errorf("%s %s: no ETag", rk, format)
			}
			// The property bag keeps the stored types wherever the body says them.
			var bag entity.DynamicEntity
			if err := entity.Unmarshal(body, &bag); err != nil {
				t.Fatal(err)
			}
			if _, ok := bag.Properties["Count"].(int64); !ok && format != aztables.MetadataFormatNone {
				t.Errorf("%s %s: Count decoded as %T", rk, format, bag.Properties["Count"])
			}
			// A whole-number Double comes back as a float64 in every format.
			if _, ok := bag.Properties["Ratio"].(float64); !ok {
				t.Errorf("%s %s: Ratio decoded as %T", rk, format, bag.Properties["Ratio"])
			}
		}
	}
}
