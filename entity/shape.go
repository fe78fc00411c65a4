package entity

import (
	"reflect"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/internal/entityfields"
)

// shape is how tablekit reads and writes one Go entity type: a tagged
// struct (its cached structCodec) or the property bag DynamicEntity. Table, Batch
// and BulkWrite work through it, so both kinds of entity take one path.
// Every method takes the entity as an addressable struct value.
type shape interface {
	keyValues(rv reflect.Value) (pk, rk string)
	etagValue(rv reflect.Value) string
	hasETag() bool
	hasTimestamp() bool
	// setWritten stores a new ETag, and the Timestamp it encodes.
	setWritten(rv reflect.Value, etag string)
	system(rv reflect.Value) System
	setSystem(rv reflect.Value, s System)
	encode(dst []byte, rv reflect.Value) ([]byte, error)
	decode(raw []byte, rv reflect.Value) error
	// selectable reports whether $select may name the property.
	selectable(name string) bool
	// readFormat is the metadata level reads ask for: none when nothing
	// is lost without annotations (smaller bodies, faster reads).
	readFormat() aztables.MetadataFormat
	goType() reflect.Type
}

var dynamicType = reflect.TypeFor[DynamicEntity]()

// shapeOf returns the shape of an entity type, or a *TypeError.
func shapeOf(t reflect.Type) (shape, error) {
	switch t {
	case dynamicType:
		return dynamicShape{}, nil
	case rawType:
		return rawShape{}, nil
	}
	p, err := structCodecOf(t)
	if err != nil {
		return nil, err
	}
	if p.pk == nil || p.rk == nil {
		return nil, &TypeError{Type: t, Reason: "no PartitionKey or RowKey field (name fields PartitionKey and RowKey, or tag them pk and rk)"}
	}
	return p, nil
}

func (p *structCodec) keyValues(rv reflect.Value) (string, string) {
	return fieldValue(rv, p.pk.path).String(), fieldValue(rv, p.rk.path).String()
}

func (p *structCodec) etagValue(rv reflect.Value) string {
	if p.etag == nil {
		return ""
	}
	return fieldValue(rv, p.etag.path).String()
}

func (p *structCodec) hasETag() bool      { return p.etag != nil }
func (p *structCodec) hasTimestamp() bool { return p.ts != nil }
func (p *structCodec) goType() reflect.Type {
	return p.typ
}

func (p *structCodec) setWritten(rv reflect.Value, etag string) {
	if p.etag != nil && etag != "" {
		fieldValueAlloc(rv, p.etag.path).SetString(etag)
	}
	if p.ts != nil {
		if ts, ok := TimestampFromETag(etag); ok {
			setAs(fieldValueAlloc(rv, p.ts.path), ts)
		}
	}
}

func (p *structCodec) encode(dst []byte, rv reflect.Value) ([]byte, error) {
	return p.appendStruct(dst, rv)
}

func (p *structCodec) selectable(name string) bool {
	_, ok := p.byName[name]
	return ok || name == "PartitionKey" || name == "RowKey" || name == "Timestamp"
}

func (p *structCodec) readFormat() aztables.MetadataFormat {
	if p.etag == nil && p.extra == nil && !p.hasHook() {
		return aztables.MetadataFormatNone
	}
	return aztables.MetadataFormatMinimal
}

func (p *structCodec) hasHook() bool {
	for i := range p.fields {
		if p.fields[i].kind == kHook {
			return true
		}
	}
	return false
}

func (p *structCodec) system(rv reflect.Value) System {
	s := System{ETag: p.etagValue(rv)}
	s.PartitionKey, s.RowKey = p.keyValues(rv)
	if p.ts != nil {
		s.Timestamp = valueAs[time.Time](fieldValue(rv, p.ts.path))
	}
	return s
}

func (p *structCodec) setSystem(rv reflect.Value, s System) {
	fieldValueAlloc(rv, p.pk.path).SetString(s.PartitionKey)
	fieldValueAlloc(rv, p.rk.path).SetString(s.RowKey)
	if p.etag != nil {
		fieldValueAlloc(rv, p.etag.path).SetString(s.ETag)
	}
	if p.ts != nil {
		setAs(fieldValueAlloc(rv, p.ts.path), s.Timestamp)
	}
}

// dynamicShape is the shape of DynamicEntity.
type dynamicShape struct{}

func asDynamic(rv reflect.Value) *DynamicEntity { return rv.Addr().Interface().(*DynamicEntity) }

func (dynamicShape) keyValues(rv reflect.Value) (string, string) {
	d := asDynamic(rv)
	return d.PartitionKey, d.RowKey
}
func (dynamicShape) etagValue(rv reflect.Value) string { return asDynamic(rv).ETag }
func (dynamicShape) hasETag() bool                     { return true }
func (dynamicShape) hasTimestamp() bool                { return true }
func (dynamicShape) goType() reflect.Type              { return dynamicType }

func (dynamicShape) setWritten(rv reflect.Value, etag string) {
	d := asDynamic(rv)
	if etag != "" {
		d.ETag = etag
	}
	if ts, ok := TimestampFromETag(etag); ok {
		d.Timestamp = ts
	}
}

