package entity

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity/internal/protect"
)

// Unmarshal reads an entity body, as the service returns it in full, minimal
// or no metadata, into v: a pointer to a struct mapped by its `table` tags,
// or a *DynamicEntity.
//
// The ETag field is filled from odata.etag and the Timestamp field from
// Timestamp. Unknown properties are ignored unless the struct has a field
// tagged `extra`. Properties absent from the body leave their fields
// untouched, as encoding/json does.
//
// Each value is read as the EDM type it is stored as whenever the body says
// it, and a field whose Go type does not hold that EDM type is a
// *DecodeError naming the property, the stored type and the Go type — never
// a conversion that a later write would store under another type. A body
// says every value's type when it is a full or minimal metadata response or
// carries any @odata.type annotation (odata.* members or annotations): there
// the service's own rule applies — an annotation names the type; an
// unannotated string is an Edm.String; an unannotated number is an Edm.Int32
// when it is an integer literal in Int32 range and an Edm.Double otherwise;
// true and false are Edm.Boolean. In any body, numbers and booleans are
// typed that way, since Int64, DateTime, Guid and Binary always travel as
// strings. A Double is never silently another number than the one written:
// an integer literal read as a Double (9223372036854775807, unannotated or
// annotated Edm.Double) must be one a Double holds exactly, or the shortest
// spelling of that Double (9223372036854776000, as JavaScript writes 2^63);
// any other is a *DecodeError saying so — give a 64-bit integer its
// Edm.Int64 annotation and a decimal string (TestUnannotatedIntegers). A
// number with a fraction or an exponent is a Double as written, rounded to
// the nearest as any JSON reader does.
//
// Only a string in a body with neither (no metadata, where Int64, DateTime,
// Guid and Binary values are strings too) has no stored type; the Go field's
// type then decides how it is parsed. That is the one place the metadata
// format changes what a field accepts: a no-metadata string is read into an
// integer, time.Time, uuid.UUID or []byte field when it parses as one, and
// into a string field whatever its stored type; with metadata it must be
// stored as that type. Table[T] reads no metadata for a T with no ETag
// field, no `extra` map and no PropertyUnmarshaler (smaller bodies, faster
// reads), so such a T gets the no-metadata rule on every read; give it an
// ETag field to have every read checked against the stored types.
//
// The Go types hold these EDM types: string, encoding.TextUnmarshaler and
// `json` fields an Edm.String; bool an Edm.Boolean; integer fields an
// Edm.Int32 or Edm.Int64 that fits them; float fields an Edm.Double or an
// Edm.Int32 (the integer other SDKs write for a whole-number double, and the
// service's "NaN", "Infinity" and "-Infinity" strings); time.Time an
// Edm.DateTime; uuid.UUID an Edm.Guid; []byte an Edm.Binary. A
// PropertyUnmarshaler receives the stored value as its canonical Go type.
// A value that does not fit its Go field (an Int64 into an int32, a negative
// number into a uint) is a *DecodeError, never a silent wrap.
func Unmarshal(data []byte, v any) error {
	if d, ok := v.(*DynamicEntity); ok {
		if d == nil {
			return &TypeError{Type: reflect.TypeOf(v), Reason: "nil pointer"}
		}
		return d.decode(data)
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &TypeError{Type: reflect.TypeOf(v), Reason: "Unmarshal needs a non-nil pointer to a struct"}
	}
	rv = rv.Elem()
	p, err := structCodecOf(rv.Type())
	if err != nil {
		return err
	}
	return p.decode(data, rv)
}

var propsPool = sync.Pool{New: func() any { return &propSource{props: make([]rawProp, 0, 32)} }}

