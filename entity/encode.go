package entity

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity/internal/protect"
	"github.com/tablekit/tablekit/keys"
)

// Marshal returns the JSON body the Table service takes for v: a struct (or
// pointer to one) mapped by its `table` tags, or a DynamicEntity. Int64,
// Double, DateTime, Guid and Binary values carry their @odata.type
// annotation; ETag and Timestamp fields are never sent.
//
// Marshal validates every limit of the service first and returns a
// *ValidationError (errors.Is(err, ErrInvalid)) for the first one broken, or a
// *TypeError (errors.Is(err, ErrInvalidType)) for a type it cannot map.
func Marshal(v any) ([]byte, error) {
	bp := bufPool.Get().(*[]byte)
	b, err := appendEntity((*bp)[:0], v)
	var out []byte
	if err == nil {
		out = make([]byte, len(b))
		copy(out, b)
	}
	if cap(b) <= 1<<20 { // keep the pool from pinning huge buffers
		*bp = b
		bufPool.Put(bp)
	}
	return out, err
}

// Validate checks v against every limit Marshal enforces, without keeping the
// encoded body.
//
// A type with fields tagged encrypt or sign, which Marshal refuses (write
// it through package crypt), is checked too, as package crypt would store
// it: each value as the codec checks it (an error about an encrypted
// field withholds its value), an encrypted value counted at the size of
// its ciphertext; the metadata property crypt adds is checked when the
// entity is written.
func Validate(v any) error {
	bp := bufPool.Get().(*[]byte)
	b, err := appendEntity((*bp)[:0], v)
	if _, ok := err.(*TypeError); ok && isProtectedType(v) {
		b, err = encoder{b: (*bp)[:0], prot: sizingWriter{}}.entity(v)
	}
	clear(b) // it may hold values in clear
	if cap(b) <= 1<<20 {
		*bp = b
		bufPool.Put(bp)
	}
	return err
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// encoder carries the running totals the service's limits are stated in.
type encoder struct {
	b     []byte
	size  int // bytes by the service's size formula
	count int // user properties written
	// logical skips the limits of one stored entity (252 properties,
	// 1 MiB): the body describes a logical entity that may be stored as
	// several (ToDynamic, FromDynamic). Every property is still checked.
	logical bool
	// stored writes what a table holds without the limits of a write
	// (keys, property names, lengths, the DateTime range, the entity's
	// size): MarshalStored. The format is the same.
	stored bool
	// prot, when set, protects the properties (see protect.go).
	prot protect.Writer
}

// appendEntity appends the JSON body of v to dst.
func appendEntity(dst []byte, v any) ([]byte, error) {
	return encoder{b: dst}.entity(v)
}

// entity appends the JSON body of v to e's buffer and returns it.
func (e encoder) entity(v any) ([]byte, error) {
	dst := e.b
	switch d := v.(type) {
	case *DynamicEntity:
		if d == nil {
			return dst, &TypeError{Type: reflect.TypeOf(v), Reason: "nil pointer"}
		}
		return d.appendWith(e)
	case DynamicEntity:
		return d.appendWith(e)
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return dst, &TypeError{Type: reflect.TypeOf(v), Reason: "nil pointer"}
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return dst, &TypeError{Reason: "nil value"}
	}
	p, err := structCodecOf(rv.Type())
	if err != nil {
		return dst, err
	}
	return p.appendStructWith(e, rv)
}

func (p *structCodec) appendStruct(dst []byte, rv reflect.Value) ([]byte, error) {
	return p.appendStructWith(encoder{b: dst}, rv)
}

func (p *structCodec) appendStructWith(e encoder, rv reflect.Value) ([]byte, error) {
	dst := e.b
	if p.pk == nil || p.rk == nil {
		return dst, &TypeError{Type: p.typ, Reason: "no PartitionKey or RowKey field (name fields PartitionKey and RowKey, or tag them pk and rk)"}
	}
	if p.protected && e.prot == nil {
		return dst, p.errUnprotected()
	}
	if p.needsAddr && !rv.CanAddr() {
		c := reflect.New(rv.Type()).Elem()
		c.Set(rv)
		rv = c
	}
	pk := fieldValue(rv, p.pk.path).String()
	rk := fieldValue(rv, p.rk.path).String()
	if err := e.keys(pk, rk); err != nil {
		return dst, err
	}
	for i := range p.fields {
		f := &p.fields[i]
		fv := fieldValue(rv, f.path)
		if !fv.IsValid() { // behind a nil pointer to a flattened struct
			continue
		}
		if f.ptr {
			if fv.IsNil() {
				continue
			}
			fv = fv.Elem()
		}
		if f.omitEmpty && fv.IsZero() {
			continue
		}
		if e.prot != nil {
			if err := e.protectedField(f, fv); err != nil {
				return dst, err
			}
			continue
		}
		if err := e.field(f, fv); err != nil {
			return dst, err
		}
	}
	if p.extra != nil {
		if m := fieldValue(rv, p.extra.path); m.IsValid() && !m.IsNil() {
			extra := m.Interface().(map[string]any)
			for _, name := range sortedNames(extra) {
				if _, taken := p.byName[name]; taken {
					return dst, &ValidationError{Property: name, Rule: RuleDuplicateName, Value: "set both in the extra map and by a field"}
				}
				if err := e.property(name, extra[name]); err != nil {
					return dst, err
				}
			}
		}
	}
	return e.finishWith()
}

// fieldValue follows path from the root; the zero Value when a pointer to
// struct on the way is nil.
func fieldValue(v reflect.Value, path []step) reflect.Value {
	for _, s := range path {
		v = v.Field(s.index)
		if s.ptr {
			if v.IsNil() {
				return reflect.Value{}
			}
			v = v.Elem()
		}
	}
	return v
}

func (e *encoder) keys(pk, rk string) error {
	if !e.stored {
		if err := checkKey("PartitionKey", pk); err != nil {
			return err
		}
		if err := checkKey("RowKey", rk); err != nil {
			return err
		}
	}
	e.size = 4 + 2*(keys.UTF16Len(pk)+keys.UTF16Len(rk))
	e.b = append(e.b, `{"PartitionKey":`...)
	e.b = appendJSONString(e.b, pk)
	e.b = append(e.b, `,"RowKey":`...)
	e.b = appendJSONString(e.b, rk)
	return nil
}

func checkKey(which, k string) error {
	if err := keys.Validate(k); err != nil {
		return &ValidationError{Property: which, Rule: RuleKey, Value: shorten(k), Err: err}
	}
	return nil
}

// finishWith adds the protection scheme's properties, if any, and finishes.
func (e *encoder) finishWith() ([]byte, error) {
	if e.prot != nil {
		if err := e.finishProtected(); err != nil {
			return e.b, err
		}
	}
	return e.finish()
}

// finish closes the object and applies the whole-entity limits.
func (e *encoder) finish() ([]byte, error) {
	if e.logical || e.stored {
		return append(e.b, '}'), nil
	}
	if e.count > MaxUserProperties {
		return e.b, &ValidationError{Rule: RulePropertyCount, Limit: strconv.Itoa(MaxUserProperties) + " user properties", Value: strconv.Itoa(e.count)}
	}
	if e.size > MaxEntitySize {
		return e.b, &ValidationError{Rule: RuleEntitySize, Limit: "1048576 bytes by the service's size formula", Value: strconv.Itoa(e.size) + " bytes"}
	}
	e.b = append(e.b, '}')
	return e.b, nil
}

// account adds one property to the size formula: 8 + 2·len(name) + value size.
func (e *encoder) account(nameUnits, valueSize int) {
	e.count++
	e.size += 8 + 2*nameUnits + valueSize
}

// field encodes one struct field through its precomputed prefix.
func (e *encoder) field(f *field, v reflect.Value) error {
	switch f.kind {
	case kString:
		return e.str(f, f.prefix, v.String())
	case kBool:
		e.b = append(e.b, f.prefix...)
		e.b = strconv.AppendBool(e.b, v.Bool())
		e.account(f.nameUnits, 1)
	case kInt:
		e.integer(f.edm, f.nameUnits, f.prefix, v.Int())
	case kUint:
		n := v.Uint()
		if n > math.MaxInt64 {
			return &ValidationError{Property: f.name, Rule: RuleIntegerRange, Limit: "Int64 at most 9223372036854775807", Value: strconv.FormatUint(n, 10)}
		}
		e.integer(f.edm, f.nameUnits, f.prefix, int64(n))
	case kFloat:
		return e.double(f.name, f.nameUnits, f.prefix, v.Float(), v.Kind() == reflect.Float32)
	case kTime:
		t := valueAs[time.Time](v)
		if t.IsZero() {
			return zeroTimeError(f.name)
		}
		return e.time(f.name, f.nameUnits, f.prefix, t)
	case kGUID:
		e.b = append(e.b, f.prefix...)
		e.b = appendGUID(e.b, valueAs[uuid.UUID](v))
		e.account(f.nameUnits, 16)
	case kBinary:
		return e.binary(f.name, f.nameUnits, f.prefix, v.Bytes())
	case kText:
		tm, _ := asInterface(v, textMType).(interface{ MarshalText() ([]byte, error) })
		text, err := tm.MarshalText()
		if err != nil {
			return &ValidationError{Property: f.name, Rule: RulePropertyType, Value: "MarshalText failed", Err: err}
		}
		return e.str(f, f.prefix, string(text))
	case kJSON:
		doc, err := json.Marshal(v.Interface())
		if err != nil {
			return &ValidationError{Property: f.name, Rule: RulePropertyType, Value: "json encoding failed", Err: err}
		}
		return e.str(f, f.prefix, string(doc))
	case kHook:
		m, _ := asInterface(v, marshalerType).(PropertyMarshaler)
		val, err := m.MarshalProperty()
		if err != nil {
			return &ValidationError{Property: f.name, Rule: RulePropertyType, Value: "MarshalProperty failed", Err: err}
		}
		return e.dynamic(f.name, val)
	}
	return nil
}

// integer writes an Int32 as a number, an Int64 as an annotated string
// (JSON numbers lose precision beyond 2^53). The field's type guarantees an
// Int32 value fits.
func (e *encoder) integer(edm EDMType, nameUnits int, prefix []byte, n int64) {
	e.b = append(e.b, prefix...)
	if edm == EDMInt32 {
		e.b = strconv.AppendInt(e.b, n, 10)
		e.account(nameUnits, 4)
		return
	}
	e.b = append(e.b, '"')
	e.b = strconv.AppendInt(e.b, n, 10)
	e.b = append(e.b, '"')
	e.account(nameUnits, 8)
}

// asInterface returns v (or its address, for pointer receivers) as an interface value.
func asInterface(v reflect.Value, iface reflect.Type) any {
	if v.Type().Implements(iface) {
		return v.Interface()
	}
	return v.Addr().Interface()
}

func (e *encoder) str(f *field, prefix []byte, s string) error {
	units, ok := checkString(s)
	if !ok {
		return &ValidationError{Property: f.name, Rule: RuleUTF8, Value: shorten(s)}
	}
	if units > MaxStringUnits && !e.stored {
		return &ValidationError{Property: f.name, Rule: RuleStringLength, Limit: "32768 UTF-16 code units", Value: strconv.Itoa(units) + " code units"}
	}
	e.b = append(e.b, prefix...)
	e.b = appendJSONString(e.b, s)
	e.account(f.nameUnits, 2*units+4)
	return nil
}

// double writes a Double. JSON has no number for NaN and the infinities:
// they travel as the strings the service and the other SDKs use ("NaN",
// "Infinity", "-Infinity"), which the Edm.Double annotation every Double
// carries makes unambiguous. name is unused: every float64 is a valid Double.
func (e *encoder) double(_ string, nameUnits int, prefix []byte, x float64, is32 bool) error {
	e.b = append(e.b, prefix...)
	e.account(nameUnits, 8)
	switch {
	case math.IsNaN(x):
		e.b = append(e.b, `"NaN"`...)
		return nil
	case math.IsInf(x, 1):
		e.b = append(e.b, `"Infinity"`...)
		return nil
	case math.IsInf(x, -1):
		e.b = append(e.b, `"-Infinity"`...)
		return nil
	}
	bits := 64
	if is32 {
		bits = 32 // shortest form that reads back as the same float32
	}
	e.b = appendDouble(e.b, x, bits)
	return nil
}

// appendDouble writes a JSON number that always reads as a Double (2 is
// written 2.0), in the shortest form that round-trips.
func appendDouble(b []byte, x float64, bits int) []byte {
	start := len(b)
	b = strconv.AppendFloat(b, x, 'g', -1, bits)
	for _, c := range b[start:] {
		if c == '.' || c == 'e' || c == 'E' {
			return b
		}
	}
	return append(b, '.', '0')
}

// errZeroTime is why a field holding the zero time.Time is refused, and
// how to say "no value" instead.
var errZeroTime = errors.New("the zero time.Time is before the service's first DateTime: add omitempty or use *time.Time")

func zeroTimeError(name string) error {
	return &ValidationError{Property: name, Rule: RuleDateTimeRange, Limit: "1601-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z", Value: "0001-01-01T00:00:00Z", Err: errZeroTime}
}

func (e *encoder) time(name string, nameUnits int, prefix []byte, t time.Time) error {
	t = t.UTC().Truncate(100 * time.Nanosecond) // the service keeps 100 ns ticks
	if (t.Before(minDateTime) || t.After(maxDateTime)) && !e.stored {
		return &ValidationError{Property: name, Rule: RuleDateTimeRange, Limit: "1601-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z", Value: t.Format(time.RFC3339Nano)}
	}
	e.b = append(e.b, prefix...)
	e.b = append(e.b, '"')
	e.b = t.AppendFormat(e.b, wireTimeLayout)
	e.b = append(e.b, '"')
	e.account(nameUnits, 8)
	return nil
}

func (e *encoder) binary(name string, nameUnits int, prefix []byte, p []byte) error {
	if len(p) > MaxBinaryBytes && !e.stored {
		return &ValidationError{Property: name, Rule: RuleBinaryLength, Limit: "65536 bytes", Value: strconv.Itoa(len(p)) + " bytes"}
	}
	e.b = append(e.b, prefix...)
	e.b = append(e.b, '"')
	e.b = base64.StdEncoding.AppendEncode(e.b, p)
	e.b = append(e.b, '"')
	e.account(nameUnits, len(p)+4)
	return nil
}

func appendGUID(b []byte, g uuid.UUID) []byte {
	var tmp [38]byte
	tmp[0] = '"'
	hexEncodeUUID(tmp[1:37], g)
	tmp[37] = '"'
	return append(b, tmp[:]...)
}

// hexEncodeUUID writes the canonical 8-4-4-4-12 lower-case form.
func hexEncodeUUID(dst []byte, g uuid.UUID) {
	const hexDigits = "0123456789abcdef"
	j := 0
	for i, c := range g {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst[j] = '-'
			j++
		}
		dst[j] = hexDigits[c>>4]
		dst[j+1] = hexDigits[c&0xF]
		j += 2
	}
}

