package entity

import (
	"encoding"
	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity/internal/protect"
	"github.com/tablekit/tablekit/internal/blobfield"
	"github.com/tablekit/tablekit/internal/ident"
	"github.com/tablekit/tablekit/keys"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
)

// PropertyMarshaler is implemented by custom types stored as one property.
// MarshalProperty returns the stored value as one of the eight canonical Go
// types: string, int32, int64, float64, bool, time.Time, uuid.UUID or []byte.
type PropertyMarshaler interface {
	MarshalProperty() (any, error)
}

// PropertyUnmarshaler is the decoding half of PropertyMarshaler. It receives
// the stored value as one of the eight canonical Go types.
type PropertyUnmarshaler interface {
	UnmarshalProperty(value any) error
}

// fieldKind says how a field's value is encoded.
type fieldKind uint8

const (
	kString fieldKind = iota + 1
	kBool
	kInt    // any signed integer kind; EDM type by size
	kUint   // any unsigned integer kind; EDM type by size, range-checked
	kFloat  // float32 or float64, always Edm.Double
	kTime   // time.Time, Edm.DateTime
	kGUID   // uuid.UUID, Edm.Guid
	kBinary // []byte, Edm.Binary
	kText   // encoding.TextMarshaler, Edm.String
	kHook   // PropertyMarshaler/PropertyUnmarshaler
	kJSON   // any value as a JSON document in a String property
)

// step is one hop from the root struct to a field: the field index, and
// whether the field at that index is a pointer to struct to follow.
type step struct {
	index int
	ptr   bool
}

type field struct {
	name      string // property name on the wire
	goName    string // Go path, for errors
	path      []step
	typ       reflect.Type // field type with one pointer level removed
	ptr       bool         // the field is a pointer: nil means absent
	kind      fieldKind
	edm       EDMType // wire type; for kHook decided per value
	omitEmpty bool
	nameUnits int    // UTF-16 length of name, for the size formula
	prefix    []byte // `,"Name":` or `,"Name@odata.type":"Edm.X","Name":`
	// prot is the encrypt or sign tag option (see protect.go).
	prot protect.Mode
}

type role uint8

const (
	roleProperty role = iota
	rolePK
	roleRK
	roleETag
	roleTimestamp
	roleExtra
)

// structCodec is the cached encoding of one struct type.
type structCodec struct {
	typ       reflect.Type
	fields    []field
	byName    map[string]int // property name → index in fields
	pk, rk    *field
	etag, ts  *field
	extra     *field // map[string]any catching unknown properties
	needsAddr bool   // a hook or TextMarshaler has a pointer receiver
	// protected: a field is tagged encrypt or sign.
	protected bool
	// blobs maps the property names of fields tagged blob, which the
	// codec leaves out (patterns/large stores them), to their Go names.
	blobs map[string]string
}

var structCodecs sync.Map // reflect.Type → *structCodecResult

type structCodecResult struct {
	p   *structCodec
	err error
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	uuidType        = reflect.TypeFor[uuid.UUID]()
	marshalerType   = reflect.TypeFor[PropertyMarshaler]()
	unmarshalerType = reflect.TypeFor[PropertyUnmarshaler]()
	textMType       = reflect.TypeFor[encoding.TextMarshaler]()
	textUType       = reflect.TypeFor[encoding.TextUnmarshaler]()
	extraMapType    = reflect.TypeFor[map[string]any]()
)

// structCodecOf returns the cached codec of a struct type, building it once.
func structCodecOf(t reflect.Type) (*structCodec, error) {
	if r, ok := structCodecs.Load(t); ok {
		pr := r.(*structCodecResult)
		return pr.p, pr.err
	}
	p, err := buildStructCodec(t)
	r, _ := structCodecs.LoadOrStore(t, &structCodecResult{p, err})
	pr := r.(*structCodecResult)
	return pr.p, pr.err
}

// Tag options, the fixed grammar `table:"Name,opt,opt"`.
const (
	optPK        = "pk"
	optRK        = "rk"
	optETag      = "etag"
	optTimestamp = "timestamp"
	optOmitEmpty = "omitempty"
	optFlatten   = "flatten"
	optJSON      = "json"
	optExtra     = "extra"
	optEncrypt   = "encrypt"
	optSign      = "sign"
	// optBlob marks a value kept in blob storage by patterns/large, which
	// stores a reference under the field's property name; the codec
	// leaves the field out.
	optBlob = blobfield.Option
)

