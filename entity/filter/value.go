package filter

import (
	"encoding"
	"encoding/hex"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Value is a typed literal: a Go value paired with the EDM type it is
// compared as. Build one with String, Int32, Int64, Double, Bool, Time, GUID,
// Binary or ValueOf; the zero Value is invalid. A Value whose Go value has no
// literal (NaN, invalid UTF-8, ...) carries the error and reports it when the
// expression is built.
type Value struct {
	edm string // "Edm.String", ...; "" for the zero Value
	lit string // the OData literal, escaped and ready to embed
	raw string // for Edm.String: the unescaped string (query planning)
	err string // why there is no literal
}

// EDMType returns the wire name of the value's type, for example "Edm.Int64";
// "" for the zero Value.
func (v Value) EDMType() string { return v.edm }

// Literal returns the value as it appears in a filter, or an error matching
// ErrInvalidFilter. For example String("O'Brien") and Int64(123) give
//
//	'O''Brien'
//	123L
func (v Value) Literal() (string, error) {
	if err := v.check(""); err != nil {
		return "", err
	}
	return v.lit, nil
}

func (v Value) check(prop string) *Error {
	if v.err != "" {
		return invalid(prop, v.err)
	}
	if v.edm == "" {
		return invalid(prop, "zero Value (use a constructor such as filter.String)")
	}
	return nil
}

func bad(edm, reason string) Value { return Value{edm: edm, err: reason} }

// String returns an Edm.String literal: the text between single quotes, each
// quote doubled, so O'Brien becomes
//
//	'O''Brien'
//
// Every other character is kept as is (the SDK URL-encodes the whole
// filter). s must be valid UTF-8.
func String(s string) Value {
	if !utf8.ValidString(s) {
		return bad("Edm.String", "string value is not valid UTF-8")
	}
	return Value{edm: "Edm.String", lit: quote(s), raw: s}
}

func quote(s string) string {
	n := strings.Count(s, "'")
	var b strings.Builder
	b.Grow(len(s) + n + 2)
	b.WriteByte('\'')
	for {
		i := strings.IndexByte(s, '\'')
		if i < 0 {
			break
		}
		b.WriteString(s[:i+1])
		b.WriteByte('\'')
		s = s[i+1:]
	}
	b.WriteString(s)
	b.WriteByte('\'')
	return b.String()
}

// Int32 returns an Edm.Int32 literal: plain decimal digits, for example -5.
func Int32(v int32) Value {
	return Value{edm: "Edm.Int32", lit: strconv.FormatInt(int64(v), 10)}
}

// Int64 returns an Edm.Int64 literal: decimal digits and an L suffix, for
// example 123L. Without the L the service reads an Int32 and never matches an
// Int64 property.
func Int64(v int64) Value {
	return Value{edm: "Edm.Int64", lit: strconv.FormatInt(v, 10) + "L"}
}

// Double returns an Edm.Double literal in plain decimal notation that always
// has a decimal point, so whole numbers read as Double: 2 renders as 2.0,
// 0.1 as 0.1, 1e21 as 1000000000000000000000.0. The shortest digits that
// round-trip are used. No exponent is ever written: the OData v3 grammar
// allows an exponent only with exactly 16 fractional digits, and Azurite's
// tokenizer accepts no exponent at all. NaN and ±Inf have no literal the
// service accepts; they make the expression invalid.
func Double(v float64) Value { return double(v, 64) }

// double formats v with the shortest digits that read back as the same
// float of the given size (32 for a float32, as the entity codec writes it,
// so float32(0.1) is 0.1 in the filter as in the stored entity).
func double(v float64, bits int) Value {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return bad("Edm.Double", "NaN and infinite doubles have no filter literal")
	}
	s := strconv.FormatFloat(v, 'f', -1, bits)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return Value{edm: "Edm.Double", lit: s}
}

// Bool returns an Edm.Boolean literal: true or false.
func Bool(v bool) Value {
	if v {
		return Value{edm: "Edm.Boolean", lit: "true"}
	}
	return Value{edm: "Edm.Boolean", lit: "false"}
}

// dateTimeLayout is the form tablekit writes DateTime values in: UTC and
// always seven fractional digits (100 ns, the service's precision; finer
// digits are truncated, as the service truncates on write).
const dateTimeLayout = "2006-01-02T15:04:05.0000000Z"

// Time returns an Edm.DateTime literal, for example
// datetime'2024-01-02T03:04:05.1234567Z'. The time is converted to UTC.
// Years outside 0001–9999 have no literal and make the expression invalid.
// (The service stores nothing before 1601-01-01; an earlier bound in a
// filter is valid and simply matches every stored value.)
func Time(t time.Time) Value {
	t = t.UTC()
	if y := t.Year(); y < 1 || y > 9999 {
		return bad("Edm.DateTime", "DateTime year "+strconv.Itoa(y)+" is outside 0001-9999")
	}
	return Value{edm: "Edm.DateTime", lit: "datetime'" + t.Format(dateTimeLayout) + "'"}
}

