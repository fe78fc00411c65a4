package entity_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
)

// A field tagged blob is left out of the entity (patterns/large stores it
// in blob storage and a reference under its property name), both ways.
func TestBlobFieldLeftOut(t *testing.T) {
	type Employee struct {
		PartitionKey, RowKey string
		Name                 string
		Photo                []byte `table:",blob"`
		CV                   string `table:"Resume,blob"`
	}
	body, err := entity.Marshal(Employee{PartitionKey: "p", RowKey: "r", Name: "n", Photo: make([]byte, 2<<20), CV: "cv"})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(body); strings.Contains(s, "Photo") || strings.Contains(s, "Resume") || !strings.Contains(s, `"Name":"n"`) {
		t.Errorf("body %s", s)
	}
	var e Employee
	if err := entity.Unmarshal([]byte(`{"PartitionKey":"p","RowKey":"r","Name":"n","Photo":"x","Resume":"y"}`), &e); err != nil {
		t.Fatal(err)
	}
	if e.Photo != nil || e.CV != "" || e.Name != "n" {
		t.Errorf("decoded %+v", e)
	}
	d, err := entity.ToDynamic(&Employee{PartitionKey: "p", RowKey: "r", Photo: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Properties["Photo"]; ok {
		t.Errorf("ToDynamic kept the blob field: %v", d.Properties)
	}
}

// The option is refused where the field could not be reached or its
// reference would collide with another property.
func TestBlobFieldRefused(t *testing.T) {
	type Inner struct {
		Photo []byte `table:",blob"`
	}
	type flattened struct {
		PartitionKey, RowKey string
		In                   Inner `table:",flatten"`
	}
	type embedded struct {
		PartitionKey, RowKey string
		Inner
	}
	type combined struct {
		PartitionKey, RowKey string
		Photo                []byte `table:",blob,omitempty"`
	}
	type encrypted struct {
		PartitionKey, RowKey string
		Photo                []byte `table:",blob,encrypt"`
	}
	type collides struct {
		PartitionKey, RowKey string
		Photo                []byte `table:",blob"`
		Other                string `table:"Photo"`
	}
	type twoBlobs struct {
		PartitionKey, RowKey string
		A                    []byte `table:"X,blob"`
		B                    []byte `table:"X,blob"`
	}
	type reserved struct {
		PartitionKey, RowKey string
		A                    []byte `table:"RowKey,blob"`
	}
	for _, v := range []any{flattened{}, embedded{}, combined{}, encrypted{}, collides{}, twoBlobs{}, reserved{}} {
		_, err := entity.Marshal(v)
		var te *entity.TypeError
		if !errors.Is(err, entity.ErrInvalidType) || !errors.As(err, &te) || !strings.Contains(te.Error(), "blob") && !strings.Contains(te.Error(), "also used") && !strings.Contains(te.Error(), "reserved") {
			t.Errorf("%T: got %v, want a TypeError about the blob field", v, err)
		}
	}
}