type tagInfo struct {
	name                             string
	skip                             bool
	pk, rk, etag, ts, omit, flat, js bool
	extra, blob                      bool
	prot                             protect.Mode
}

func parseTag(tag string) (tagInfo, string) {
	var ti tagInfo
	if tag == "-" {
		ti.skip = true
		return ti, ""
	}
	name, opts, _ := strings.Cut(tag, ",")
	ti.name = name
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		switch o {
		case optPK:
			ti.pk = true
		case optRK:
			ti.rk = true
		case optETag:
			ti.etag = true
		case optTimestamp:
			ti.ts = true
		case optOmitEmpty:
			ti.omit = true
		case optFlatten:
			ti.flat = true
		case optJSON:
			ti.js = true
		case optExtra:
			ti.extra = true
		case optEncrypt:
			ti.prot |= protect.Encrypt
		case optSign:
			ti.prot |= protect.Sign
		case optBlob:
			ti.blob = true
		case "":
		default:
			return ti, "unknown tag option " + strconv.Quote(o)
		}
	}
	return ti, ""
}

type codecBuilder struct {
	root *structCodec
	err  *TypeError
}

func buildStructCodec(t reflect.Type) (*structCodec, error) {
	if t.Kind() != reflect.Struct {
		return nil, &TypeError{Type: t, Reason: "not a struct"}
	}
	pl := &codecBuilder{root: &structCodec{typ: t, byName: map[string]int{}}}
	pl.walk(t, nil, "", "", false, 0)
	if pl.err != nil {
		return nil, pl.err
	}
	p := pl.root
	for i := range p.fields {
		f := &p.fields[i]
		if prev, dup := p.byName[f.name]; dup {
			return nil, &TypeError{Type: t, Field: f.goName, Reason: "property " + f.name + " is also used by field " + p.fields[prev].goName}
		}
		p.byName[f.name] = i
	}
	for name, goName := range p.blobs {
		if i, dup := p.byName[name]; dup {
			return nil, &TypeError{Type: t, Field: goName, Reason: "property " + name + " is also used by field " + p.fields[i].goName}
		}
	}
	return p, nil
}

func (pl *codecBuilder) fail(field, reason string) {
	if pl.err == nil {
		pl.err = &TypeError{Type: pl.root.typ, Field: field, Reason: reason}
	}
}

// walk adds the fields of struct type t, reached by path, to the codec.
// namePrefix is the flattened prefix ("Outer_"), goPrefix the Go path.
func (pl *codecBuilder) walk(t reflect.Type, path []step, namePrefix, goPrefix string, flattened bool, depth int) {
	if depth > 16 {
		pl.fail(goPrefix, "flattened structs nest deeper than 16 levels (a recursive type?)")
		return
	}
	for i := 0; i < t.NumField() && pl.err == nil; i++ {
		sf := t.Field(i)
		goName := goPrefix + sf.Name
		tag, hasTag := sf.Tag.Lookup("table")
		ti, bad := parseTag(tag)
		if bad != "" {
			pl.fail(goName, bad)
			return
		}
		if ti.skip {
			continue
		}
		if bad := ti.protectionConflict(); bad != "" {
			pl.fail(goName, bad)
			return
		}
		ft := sf.Type
		isPtr := ft.Kind() == reflect.Pointer
		if isPtr {
			ft = ft.Elem()
		}
		here := append(append([]step(nil), path...), step{index: i})

		// Embedded structs are promoted, as in encoding/json (the exported
		// fields of an unexported embedded struct too, but not through a
		// pointer that could not be allocated on decode). Unlike
		// encoding/json, two fields with one property name are an error
		// whatever their depth.
		if sf.Anonymous && !hasTag && ft.Kind() == reflect.Struct && !isSpecial(ft) {
			if !sf.IsExported() && isPtr {
				continue
			}
			here[len(here)-1].ptr = isPtr
			pl.walk(ft, here, namePrefix, goName+".", flattened, depth+1)
			continue
		}
		if !sf.IsExported() {
			continue
		}
		name := ti.name
		if name == "" {
			name = sf.Name
		}
		if ti.blob {
			pl.blob(ti, name, goName, path, flattened)
			continue
		}

		// Untagged fields named for a system property take its role, except
		// inside a flattened struct where they are ordinary properties.
		byName := !hasTag && !flattened
		switch {
		case ti.pk || ti.rk || (byName && (sf.Name == "PartitionKey" || sf.Name == "RowKey")):
			pl.key(sf, ti, goName, here, isPtr)
			continue
		case ti.etag || (byName && sf.Name == "ETag" && ft.Kind() == reflect.String):
			if ft.Kind() != reflect.String || isPtr {
				pl.fail(goName, "an etag field must be a string (or azcore.ETag)")
				return
			}
			pl.setRole(roleETag, field{name: "odata.etag", goName: goName, path: here, typ: ft, kind: kString}, goName)
			continue
		case ti.ts || (byName && sf.Name == "Timestamp" && ft == timeType):
			if ft != timeType || isPtr {
				pl.fail(goName, "a timestamp field must be a time.Time")
				return
			}
			pl.setRole(roleTimestamp, field{name: "Timestamp", goName: goName, path: here, typ: ft, kind: kTime, edm: EDMDateTime}, goName)
			continue
		case ti.extra:
			if sf.Type != extraMapType {
				pl.fail(goName, "an extra field must be a map[string]any")
				return
			}
			pl.setRole(roleExtra, field{name: "", goName: goName, path: here, typ: sf.Type}, goName)
			continue
		}

		if ti.flat {
			if ft.Kind() != reflect.Struct || isSpecial(ft) {
				pl.fail(goName, "flatten needs a struct or pointer to struct")
				return
			}
			here[len(here)-1].ptr = isPtr
			pl.walk(ft, here, namePrefix+name+"_", goName+".", true, depth+1)
			continue
		}
		name = namePrefix + name
		if reason := checkPropertyName(name); reason != "" {
			pl.fail(goName, "property name "+strconv.Quote(name)+": "+reason)
			return
		}
		f := field{name: name, goName: goName, path: here, typ: ft, ptr: isPtr, omitEmpty: ti.omit, nameUnits: keys.UTF16Len(name), prot: ti.prot}
		pl.root.protected = pl.root.protected || ti.prot != 0
		if ti.js {
			f.kind, f.edm = kJSON, EDMString
		} else if !pl.classify(&f, ft, goName) {
			return
		}
		f.prefix = fieldPrefix(name, f.edm, f.kind)
		pl.root.fields = append(pl.root.fields, f)
	}
}

