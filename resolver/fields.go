package resolver

import (
	"fmt"
	"reflect"
	"time"

	"github.com/tablekit/tablekit/entity"
)

// fields locates the system fields of a registered Go type: its keys, ETag
// and Timestamp. They are found by asking entity itself: a probe body with
// marked values is decoded into a new value, and the fields that received
// them are the ones entity maps (by tag, by name, through embedded and
// flattened structs alike), so the rules live in one place.
type fields struct {
	pk, rk, etag, ts fieldPath // nil when the type has no such field
}

// fieldPath leads from the root struct to one field.
type fieldPath []pathStep

type pathStep struct {
	index int
	ptr   bool // the field is a pointer to struct, followed
}

const (
	probePK   = "tablekit.resolver.probe.PartitionKey"
	probeRK   = "tablekit.resolver.probe.RowKey"
	probeETag = `W/"tablekit.resolver.probe.etag"`
	probeTS   = "2001-02-03T04:05:06.7654321Z"
)

var (
	probeBody = []byte(`{"PartitionKey":"` + probePK + `","RowKey":"` + probeRK +
		`","odata.etag":"W/\"tablekit.resolver.probe.etag\"","Timestamp":"` + probeTS + `"}`)
	probeTime = time.Date(2001, 2, 3, 4, 5, 6, 765432100, time.UTC)
	timeType  = reflect.TypeFor[time.Time]()
)

func probeFields(t reflect.Type) (*fields, error) {
	v := reflect.New(t)
	if err := entity.Unmarshal(probeBody, v.Interface()); err != nil {
		return nil, err
	}
	root := v.Elem()
	f := &fields{
		pk:   findField(root, func(fv reflect.Value) bool { return fv.Kind() == reflect.String && fv.String() == probePK }, 0),
		rk:   findField(root, func(fv reflect.Value) bool { return fv.Kind() == reflect.String && fv.String() == probeRK }, 0),
		etag: findField(root, func(fv reflect.Value) bool { return fv.Kind() == reflect.String && fv.String() == probeETag }, 0),
		ts: findField(root, func(fv reflect.Value) bool {
			if fv.Type() != timeType || !fv.CanInterface() {
				return false
			}
			ts, _ := fv.Interface().(time.Time)
			return ts.Equal(probeTime)
		}, 0),
	}
	if f.pk == nil || f.rk == nil {
		return nil, &entity.TypeError{Type: t, Reason: "no PartitionKey or RowKey field (name fields PartitionKey and RowKey, or tag them pk and rk)"}
	}
	for _, p := range []fieldPath{f.pk, f.rk, f.etag, f.ts} {
		if p != nil && !p.alloc(root).CanSet() {
			return nil, &entity.TypeError{Type: t, Reason: "a key, etag or timestamp field cannot be set"}
		}
	}
	return f, nil
}

// findField returns the path to the first field, depth first, that match accepts.
func findField(v reflect.Value, match func(reflect.Value) bool, depth int) fieldPath {
	if depth > 20 {
		return nil
	}
	for i := 0; i < v.NumField(); i++ {
		fv := v.Field(i)
		if match(fv) {
			return fieldPath{{index: i}}
		}
		switch {
		case fv.Kind() == reflect.Struct && fv.Type() != timeType:
			if sub := findField(fv, match, depth+1); sub != nil {
				return append(fieldPath{{index: i}}, sub...)
			}
		case fv.Kind() == reflect.Pointer && !fv.IsNil() && fv.Elem().Kind() == reflect.Struct:
			if sub := findField(fv.Elem(), match, depth+1); sub != nil {
				return append(fieldPath{{index: i, ptr: true}}, sub...)
			}
		}
	}
	return nil
}

// get follows p; ok is false when a pointer on the way is nil.
func (p fieldPath) get(v reflect.Value) (reflect.Value, bool) {
	for _, s := range p {
		v = v.Field(s.index)
		if s.ptr {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
	}
	return v, true
}

// alloc follows p, allocating nil pointers on the way.
func (p fieldPath) alloc(v reflect.Value) reflect.Value {
	for _, s := range p {
		v = v.Field(s.index)
		if s.ptr {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
	}
	return v
}

func (p fieldPath) getString(v reflect.Value) string {
	if p == nil {
		return ""
	}
	fv, ok := p.get(v)
	if !ok {
		return ""
	}
	return fv.String()
}

func (p fieldPath) setString(v reflect.Value, s string) {
	if p != nil {
		p.alloc(v).SetString(s)
	}
}

// keys returns the PartitionKey and RowKey fields' values.
func (f *fields) keys(v reflect.Value) (pk, rk string) {
	return f.pk.getString(v), f.rk.getString(v)
}

// setWritten stores a new ETag and the Timestamp it encodes, as entity does.
func (f *fields) setWritten(v reflect.Value, etag string) {
	if etag == "" {
		return
	}
	f.etag.setString(v, etag)
	if f.ts != nil {
		if ts, ok := entity.TimestampFromETag(etag); ok {
			f.ts.alloc(v).Set(reflect.ValueOf(ts))
		}
	}
}

// structPointer checks that v is a non-nil pointer to a struct and returns
// the struct.
func structPointer(v any) (reflect.Value, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, &entity.TypeError{Type: reflect.TypeOf(v), Reason: fmt.Sprintf("resolver needs a non-nil pointer to a registered struct, or *entity.DynamicEntity; got %T", v)}
	}
	return rv.Elem(), nil
}