func (dynamicShape) system(rv reflect.Value) System {
	d := asDynamic(rv)
	return System{PartitionKey: d.PartitionKey, RowKey: d.RowKey, ETag: d.ETag, Timestamp: d.Timestamp}
}

func (dynamicShape) setSystem(rv reflect.Value, s System) {
	d := asDynamic(rv)
	d.PartitionKey, d.RowKey, d.ETag, d.Timestamp = s.PartitionKey, s.RowKey, s.ETag, s.Timestamp
}

func (dynamicShape) encode(dst []byte, rv reflect.Value) ([]byte, error) {
	return asDynamic(rv).appendTo(dst)
}

func (dynamicShape) decode(raw []byte, rv reflect.Value) error { return asDynamic(rv).decode(raw) }

func (dynamicShape) selectable(name string) bool {
	return checkPropertyName(name) == "" || name == "PartitionKey" || name == "RowKey" || name == "Timestamp"
}

// The bag needs the annotations to keep Int64, DateTime, Guid and Binary.
func (dynamicShape) readFormat() aztables.MetadataFormat { return aztables.MetadataFormatMinimal }

// System is what the service keeps of every entity besides its properties:
// the keys, the ETag and the Timestamp.
type System struct {
	PartitionKey, RowKey string
	ETag                 string
	Timestamp            time.Time
}

// SystemOf reads the system properties of v, a pointer to a tagged struct
// or a *DynamicEntity: the keys, ETag and Timestamp of any entity value,
// for generic code. ETag and Timestamp are zero when the type has no field
// for them.
func SystemOf(v any) (System, error) {
	rv, sh, err := entityValue(v)
	if err != nil {
		return System{}, err
	}
	return sh.system(rv), nil
}

// The hooks of internal/entityfields: how tablekit's own packages set the
// system fields of values of any type.
func init() {
	entityfields.SetSystem = func(v any, s entityfields.System) error { return setSystem(v, System(s)) }
	entityfields.SetWritten = setWritten
	entityfields.RowKeyFieldOf = func(t reflect.Type) (entityfields.RowKeyField, error) {
		f, err := rowKeyFieldOf(t)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return f, nil
	}
}

// setSystem writes s into v's key fields, and into its ETag and Timestamp
// fields when it has them.
func setSystem(v any, s System) error {
	rv, sh, err := entityValue(v)
	if err != nil {
		return err
	}
	sh.setSystem(rv, s)
	return nil
}

// rowKeyField reads and writes the RowKey of values of one entity type,
// found once: for code that reaches it row after row on a hot path.
type rowKeyField struct {
	ptr  reflect.Type // *T
	path []step
}

// rowKeyFieldOf returns the RowKey field of an entity type: a tagged struct
// type or DynamicEntity.
func rowKeyFieldOf(t reflect.Type) (*rowKeyField, error) {
	if t == nil {
		return nil, &TypeError{Reason: "nil reflect.Type"}
	}
	if t == dynamicType {
		f, _ := t.FieldByName("RowKey")
		return &rowKeyField{ptr: reflect.PointerTo(t), path: []step{{index: f.Index[0]}}}, nil
	}
	sh, err := shapeOf(t)
	if err != nil {
		return nil, err
	}
	p, ok := sh.(*structCodec)
	if !ok {
		return nil, &TypeError{Type: t, Reason: "no RowKey field"}
	}
	return &rowKeyField{ptr: reflect.PointerTo(t), path: p.rk.path}, nil
}

// field returns v's RowKey field; v must be a non-nil pointer to the type.
func (f *rowKeyField) field(v any) (reflect.Value, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Type() != f.ptr || rv.IsNil() {
		return reflect.Value{}, &TypeError{Type: reflect.TypeOf(v), Reason: "want a non-nil " + f.ptr.String()}
	}
	return fieldValueAlloc(rv.Elem(), f.path), nil
}

// Get returns v's RowKey.
func (f *rowKeyField) Get(v any) (string, error) {
	fv, err := f.field(v)
	if err != nil {
		return "", err
	}
	return fv.String(), nil
}

// Set stores rowKey into v.
func (f *rowKeyField) Set(v any, rowKey string) error {
	fv, err := f.field(v)
	if err != nil {
		return err
	}
	fv.SetString(rowKey)
	return nil
}

// setWritten stores an ETag the service returned, and the Timestamp it
// encodes, into v: what Table and Submit do after a write.
func setWritten(v any, etag string) error {
	rv, sh, err := entityValue(v)
	if err != nil {
		return err
	}
	sh.setWritten(rv, etag)
	return nil
}

// entityValue checks that v is a non-nil pointer to an entity type and
// returns the struct and its shape.
func entityValue(v any) (reflect.Value, shape, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, nil, &TypeError{Type: reflect.TypeOf(v), Reason: "want a non-nil pointer to a struct, or *DynamicEntity"}
	}
	sh, err := shapeOf(rv.Elem().Type())
	if err != nil {
		return reflect.Value{}, nil, err
	}
	return rv.Elem(), sh, nil
}