// blob records a field tagged blob, which the codec leaves out.
func (pl *codecBuilder) blob(ti tagInfo, name, goName string, path []step, flattened bool) {
	switch {
	case ti.pk || ti.rk || ti.etag || ti.ts || ti.omit || ti.flat || ti.js || ti.extra || ti.prot != 0:
		pl.fail(goName, "the blob option cannot be combined with others")
	case len(path) > 0 || flattened:
		pl.fail(goName, "a blob field must be a field of the entity's own struct, not of an embedded or flattened one")
	case checkPropertyName(name) != "":
		pl.fail(goName, "property name "+strconv.Quote(name)+": "+checkPropertyName(name))
	case pl.root.blobs[name] != "":
		pl.fail(goName, "property "+name+" is also used by field "+pl.root.blobs[name])
	default:
		if pl.root.blobs == nil {
			pl.root.blobs = map[string]string{}
		}
		pl.root.blobs[name] = goName
	}
}

func (pl *codecBuilder) key(sf reflect.StructField, ti tagInfo, goName string, here []step, isPtr bool) {
	if sf.Type.Kind() != reflect.String || isPtr {
		pl.fail(goName, "a key field must be a string")
		return
	}
	if ti.pk && ti.rk {
		pl.fail(goName, "a field cannot be both pk and rk")
		return
	}
	r, want := rolePK, "PartitionKey"
	if ti.rk || (!ti.pk && sf.Name == "RowKey") {
		r, want = roleRK, "RowKey"
	}
	if ti.name != "" && ti.name != want {
		pl.fail(goName, "key field named "+strconv.Quote(ti.name)+": leave the name empty or use "+want)
		return
	}
	pl.setRole(r, field{name: want, goName: goName, path: here, typ: sf.Type, kind: kString, edm: EDMString}, goName)
}

func (pl *codecBuilder) setRole(r role, f field, goName string) {
	for _, st := range f.path[:len(f.path)-1] {
		if st.ptr {
			// A nil pointer would leave the entity without keys or ETag.
			pl.fail(goName, "a key, etag, timestamp or extra field cannot be reached through an embedded pointer: embed the struct by value")
			return
		}
	}
	p := pl.root
	var slot **field
	switch r {
	case rolePK:
		slot = &p.pk
	case roleRK:
		slot = &p.rk
	case roleETag:
		slot = &p.etag
	case roleTimestamp:
		slot = &p.ts
	case roleExtra:
		slot = &p.extra
	}
	if *slot != nil {
		pl.fail(goName, "a second "+f.name+" field (the first is "+(*slot).goName+")")
		return
	}
	fc := f
	*slot = &fc
}