// scanProps splits data into properties and annotations, handed to fn as
// src.props. src is pooled: it also serves as the protect.Props of a
// protected read (see openEntity), without an allocation per entity.
func scanProps(data []byte, fn func(src *propSource) error) error {
	src := propsPool.Get().(*propSource)
	sc := scanAt(data, 0)
	props, err := sc.Object(src.props[:0])
	err = syntaxErr(err)
	if err == nil {
		err = unescapeNames(props)
	}
	if err == nil {
		src.props, src.apart = props, false
		err = fn(src)
	}
	clear(props) // drop references to data before pooling
	src.props = props[:0]
	propsPool.Put(src)
	return err
}

// unescapeNames replaces each name written with JSON escapes by its
// text: "N\u0040odata.type" is the annotation "N@odata.type", and is
// matched as one. Bodies of the service and the SDKs have no escaped names,
// so this costs nothing on them.
func unescapeNames(props []rawProp) error {
	for i := range props {
		if !props[i].NameEsc {
			continue
		}
		s, ok := unescape(props[i].Name)
		if !ok {
			return &DecodeError{Reason: "malformed property name"}
		}
		props[i].Name, props[i].NameEsc = []byte(s), false
	}
	return nil
}

const annotationSuffix = "@odata.type"

// annotationOf finds the @odata.type annotation of props[i], whose name is
// name, written before or after the value (SDKs do both). The neighbours
// are looked at first: that is where the service and the SDKs put it. The
// others only when apart (see annotationsApart).
func annotationOf(props []rawProp, i int, name []byte, apart bool) EDMType {
	if i > 0 && isAnnotationOf(&props[i-1], name) {
		return parseEDMType(props[i-1].Val)
	}
	if i+1 < len(props) && isAnnotationOf(&props[i+1], name) {
		return parseEDMType(props[i+1].Val)
	}
	if !apart {
		return 0
	}
	for j := range props {
		if isAnnotationOf(&props[j], name) {
			return parseEDMType(props[j].Val)
		}
	}
	return 0
}

// annotationsApart reports whether some annotation of props may not be
// next to its property, so that annotationOf must search them all. Without
// this a body of n properties, most of them unannotated (String, Int32,
// Boolean), costs n² comparisons: 60,000 for 252 properties, millions for
// the logical entities of FromDynamic.
func annotationsApart(props []rawProp) bool {
	for j := range props {
		an := props[j].Name
		if !bytes.HasSuffix(an, []byte(annotationSuffix)) {
			continue
		}
		base := an[:len(an)-len(annotationSuffix)]
		next := (j > 0 && bytes.Equal(props[j-1].Name, base)) || (j+1 < len(props) && bytes.Equal(props[j+1].Name, base))
		if !next {
			return true
		}
	}
	return false
}

func isAnnotationOf(p *rawProp, name []byte) bool {
	an := p.Name
	return len(an) == len(name)+len(annotationSuffix) && p.Kind == tokString &&
		string(an[len(name):]) == annotationSuffix && bytes.Equal(an[:len(name)], name)
}

func isAnnotation(name []byte) bool {
	return bytes.IndexByte(name, '@') >= 0
}

// typedBody reports whether a body says the stored type of every value: a
// full or minimal metadata response (odata.* members) or a body with
// @odata.type annotations. Only no-metadata bodies (and hand-written ones
// with neither) leave the type of a string unsaid.
func typedBody(props []rawProp) bool {
	for i := range props {
		if n := props[i].Name; isAnnotation(n) || bytes.HasPrefix(n, []byte("odata.")) {
			return true
		}
	}
	return false
}

// storedType is the EDM type a value is stored as, as far as the body says:
// its annotation; else for a number or a boolean its form; else, for a
// string, Edm.String in a typed body and 0 (unsaid) in a no-metadata body.
func storedType(at EDMType, typed bool, pr *rawProp) EDMType {
	if at != 0 {
		return at
	}
	switch pr.Kind {
	case tokString:
		if typed {
			return EDMString
		}
	case tokNumber:
		return numberType(pr.Val)
	case tokTrue, tokFalse:
		return EDMBoolean
	}
	return 0
}

