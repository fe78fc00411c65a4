// Package blobfield finds the struct fields tagged `table:",blob"`: values
// too large for an entity, which entity's codec leaves out and package
// patterns/large keeps in blob storage (design guide §6.11). entity
// accepts the option, refuses it where large cannot reach the field, and
// checks that its property name is free; large reads the fields with Of.
package blobfield

import (
	"reflect"
	"strings"
)

// Option is the tag option that marks a blob field: `table:"Photo,blob"`.
const Option = "blob"

// Field is one blob field of a struct type.
type Field struct {
	Index  int          // the field's index in the struct
	Name   string       // the property that stores its reference: the tag's name, else the Go name
	GoName string       // the Go field name, for errors
	Type   reflect.Type // the field's type
}

// Of returns the blob fields of struct type t, in field order. Only fields
// of t itself can be blob fields (entity refuses the option elsewhere), so
// Of looks no deeper.
func Of(t reflect.Type) []Field {
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []Field
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, ok := Tagged(sf.Tag.Get("table"))
		if !ok {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out = append(out, Field{Index: i, Name: name, GoName: sf.Name, Type: sf.Type})
	}
	return out
}

// Tagged reports whether a `table` tag carries the blob option, and the
// property name it gives ("" for the Go name).
func Tagged(tag string) (name string, ok bool) {
	name, opts, _ := strings.Cut(tag, ",")
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == Option {
			return name, true
		}
	}
	return name, false
}