// isSpecial reports struct types that map to one property.
func isSpecial(t reflect.Type) bool {
	return t == timeType || implementsHook(t) || implementsText(t)
}

func implementsHook(t reflect.Type) bool {
	return t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType)
}

func implementsText(t reflect.Type) bool {
	return t.Implements(textMType) || reflect.PointerTo(t).Implements(textMType)
}

// classify sets the kind and EDM type of a property field.
func (pl *codecBuilder) classify(f *field, t reflect.Type, goName string) bool {
	switch {
	case t == timeType:
		f.kind, f.edm = kTime, EDMDateTime
		return true
	case t == uuidType:
		f.kind, f.edm = kGUID, EDMGuid
		return true
	case implementsHook(t):
		if !reflect.PointerTo(t).Implements(unmarshalerType) {
			pl.fail(goName, "implements PropertyMarshaler but not PropertyUnmarshaler")
			return false
		}
		f.kind = kHook
		if !t.Implements(marshalerType) {
			pl.root.needsAddr = true
		}
		return true
	case implementsText(t):
		if !reflect.PointerTo(t).Implements(textUType) {
			pl.fail(goName, "implements encoding.TextMarshaler but not encoding.TextUnmarshaler")
			return false
		}
		f.kind, f.edm = kText, EDMString
		if !t.Implements(textMType) {
			pl.root.needsAddr = true
		}
		return true
	}
	switch t.Kind() {
	case reflect.String:
		f.kind, f.edm = kString, EDMString
	case reflect.Bool:
		f.kind, f.edm = kBool, EDMBoolean
	case reflect.Int8, reflect.Int16, reflect.Int32:
		f.kind, f.edm = kInt, EDMInt32
	case reflect.Int, reflect.Int64:
		f.kind, f.edm = kInt, EDMInt64
	case reflect.Uint8, reflect.Uint16:
		f.kind, f.edm = kUint, EDMInt32
	case reflect.Uint32, reflect.Uint, reflect.Uint64, reflect.Uintptr:
		f.kind, f.edm = kUint, EDMInt64
	case reflect.Float32, reflect.Float64:
		f.kind, f.edm = kFloat, EDMDouble
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			f.kind, f.edm = kBinary, EDMBinary
			return true
		}
		pl.fail(goName, "slices other than []byte have no EDM type: use the json option")
		return false
	case reflect.Struct:
		pl.fail(goName, "a struct field needs the flatten or json option")
		return false
	default:
		pl.fail(goName, t.String()+" has no EDM type: use the json option or a PropertyMarshaler")
		return false
	}
	return true
}

// fieldPrefix precomputes the bytes written before a field's value.
func fieldPrefix(name string, edm EDMType, kind fieldKind) []byte {
	var b []byte
	b = append(b, ',')
	if needsAnnotation(edm) && kind != kHook {
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `@odata.type":"`...)
		b = append(b, edm.String()...)
		b = append(b, `",`...)
	}
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, `":`...)
	return b
}

// needsAnnotation: String, Int32 and Boolean are what plain JSON infers; the
// others must be annotated. Double is always annotated so whole numbers stay
// Double instead of becoming Int32.
func needsAnnotation(t EDMType) bool {
	switch t {
	case EDMInt64, EDMDouble, EDMDateTime, EDMGuid, EDMBinary:
		return true
	}
	return false
}

// checkPropertyName applies the service's rule to a property name (see
// internal/ident: a C# identifier that is an XML name, at most 255
// characters; OData keywords are names like any other) and refuses the
// system properties. It returns the reason it fails, or "".
func checkPropertyName(name string) string {
	switch name {
	case "PartitionKey", "RowKey", "Timestamp":
		return "reserved for the system property"
	}
	return ident.Check(name)
}

// valueAs reads a field of type T through its address when it has one:
// boxing a 24-byte time.Time or a 16-byte uuid.UUID into an interface would
// allocate once per field.
func valueAs[T any](v reflect.Value) T {
	if v.CanAddr() {
		return *v.Addr().Interface().(*T)
	}
	return v.Interface().(T)
}

// setAs stores x into the addressable field v of type T without boxing it.
func setAs[T any](v reflect.Value, x T) {
	*v.Addr().Interface().(*T) = x
}