// numberType is the EDM type of an unannotated JSON number: Int64 travels
// as a string, so a bare number is an Int32 when it is an integer literal in
// Int32 range, and a Double otherwise (2.0, 1e3, 5000000000).
func numberType(b []byte) EDMType {
	if _, ok := int32Literal(b); ok {
		return EDMInt32
	}
	return EDMDouble
}

// int32Literal parses an optionally negative decimal integer without sign
// or exponent tricks, in Int32 range.
func int32Literal(b []byte) (int32, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, false
	}
	return int32(n), true
}

func (p *structCodec) decode(data []byte, rv reflect.Value) error { return p.decodeWith(data, rv, nil) }

// decodeWith decodes through a protection scheme s, when set (see
// protect.go).
func (p *structCodec) decodeWith(data []byte, rv reflect.Value, s protect.Scheme) error {
	return scanProps(data, func(src *propSource) error {
		props := src.props
		typed := typedBody(props)
		apart := typed && annotationsApart(props)
		var r protect.Reader
		switch {
		case s != nil:
			var err error
			src.apart = apart
			if r, err = openEntity(src, s); err != nil {
				return err
			}
			defer r.Close()
		case p.protected:
			return p.errUnprotected()
		}
		var opened rawProp
		for i := range props {
			pr := &props[i]
			if pr.Kind == tokNull || pr.Kind == tokNested || isAnnotation(pr.Name) {
				continue
			}
			name := pr.Name // unescaped by scanProps
			var at EDMType
			if typed {
				at = annotationOf(props, i, name, apart)
			}
			// The system properties have fixed types: they are read as
			// their fields say (Azurite leaves Timestamp unannotated in
			// minimal metadata).
			var f *field
			switch string(name) {
			case "odata.etag":
				f = p.etag
			case "PartitionKey":
				f = p.pk
			case "RowKey":
				f = p.rk
			case "Timestamp":
				f = p.ts
			default:
				idx, ok := p.byName[string(name)]
				if r != nil && (ok || p.extra != nil) {
					var tagged protect.Mode
					if ok {
						tagged = p.fields[idx].prot
					}
					var skip bool
					var err error
					if pr, at, skip, err = openProp(r, name, tagged, pr, at, &opened); err != nil {
						return err
					}
					if skip {
						continue
					}
				}
				if ok {
					f = &p.fields[idx]
					at = storedType(at, typed, pr)
				} else if p.extra != nil && !bytes.HasPrefix(name, []byte("odata.")) {
					if err := p.decodeExtra(rv, string(name), storedType(at, typed, pr), pr); err != nil {
						if pr == &opened {
							return withheld(err)
						}
						return err
					}
					continue
				}
			}
			if f == nil {
				continue
			}
			fv := fieldValueAlloc(rv, f.path)
			if err := decodeField(f, fv, at, pr); err != nil {
				if pr == &opened {
					return withheld(err) // a decrypted value stays out of errors
				}
				return err
			}
		}
		return nil
	})
}

func (p *structCodec) decodeExtra(rv reflect.Value, name string, at EDMType, pr *rawProp) error {
	val, err := dynamicValue(name, at, pr)
	if err != nil {
		return err
	}
	m := fieldValueAlloc(rv, p.extra.path)
	if m.IsNil() {
		m.Set(reflect.MakeMap(extraMapType))
	}
	m.SetMapIndex(reflect.ValueOf(name), reflect.ValueOf(val))
	return nil
}