// GUID returns an Edm.Guid literal, for example
// guid'6f9619ff-8b86-d011-b42d-00c04fc964ff' (lower case, as uuid.UUID
// formats it).
func GUID(u uuid.UUID) Value {
	return Value{edm: "Edm.Guid", lit: "guid'" + u.String() + "'"}
}

// Binary returns an Edm.Binary literal: X and the bytes in lower-case hex
// between quotes, for example X'0aff'. An empty slice renders as an empty
// X literal (X and two quotes); the OData grammar asks for at least one
// byte, Azurite accepts it.
func Binary(b []byte) Value {
	return Value{edm: "Edm.Binary", lit: "X'" + hex.EncodeToString(b) + "'"}
}

var (
	timeType  = reflect.TypeFor[time.Time]()
	uuidType  = reflect.TypeFor[uuid.UUID]()
	valueType = reflect.TypeFor[Value]()
	textType  = reflect.TypeFor[encoding.TextMarshaler]()
)

// ValueOf maps a Go value to its typed literal, with the same mapping the
// entity codec uses to store it, so a filter on a field compares as the
// field's stored type:
//
//	Value                                    itself
//	string                                   Edm.String
//	bool                                     Edm.Boolean
//	int8, int16, int32, uint8, uint16        Edm.Int32
//	int, int64, uint32, uint, uint64         Edm.Int64 (123L); uint/uint64 above MaxInt64 are invalid
//	float32, float64                         Edm.Double (a float32 in its own shortest digits: float32(0.1) is 0.1)
//	time.Time                                Edm.DateTime
//	uuid.UUID                                Edm.Guid
//	[]byte                                   Edm.Binary
//	encoding.TextMarshaler                   Edm.String of its text
//	pointer                                  the value it points to; nil is invalid (there is no null literal)
//
// Named types (type Celsius float64) map by their underlying kind unless they
// implement encoding.TextMarshaler. Any other type (maps, structs, arrays,
// []string, ...) makes the expression invalid.
func ValueOf(v any) Value {
	switch x := v.(type) {
	case Value:
		return x
	case string:
		return String(x)
	case bool:
		return Bool(x)
	case int:
		return Int64(int64(x))
	case int64:
		return Int64(x)
	case int32:
		return Int32(x)
	case float64:
		return Double(x)
	case time.Time:
		return Time(x)
	case uuid.UUID:
		return GUID(x)
	case []byte:
		return Binary(x)
	case nil:
		return bad("", "nil value: the Table service has no null literal")
	}
	return valueOfReflect(reflect.ValueOf(v))
}

func valueOfReflect(rv reflect.Value) Value {
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return bad("", "nil pointer: the Table service has no null literal")
		}
		rv = rv.Elem()
	}
	t := rv.Type()
	switch t {
	case valueType:
		return rv.Interface().(Value)
	case timeType:
		return Time(rv.Interface().(time.Time))
	case uuidType:
		return GUID(rv.Interface().(uuid.UUID))
	}
	if t.Implements(textType) || reflect.PointerTo(t).Implements(textType) {
		var m encoding.TextMarshaler
		if t.Implements(textType) {
			m = rv.Interface().(encoding.TextMarshaler)
		} else if rv.CanAddr() {
			m = rv.Addr().Interface().(encoding.TextMarshaler)
		} else {
			p := reflect.New(t)
			p.Elem().Set(rv)
			m = p.Interface().(encoding.TextMarshaler)
		}
		text, err := m.MarshalText()
		if err != nil {
			return bad("Edm.String", "MarshalText failed: "+err.Error())
		}
		return String(string(text))
	}
	switch t.Kind() {
	case reflect.String:
		return String(rv.String())
	case reflect.Bool:
		return Bool(rv.Bool())
	case reflect.Int8, reflect.Int16, reflect.Int32:
		return Int32(int32(rv.Int()))
	case reflect.Int, reflect.Int64:
		return Int64(rv.Int())
	case reflect.Uint8, reflect.Uint16:
		return Int32(int32(rv.Uint()))
	case reflect.Uint32, reflect.Uint, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return bad("Edm.Int64", "unsigned value "+strconv.FormatUint(u, 10)+" does not fit Edm.Int64")
		}
		return Int64(int64(u))
	case reflect.Float32:
		return double(rv.Float(), 32)
	case reflect.Float64:
		return Double(rv.Float())
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return Binary(rv.Bytes())
		}
	}
	return bad("", "Go type "+t.String()+" has no EDM literal")
}
