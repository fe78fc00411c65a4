package large

import (
	"reflect"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/blobfield"
)

// fieldKind is how a blob field holds its value.
type fieldKind uint8

const (
	kindBytes  fieldKind = iota + 1 // []byte (or a named type of it): read whole
	kindString                      // string (or a named type of it): read whole
	kindStream                      // Stream: read on Open
)

// field is one blob field of the entity type.
type field struct {
	blobfield.Field
	kind fieldKind
}

var streamType = reflect.TypeFor[Stream]()

// fieldsOf returns the blob fields of T, or a *entity.TypeError.
func fieldsOf(t reflect.Type) ([]field, error) {
	if t.Kind() != reflect.Struct {
		return nil, &entity.TypeError{Type: t, Reason: "large: the entity type must be a struct"}
	}
	found := blobfield.Of(t)
	if len(found) == 0 {
		return nil, &entity.TypeError{Type: t, Reason: "large: no field is tagged blob (`table:\",blob\"`)"}
	}
	out := make([]field, len(found))
	for i, f := range found {
		out[i].Field = f
		switch {
		case f.Type == streamType:
			out[i].kind = kindStream
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Uint8:
			out[i].kind = kindBytes
		case f.Type.Kind() == reflect.String:
			out[i].kind = kindString
		default:
			return nil, &entity.TypeError{Type: t, Field: f.GoName, Reason: "large: a blob field must be a []byte, a string or a large.Stream, not " + f.Type.String()}
		}
	}
	return out, nil
}

// bytesOf returns the value of a []byte or string field; nil for none.
func (f *field) bytesOf(v reflect.Value) []byte {
	fv := v.Field(f.Index)
	switch f.kind {
	case kindBytes:
		if fv.Len() == 0 {
			return nil
		}
		return fv.Bytes()
	case kindString:
		if fv.Len() == 0 {
			return nil
		}
		return []byte(fv.String())
	}
	return nil
}

// streamOf returns a pointer to a Stream field.
func (f *field) streamOf(v reflect.Value) *Stream {
	return v.Field(f.Index).Addr().Interface().(*Stream)
}

// set stores a value read back into a []byte or string field; nil for
// none.
func (f *field) set(v reflect.Value, data []byte) {
	fv := v.Field(f.Index)
	switch f.kind {
	case kindBytes:
		if data == nil {
			fv.SetZero()
			return
		}
		fv.SetBytes(data)
	case kindString:
		fv.SetString(string(data))
	}
}