// fieldValueAlloc follows path from the root, allocating nil pointers to
// flattened or embedded structs on the way.
func fieldValueAlloc(v reflect.Value, path []step) reflect.Value {
	for _, s := range path {
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

func decodeField(f *field, fv reflect.Value, at EDMType, pr *rawProp) error {
	if f.ptr {
		nv := reflect.New(f.typ)
		if err := decodeValue(f, nv.Elem(), at, pr); err != nil {
			return err
		}
		fv.Set(nv)
		return nil
	}
	return decodeValue(f, fv, at, pr)
}

// mismatch reports a value of a type f holds that does not parse or fit.
func mismatch(f *field, st EDMType, what string, pr *rawProp) error {
	return &DecodeError{Property: f.name, Stored: st, Type: f.typ, Reason: "cannot store " + what + " " + shorten(string(pr.Val)) + " in " + f.typ.String() + " field " + f.goName}
}

// compatible reports whether a value stored as EDM type st may be read into
// a field of kind k. A mismatch is an error rather than a conversion: the
// next write would store the property under another type, and filters typed
// for the old one would stop matching. The widenings allowed are lossless
// and what other SDKs write: an Int32 into an integer or float field (the
// JavaScript SDK writes every whole number, 2.0 included, as an Int32), an
// Int64 into a narrower integer that it fits. st 0 (a string whose type the
// body does not say) leaves the field's type to decide.
func compatible(k fieldKind, st EDMType) bool {
	if st == 0 {
		return true
	}
	switch k {
	case kString, kText, kJSON:
		return st == EDMString
	case kBool:
		return st == EDMBoolean
	case kInt, kUint:
		return st == EDMInt32 || st == EDMInt64
	case kFloat:
		return st == EDMDouble || st == EDMInt32
	case kTime:
		return st == EDMDateTime
	case kGUID:
		return st == EDMGuid
	case kBinary:
		return st == EDMBinary
	}
	return true // kHook: the hook receives the stored type
}

// decodeValue reads one value into fv. st is the stored EDM type (see
// storedType; for the system fields, their annotation).
func decodeValue(f *field, fv reflect.Value, st EDMType, pr *rawProp) error {
	if !compatible(f.kind, st) {
		return &DecodeError{Property: f.name, Stored: st, Type: f.typ, Reason: "stored as " + st.String() + ", which " + f.typ.String() + " field " + f.goName + " does not hold"}
	}
	switch f.kind {
	case kString:
		if pr.Kind != tokString {
			return mismatch(f, st, "non-string", pr)
		}
		s, ok := stringOf(pr.Val, pr.ValEsc)
		if !ok {
			return mismatch(f, st, "malformed string", pr)
		}
		fv.SetString(s)
	case kBool:
		switch pr.Kind {
		case tokTrue:
			fv.SetBool(true)
		case tokFalse:
			fv.SetBool(false)
		default:
			return mismatch(f, st, "non-boolean", pr)
		}
	case kInt:
		n, err := parseInteger(pr)
		if err != nil || fv.OverflowInt(n) {
			return mismatch(f, st, "value", pr)
		}
		fv.SetInt(n)
	case kUint:
		n, err := parseInteger(pr)
		if err != nil || n < 0 || fv.OverflowUint(uint64(n)) {
			return mismatch(f, st, "value", pr)
		}
		fv.SetUint(uint64(n))
	case kFloat:
		x, err := parseDouble(pr, st == EDMDouble)
		if errors.Is(err, errInexact) {
			return &DecodeError{Property: f.name, Stored: st, Type: f.typ, Reason: errInexact.Error() + ": " + shorten(string(pr.Val))}
		}
		if err != nil || (fv.Kind() == reflect.Float32 && fv.OverflowFloat(x) && !math.IsInf(x, 0)) {
			return mismatch(f, st, "value", pr)
		}
		fv.SetFloat(x)
	case kTime:
		t, ok := parseTimeToken(pr)
		if !ok {
			return mismatch(f, st, "value", pr)
		}
		setAs(fv, t)
	case kGUID:
		if pr.Kind != tokString {
			return mismatch(f, st, "non-string", pr)
		}
		g, err := uuid.ParseBytes(pr.Val)
		if err != nil {
			return mismatch(f, st, "malformed Guid", pr)
		}
		setAs(fv, g)
	case kBinary:
		b, ok := parseBinary(pr)
		if !ok {
			return mismatch(f, st, "malformed Binary", pr)
		}
		fv.SetBytes(b)
	case kText:
		s, ok := stringOf(pr.Val, pr.ValEsc)
		if pr.Kind != tokString || !ok {
			return mismatch(f, st, "non-string", pr)
		}
		tu := fv.Addr().Interface().(encoding.TextUnmarshaler)
		if err := tu.UnmarshalText([]byte(s)); err != nil {
			return &DecodeError{Property: f.name, Stored: st, Type: f.typ, Reason: "UnmarshalText failed", Err: err}
		}
	case kJSON:
		s, ok := stringOf(pr.Val, pr.ValEsc)
		if pr.Kind != tokString || !ok {
			return mismatch(f, st, "non-string", pr)
		}
		if err := json.Unmarshal([]byte(s), fv.Addr().Interface()); err != nil {
			return &DecodeError{Property: f.name, Stored: st, Type: f.typ, Reason: "json decoding failed", Err: err}
		}
	case kHook:
		val, err := dynamicValue(f.name, st, pr)
		if err != nil {
			return err
		}
		u := fv.Addr().Interface().(PropertyUnmarshaler)
		if err := u.UnmarshalProperty(val); err != nil {
			return &DecodeError{Property: f.name, Stored: st, Type: f.typ, Reason: "UnmarshalProperty failed", Err: err}
		}
	}
	return nil
}

// parseInteger reads an integer literal: an Int32 (a number) or an Int64 (a
// string, or a number in hand-written bodies). A number with a fraction or
// an exponent is a Double, even when whole (2.0, 1e3), and is refused.
func parseInteger(pr *rawProp) (int64, error) {
	switch pr.Kind {
	case tokNumber, tokString:
		return strconv.ParseInt(string(pr.Val), 10, 64)
	}
	return 0, strconv.ErrSyntax
}

// parseDouble reads a Double: a number, or the service's strings for the
// values JSON cannot carry. A string is read as a number only when it is
// annotated Edm.Double: unannotated, "2.5" is a String or (no metadata) an
// Int64's digits, never a Double.
func parseDouble(pr *rawProp, annotated bool) (float64, error) {
	switch pr.Kind {
	case tokNumber:
		x, err := strconv.ParseFloat(string(pr.Val), 64)
		if (err == nil || errors.Is(err, strconv.ErrRange)) && !keepsInteger(pr.Val, x) {
			return 0, errInexact
		}
		return x, err
	case tokString:
		switch string(pr.Val) {
		case "NaN":
			return math.NaN(), nil
		case "Infinity", "INF":
			return math.Inf(1), nil
		case "-Infinity", "-INF":
			return math.Inf(-1), nil
		}
		if annotated {
			return strconv.ParseFloat(string(pr.Val), 64)
		}
	}
	return 0, strconv.ErrSyntax
}

// errInexact is parseDouble's refusal of an integer literal that the
// Double it would become changes.
var errInexact = errors.New("an integer that no Double holds exactly (annotate a 64-bit integer Edm.Int64, as a decimal string)")

// keepsInteger reports whether x, the Double that the JSON number lit
// parses to, is the number lit says: always for a literal with a fraction
// or an exponent (a Double as written, rounded as every reader rounds);
// for an integer literal, when x is that integer exactly, or lit is x's
// shortest spelling (JavaScript writes 2^63 as 9223372036854776000).
func keepsInteger(lit []byte, x float64) bool {
	digits := bytes.TrimPrefix(lit, []byte("-"))
	if len(digits) <= 15 || bytes.ContainsAny(digits, ".eE") {
		return true // below 10^15 < 2^53 every integer is exact
	}
	if strconv.FormatFloat(x, 'f', -1, 64) == string(lit) {
		return true
	}
	n, ok := new(big.Int).SetString(string(lit), 10)
	if !ok {
		return false
	}
	f, acc := new(big.Float).SetInt(n).Float64()
	return acc == big.Exact && f == x
}

func parseBinary(pr *rawProp) ([]byte, bool) {
	if pr.Kind == tokRawBinary {
		return append([]byte{}, pr.Val...), true
	}
	if pr.Kind != tokString {
		return nil, false
	}
	raw := pr.Val
	if pr.ValEsc { // base64 may have '/' written as "\/"
		s, ok := unescape(raw)
		if !ok {
			return nil, false
		}
		raw = []byte(s)
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(raw)))
	n, err := base64.StdEncoding.Decode(out, raw)
	if err != nil {
		return nil, false
	}
	return out[:n], true
}

func parseTimeToken(pr *rawProp) (time.Time, bool) {
	if pr.Kind != tokString || pr.ValEsc {
		return time.Time{}, false
	}
	return parseWireTime(pr.Val)
}

// parseWireTime reads the service's DateTime form, 2006-01-02T15:04:05Z with
// up to nine fractional digits, quickly; anything else RFC 3339 allows (a
// zone offset) goes through time.Parse. The result is in UTC.
func parseWireTime(b []byte) (time.Time, bool) {
	if len(b) >= 20 && b[4] == '-' && b[7] == '-' && b[10] == 'T' && b[13] == ':' && b[16] == ':' && b[len(b)-1] == 'Z' {
		year, ok1 := digits(b[0:4])
		month, ok2 := digits(b[5:7])
		day, ok3 := digits(b[8:10])
		hour, ok4 := digits(b[11:13])
		minute, ok5 := digits(b[14:16])
		sec, ok6 := digits(b[17:19])
		frac := b[19 : len(b)-1]
		nsec := 0
		ok7 := true
		if len(frac) > 0 {
			if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
				ok7 = false
			} else {
				var n int
				n, ok7 = digits(frac[1:])
				for i := len(frac) - 1; i < 9; i++ {
					n *= 10
				}
				nsec = n
			}
		}
		if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 && month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour < 24 && minute < 60 && sec < 60 {
			t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
			if t.Day() == day { // reject 2023-02-31 rather than normalising it
				return t, true
			}
			return time.Time{}, false
		}
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, len(b) > 0
}

// dynamicValue converts a raw value to the canonical Go type of st, its
// stored type (see storedType); a string whose type the body does not say
// (st 0) stays a string.
func dynamicValue(name string, st EDMType, pr *rawProp) (any, error) {
	bad := func(reason string) error {
		return &DecodeError{Property: name, Stored: st, Reason: reason + ": " + shorten(string(pr.Val))}
	}
	if st == 0 {
		st = storedType(0, true, pr)
	}
	switch st {
	case EDMString:
		s, ok := stringOf(pr.Val, pr.ValEsc)
		if pr.Kind != tokString || !ok {
			return nil, bad("malformed Edm.String")
		}
		return s, nil
	case EDMInt32:
		n, err := parseInteger(pr)
		if err != nil || n < math.MinInt32 || n > math.MaxInt32 {
			return nil, bad("malformed Edm.Int32")
		}
		return int32(n), nil
	case EDMInt64:
		n, err := parseInteger(pr)
		if err != nil {
			return nil, bad("malformed Edm.Int64")
		}
		return n, nil
	case EDMDouble:
		x, err := parseDouble(pr, true)
		if errors.Is(err, errInexact) {
			return nil, bad(errInexact.Error())
		}
		if err != nil {
			return nil, bad("malformed Edm.Double")
		}
		return x, nil
	case EDMBoolean:
		if pr.Kind != tokTrue && pr.Kind != tokFalse {
			return nil, bad("malformed Edm.Boolean")
		}
		return pr.Kind == tokTrue, nil
	case EDMDateTime:
		t, ok := parseTimeToken(pr)
		if !ok {
			return nil, bad("malformed Edm.DateTime")
		}
		return t, nil
	case EDMGuid:
		g, err := uuid.ParseBytes(pr.Val)
		if pr.Kind != tokString || err != nil {
			return nil, bad("malformed Edm.Guid")
		}
		return g, nil
	case EDMBinary:
		b, ok := parseBinary(pr)
		if !ok {
			return nil, bad("malformed Edm.Binary")
		}
		return b, nil
	}
	return nil, bad("unsupported value")
}