// dynamic encodes a value of one of the canonical Go types (or a Go integer
// or float type that maps to exactly one EDM type) under name.
func (e *encoder) dynamic(name string, val any) error {
	if val == nil {
		return nil // absent, as a nil pointer field is
	}
	if reason := checkPropertyName(name); reason != "" && !e.stored {
		rule := RulePropertyName
		if name == "PartitionKey" || name == "RowKey" || name == "Timestamp" {
			rule = RuleReservedName
		}
		return &ValidationError{Property: name, Rule: rule, Limit: "a C# identifier that is an XML name, at most 255 characters", Value: reason}
	}
	units := keys.UTF16Len(name)
	prefix := func(t EDMType) []byte { return fieldPrefix(name, t, 0) }
	switch x := val.(type) {
	case string:
		return e.str(&field{name: name, nameUnits: units}, prefix(EDMString), x)
	case bool:
		e.b = append(e.b, prefix(EDMBoolean)...)
		e.b = strconv.AppendBool(e.b, x)
		e.account(units, 1)
	case int32, int8, int16, uint8, uint16:
		e.integer(EDMInt32, units, prefix(EDMInt32), reflect.ValueOf(x).Convert(reflect.TypeFor[int64]()).Int())
	case int64, int, uint32:
		e.integer(EDMInt64, units, prefix(EDMInt64), reflect.ValueOf(x).Convert(reflect.TypeFor[int64]()).Int())
	case uint, uint64:
		n := reflect.ValueOf(x).Uint()
		if n > math.MaxInt64 {
			return &ValidationError{Property: name, Rule: RuleIntegerRange, Limit: "Int64 at most 9223372036854775807", Value: strconv.FormatUint(n, 10)}
		}
		e.integer(EDMInt64, units, prefix(EDMInt64), int64(n))
	case float64:
		return e.double(name, units, prefix(EDMDouble), x, false)
	case float32:
		return e.double(name, units, prefix(EDMDouble), float64(x), true)
	case time.Time:
		return e.time(name, units, prefix(EDMDateTime), x)
	case uuid.UUID:
		e.b = append(e.b, prefix(EDMGuid)...)
		e.b = appendGUID(e.b, x)
		e.account(units, 16)
	case []byte:
		return e.binary(name, units, prefix(EDMBinary), x)
	default:
		return &ValidationError{Property: name, Rule: RulePropertyType, Limit: "string, int32, int64, float64, bool, time.Time, uuid.UUID or []byte", Value: fmt.Sprintf("%T", val)}
	}
	return nil
}

// checkString reports the UTF-16 length of s and whether s is valid UTF-8,
// in one pass: every String property goes through it, and utf8.ValidString
// followed by keys.UTF16Len measured 30% slower on Marshal.
func checkString(s string) (units int, ok bool) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			units++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return units, false
		}
		if r >= 0x10000 {
			units += 2
		} else {
			units++
		}
		i += size
	}
	return units, true
}

// appendJSONString appends s as a JSON string. s is valid UTF-8 (checked by
// the caller); only the characters JSON requires are escaped, and U+2028
// and U+2029, as encoding/json does: Azurite's parser of a $batch body
// takes them for line ends and refuses the operation.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9) {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[s[i+2]&0xF])
			i += 2
			start = i + 1
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
