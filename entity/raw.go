package entity

import (
	"encoding/json"
	"reflect"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/internal/jsonscan"
)

// A Table[json.RawMessage] reads rows undecoded and refuses writes (see
// Table).

var rawType = reflect.TypeFor[json.RawMessage]()

// rawShape is the shape of json.RawMessage.
type rawShape struct{}

func asRaw(rv reflect.Value) *json.RawMessage { return rv.Addr().Interface().(*json.RawMessage) }

// keyValues reads the keys from the object; fan-out queries merge rows by
// them.
func (rawShape) keyValues(rv reflect.Value) (pk, rk string) {
	s := rawSystem(*asRaw(rv))
	return s.PartitionKey, s.RowKey
}

// No ETag for writes: a Table[json.RawMessage] does not write.
func (rawShape) etagValue(reflect.Value) string { return "" }
func (rawShape) hasETag() bool                  { return false }
func (rawShape) hasTimestamp() bool             { return true }
func (rawShape) goType() reflect.Type           { return rawType }
func (rawShape) setWritten(reflect.Value, string) {
}
func (rawShape) system(rv reflect.Value) System  { return rawSystem(*asRaw(rv)) }
func (rawShape) setSystem(reflect.Value, System) {}

func (rawShape) encode([]byte, reflect.Value) ([]byte, error) { return nil, errRawWrite }

// decode copies the object out of the response body.
func (rawShape) decode(raw []byte, rv reflect.Value) error {
	*asRaw(rv) = append(json.RawMessage(nil), raw...)
	return nil
}

func (rawShape) selectable(name string) bool { return dynamicShape{}.selectable(name) }

// Minimal metadata, as for DynamicEntity: the object keeps every type.
func (rawShape) readFormat() aztables.MetadataFormat { return aztables.MetadataFormatMinimal }

// errRawWrite refuses every write of a Table[json.RawMessage].
var errRawWrite = &TypeError{Type: rawType, Reason: "a Table[json.RawMessage] only reads; write through a Table of a struct type or of DynamicEntity"}

// okWrite checks t before a write: ok, and not a Table[json.RawMessage].
func (t *Table[T]) okWrite() error {
	if err := t.ok(); err != nil {
		return err
	}
	if _, ok := t.shape.(rawShape); ok {
		return errRawWrite
	}
	return nil
}

// rawSystem reads the keys and ETag of an entity object; what it cannot
// read stays empty.
func rawSystem(body []byte) System {
	var s System
	sc := jsonscan.New(body)
	_ = sc.Members(func(name []byte, esc bool) error {
		var p jsonscan.Prop
		if err := sc.Value(&p); err != nil {
			return err
		}
		if esc || p.Kind != jsonscan.String {
			return nil
		}
		var dst *string
		switch string(name) {
		case "PartitionKey":
			dst = &s.PartitionKey
		case "RowKey":
			dst = &s.RowKey
		case "odata.etag":
			dst = &s.ETag
		default:
			return nil
		}
		*dst, _ = jsonscan.StringOf(p.Val, p.ValEsc)
		return nil
	})
	return s
}
