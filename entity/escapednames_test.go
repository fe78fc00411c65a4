package entity_test

import (
	"errors"
	"testing"

	"github.com/tablekit/tablekit/entity"
)

// TestEscapedNames: a property or annotation name written with JSON
// escapes is the name its text spells, as in encoding/json: an escaped
// "@odata.type" annotates its property (an Int64 stored as a string),
// and is no property of its own.
func TestEscapedNames(t *testing.T) {
	body := []byte(`{"PartitionKey":"a","RowKey":"b","N":"12","N\u0040odata.type":"Edm.Int64","\u004eame":"x","odata.etag":"W/\"1\""}`)
	var d entity.DynamicEntity
	if err := entity.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	if n, ok := d.Properties["N"].(int64); !ok || n != 12 || d.Properties["Name"] != "x" || len(d.Properties) != 2 {
		t.Errorf("DynamicEntity properties %#v; want N = int64(12), Name = x", d.Properties)
	}
	type row struct {
		PartitionKey, RowKey, ETag string
		N                          string
		Name                       string
	}
	var r row
	err := entity.Unmarshal(body, &r)
	var de *entity.DecodeError
	if !errors.As(err, &de) || de.Property != "N" {
		t.Errorf("an Int64 read into a string field = %v, %+v; want a *DecodeError for N (the escaped annotation is read)", err, r)
	}
}
