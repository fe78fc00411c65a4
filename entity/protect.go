package entity

import (
	"bytes"
	"encoding/base64"
	"reflect"
	"strconv"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity/internal/protect"
	"github.com/tablekit/tablekit/keys"
)

// Client-side encryption (design guide §4) lives in package entity/crypt;
// the codec only offers it a seam (package entity/internal/protect). A property
// tagged `encrypt` or `sign`, or chosen by the scheme's own rules, is
// encoded exactly as any other property, then handed to the scheme as its
// EDM type and value text; an encrypted one is replaced by the ciphertext
// the scheme returns, as an Edm.Binary. Reading reverses it: the scheme
// opens the ciphertext and the plaintext goes through the same value
// decoder as a plaintext property. So there is one codec, and every limit
// (the Binary length, the entity size and property count, including the
// scheme's reserved properties) is checked by the code that checks it for
// every entity.

func init() {
	protect.Register(protect.Hooks{
		Guarded: func(table any, g protect.Guard) any {
			return table.(interface{ guardedCopy(protect.Guard) any }).guardedCopy(g)
		},
		Fields: protectFields,
		BatchAdd: func(b any, kind uint8, unconditional bool, e any, s protect.Scheme) {
			rule := etagNone
			switch OpKind(kind) {
			case OpMerge, OpReplace, OpDelete:
				rule = etagOwn
				if unconditional {
					rule = etagAny
				}
			}
			b.(*Batch).add(OpKind(kind), rule, e, s)
		},
		Marshal:   protectedMarshal,
		Unmarshal: protectedUnmarshal,
	})
}

// protectionConflict refuses the encrypt and sign options where they mean
// nothing: on keys and system fields (which the service needs in clear), on
// a flattened struct (tag its fields), and both on one field.
func (ti tagInfo) protectionConflict() string {
	switch {
	case ti.prot == 0:
		return ""
	case ti.prot == protect.Encrypt|protect.Sign:
		return "a field cannot be both encrypt and sign (encrypt authenticates too)"
	case ti.pk || ti.rk || ti.etag || ti.ts || ti.extra:
		return "keys, etag, timestamp and extra fields cannot be encrypted or signed"
	case ti.flat:
		return "encrypt and sign apply to single properties: tag the flattened struct's fields"
	}
	return ""
}

// errUnprotected refuses to encode or decode a type with protected fields
// without a scheme: writing them in clear would break the promise of the tag.
func (p *structCodec) errUnprotected() error {
	for i := range p.fields {
		if p.fields[i].prot != 0 {
			return &TypeError{Type: p.typ, Field: p.fields[i].goName, Reason: "tagged encrypt or sign: read and write this type through package crypt"}
		}
	}
	return &TypeError{Type: p.typ, Reason: "has protected fields"}
}

func protectFields(t reflect.Type) ([]protect.Field, error) {
	sh, err := shapeOf(t)
	if err != nil {
		return nil, err
	}
	p, ok := sh.(*structCodec)
	if !ok {
		return nil, nil
	}
	out := make([]protect.Field, len(p.fields))
	for i, f := range p.fields {
		edm := f.edm
		if f.kind == kHook {
			edm = 0
		}
		out[i] = protect.Field{Name: f.name, Mode: f.prot, EDM: uint8(edm)}
	}
	return out, nil
}

// protectedShape is a shape whose writes and reads go through a scheme.
type protectedShape struct {
	shape
	s protect.Scheme
}

func (ps protectedShape) encode(dst []byte, rv reflect.Value) ([]byte, error) {
	return encodeWith(dst, ps.shape, rv, ps.s, false)
}

// encodeWith encodes an entity of shape sh through the scheme s; logical
// skips the limits of one stored entity (ToDynamic).
func encodeWith(dst []byte, sh shape, rv reflect.Value, s protect.Scheme, logical bool) ([]byte, error) {
	pk, rk := sh.keyValues(rv)
	w, err := s.Writer(pk, rk)
	if err != nil {
		return dst, err
	}
	defer w.Close()
	e := encoder{b: dst, prot: w, logical: logical}
	if p, ok := sh.(*structCodec); ok {
		return p.appendStructWith(e, rv)
	}
	return asDynamic(rv).appendWith(e)
}

func (ps protectedShape) decode(raw []byte, rv reflect.Value) error {
	if p, ok := ps.shape.(*structCodec); ok {
		return p.decodeWith(raw, rv, ps.s)
	}
	return asDynamic(rv).decodeWith(raw, ps.s)
}

func (ps protectedShape) selectable(name string) bool {
	return ps.shape.selectable(name) || ps.s.Reserved(name)
}

// The scheme needs every annotation: signed values are checked by type.
func (ps protectedShape) readFormat() aztables.MetadataFormat {
	return aztables.MetadataFormatMinimal
}

func protectedMarshal(v any, s protect.Scheme) ([]byte, error) {
	rv, sh, err := entityValue(v)
	if err != nil {
		return nil, err
	}
	bp := bufPool.Get().(*[]byte)
	b, err := protectedShape{sh, s}.encode((*bp)[:0], rv)
	var out []byte
	if err == nil {
		out = make([]byte, len(b))
		copy(out, b)
	}
	if cap(b) <= 1<<20 {
		*bp = b
		bufPool.Put(bp)
	}
	return out, err
}

func protectedUnmarshal(data []byte, v any, s protect.Scheme) error {
	rv, sh, err := entityValue(v)
	if err != nil {
		return err
	}
	return protectedShape{sh, s}.decode(data, rv)
}

// --- encoding ---

// protectedField encodes a struct field through the scheme.
func (e *encoder) protectedField(f *field, fv reflect.Value) error {
	mode, err := e.prot.Mode(f.name, f.prot)
	if err != nil {
		return err
	}
	switch {
	case mode == 0:
		return e.field(f, fv)
	case f.kind == kHook || mode&(protect.Sign|protect.Beacon) != 0:
		// A hook's EDM type is per value, and signed or beaconed values
		// need their canonical Go value: read the member back.
		return e.protectWrite(f.name, f.nameUnits, mode, func() error { return e.field(f, fv) })
	}
	return e.encryptField(f, fv, mode)
}

// encryptField encrypts one struct field. The value is encoded and
// validated as every value is, then its text is taken from the bytes just
// written, whose shape the field's kind fixes (a number or literal, or a
// quoted string), without parsing the member again; a Binary's text is the
// field's bytes rather than the base64 just written.
func (e *encoder) encryptField(f *field, fv reflect.Value, mode protect.Mode) error {
	start, size, count := len(e.b), e.size, e.count
	if err := e.field(f, fv); err != nil {
		return withheld(err)
	}
	if len(e.b) == start {
		return nil
	}
	var text []byte
	if f.kind == kBinary {
		text = fv.Bytes()
	} else {
		text = e.b[start+len(f.prefix):]
		if len(text) >= 2 && text[0] == '"' {
			text = text[1 : len(text)-1]
			if bytes.IndexByte(text, '\\') >= 0 {
				u, ok := unescape(text)
				if !ok {
					return &DecodeError{Property: f.name, Reason: "malformed string"}
				}
				text = []byte(u)
			}
		}
	}
	return e.sealed(f.name, f.nameUnits, mode, f.edm, text, nil, start, size, count)
}

// property encodes a property of a DynamicEntity or an extra map.
func (e *encoder) property(name string, val any) error {
	if e.prot == nil {
		return e.dynamic(name, val)
	}
	mode, err := e.prot.Mode(name, 0)
	if err != nil {
		return err
	}
	if mode == 0 {
		return e.dynamic(name, val)
	}
	return e.protectWrite(name, -1, mode, func() error { return e.dynamic(name, val) })
}

// protectWrite writes one property with write, validated and encoded as
// usual, and hands what it wrote to the scheme; an encrypted property is
// then replaced by its ciphertext.
func (e *encoder) protectWrite(name string, nameUnits int, mode protect.Mode, write func() error) error {
	start, size, count := len(e.b), e.size, e.count
	if err := write(); err != nil {
		if mode&protect.Encrypt != 0 {
			return withheld(err)
		}
		return err
	}
	if len(e.b) == start { // a nil value: absent
		return nil
	}
	edm, text, value, err := splitMember(e.b[start:], mode&(protect.Sign|protect.Beacon) != 0)
	if err != nil {
		return err
	}
	return e.sealed(name, nameUnits, mode, edm, text, value, start, size, count)
}

// sealed hands one property, written from start, to the scheme; an
// encrypted one is then replaced by its ciphertext, and the totals go back
// to size and count before the ciphertext is counted.
func (e *encoder) sealed(name string, nameUnits int, mode protect.Mode, edm EDMType, text []byte, value any, start, size, count int) error {
	ct, err := e.prot.Property(name, mode, uint8(edm), text, value)
	if err != nil || mode&protect.Encrypt == 0 {
		return err
	}
	if len(ct) > MaxBinaryBytes {
		return &ValidationError{Property: name, Rule: RuleBinaryLength, Limit: "65536 bytes of ciphertext", Value: strconv.Itoa(len(ct)) + " bytes"}
	}
	if nameUnits < 0 {
		nameUnits = keys.UTF16Len(name)
	}
	e.b, e.size, e.count = appendBinaryPrefix(e.b[:start], name), size, count
	return e.binary(name, nameUnits, nil, ct)
}

// finishProtected adds the scheme's reserved properties.
func (e *encoder) finishProtected() error {
	props, err := e.prot.Finish()
	if err != nil {
		return err
	}
	for _, p := range props {
		if reason := checkPropertyName(p.Name); reason != "" {
			return &ValidationError{Property: p.Name, Rule: RulePropertyName, Value: reason}
		}
		if len(p.Value) > MaxBinaryBytes {
			return &ValidationError{Property: p.Name, Rule: RuleBinaryLength, Limit: "65536 bytes", Value: strconv.Itoa(len(p.Value)) + " bytes"}
		}
		e.b = appendBinaryPrefix(e.b, p.Name)
		if err := e.binary(p.Name, keys.UTF16Len(p.Name), nil, p.Value); err != nil {
			return err
		}
	}
	return nil
}

func appendBinaryPrefix(b []byte, name string) []byte {
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `@odata.type":"Edm.Binary","`...)
	b = append(b, name...)
	return append(b, `":`...)
}

// splitMember reads back one member the encoder just wrote,
// `,"N":v` or `,"N@odata.type":"Edm.X","N":v`: its EDM type, the text of
// its value (unescaped) and, when asked, its canonical Go value.
func splitMember(m []byte, wantValue bool) (EDMType, []byte, any, error) {
	s := scanAt(m, 1)
	name, _, err := s.Str()
	if err != nil {
		return 0, nil, nil, syntaxErr(err)
	}
	s.Skip(1) // ':'
	var edm EDMType
	if bytes.HasSuffix(name, []byte(annotationSuffix)) {
		t, _, err := s.Str()
		if err != nil {
			return 0, nil, nil, syntaxErr(err)
		}
		edm = parseEDMType(t)
		s.Skip(1) // ','
		if name, _, err = s.Str(); err != nil {
			return 0, nil, nil, syntaxErr(err)
		}
		s.Skip(1) // ':'
	}
	var pr rawProp
	if err := s.Value(&pr); err != nil {
		return 0, nil, nil, syntaxErr(err)
	}
	if edm == 0 {
		edm = storedType(0, true, &pr)
	}
	text := pr.Val
	if pr.ValEsc {
		u, ok := unescape(pr.Val)
		if !ok {
			return 0, nil, nil, &DecodeError{Property: string(name), Reason: "malformed string"}
		}
		text = []byte(u)
	}
	if edm == EDMBinary { // the bytes, not their base64: a third shorter
		if text, err = base64.StdEncoding.DecodeString(string(text)); err != nil {
			return 0, nil, nil, &DecodeError{Property: string(name), Reason: "malformed Edm.Binary"}
		}
	}
	var value any
	if wantValue {
		if value, err = dynamicValue(string(name), edm, &pr); err != nil {
			return 0, nil, nil, err
		}
	}
	return edm, text, value, nil
}

// withheldValue stands for the value of an encrypted property in an
// error: errors are logged and shown, and the value's plaintext must not
// reach them.
const withheldValue = "(withheld: the property is encrypted)"

// withheld returns err, an error about the value of an encrypted property,
// without the value: a *ValidationError's Value and cause, a
// *DecodeError's Reason and cause. Other errors carry no value.
func withheld(err error) error {
	switch e := err.(type) {
	case *ValidationError:
		c := *e
		if c.Value != "" {
			c.Value = withheldValue
		}
		c.Err = nil
		return &c
	case *DecodeError:
		return &DecodeError{Property: e.Property, Stored: e.Stored, Type: e.Type, Reason: "the decrypted value does not fit " + typeName(e.Type) + " " + withheldValue}
	}
	return err
}

func typeName(t reflect.Type) string {
	if t == nil {
		return "the property bag"
	}
	return "the " + t.String() + " field"
}

// --- decoding ---

// openEntity starts the scheme's read of one entity body; src (from
// scanProps) is the scheme's protect.Props until the Reader is closed.
func openEntity(src *propSource, s protect.Scheme) (protect.Reader, error) {
	return s.Reader(src.key(keyPK), src.key(keyRK), src)
}

var keyPK, keyRK = []byte("PartitionKey"), []byte("RowKey")

// key returns a key's value, unescaped; nil when absent.
func (src *propSource) key(name []byte) []byte {
	ps := src.props
	i, ok := src.find(name)
	if !ok || ps[i].Kind != tokString {
		return nil
	}
	if !ps[i].ValEsc {
		return ps[i].Val
	}
	s, _ := unescape(ps[i].Val)
	return []byte(s)
}

// openProp returns the property to decode in place of pr: pr itself, or
// for an encrypted property its plaintext, with the EDM type the scheme
// recorded. skip is true for the scheme's reserved properties.
func openProp(r protect.Reader, name []byte, tagged protect.Mode, pr *rawProp, at EDMType, out *rawProp) (*rawProp, EDMType, bool, error) {
	mode, err := r.Mode(name, tagged)
	if err != nil {
		return nil, 0, false, err
	}
	switch {
	case mode&protect.Reserved != 0:
		return nil, 0, true, nil
	case mode&protect.Encrypt == 0:
		return pr, at, false, nil
	}
	edm, text, err := r.Open(name)
	if err != nil {
		return nil, 0, false, err
	}
	*out = rawProp{Name: pr.Name, NameEsc: pr.NameEsc, Val: text, Kind: textKind(EDMType(edm), text)}
	return out, EDMType(edm), false, nil
}

// textKind is the JSON token a value's text stands for.
func textKind(edm EDMType, text []byte) tokKind {
	switch edm {
	case EDMBinary:
		return tokRawBinary
	case EDMInt32, EDMDouble:
		return tokNumber
	case EDMBoolean:
		if string(text) == "true" {
			return tokTrue
		}
		return tokFalse
	}
	return tokString
}

// propSource is the protect.Props of one scanned body; apart is
// annotationsApart of its properties.
type propSource struct {
	props []rawProp
	apart bool
}

// nameOf returns a property's unescaped name; ok is false for annotations
// and malformed names.
func (src *propSource) nameOf(i int) ([]byte, bool) {
	ps := src.props
	p := &ps[i]
	if isAnnotation(p.Name) {
		return nil, false
	}
	if !p.NameEsc {
		return p.Name, true
	}
	u, ok := unescape(p.Name)
	return []byte(u), ok
}

// find looks a property up by name. An annotation's name holds '@', which
// no property name does, so an exact match is never an annotation.
func (src *propSource) find(name []byte) (int, bool) {
	ps := src.props
	for i := range ps {
		p := &ps[i]
		if !p.NameEsc {
			if bytes.Equal(p.Name, name) {
				return i, true
			}
			continue
		}
		if n, ok := src.nameOf(i); ok && bytes.Equal(n, name) {
			return i, true
		}
	}
	return 0, false
}

func (src *propSource) Has(name []byte) bool {
	_, ok := src.find(name)
	return ok
}

func (src *propSource) CountPrefix(prefix []byte) int {
	ps := src.props
	n := 0
	for i := range ps {
		if !ps[i].NameEsc && !bytes.HasPrefix(ps[i].Name, prefix) {
			continue
		}
		if name, ok := src.nameOf(i); ok && bytes.HasPrefix(name, prefix) {
			n++
		}
	}
	return n
}

func (src *propSource) Binary(name []byte, dst []byte) ([]byte, bool, bool, error) {
	ps := src.props
	i, ok := src.find(name)
	if !ok {
		return dst, false, false, nil
	}
	switch at := annotationOf(ps, i, name, src.apart); at {
	case 0:
		return dst, true, false, nil
	case EDMBinary:
	default:
		return dst, true, true, &DecodeError{Property: string(name), Reason: "stored as " + at.String() + ", not Edm.Binary"}
	}
	pr := &ps[i]
	raw := pr.Val
	if pr.ValEsc { // base64 may have '/' written as "\/"
		s, ok := unescape(raw)
		if !ok {
			return dst, true, true, &DecodeError{Property: string(name), Reason: "malformed Edm.Binary"}
		}
		raw = []byte(s)
	}
	out, err := base64.StdEncoding.AppendDecode(dst, raw)
	if pr.Kind != tokString || err != nil {
		return dst, true, true, &DecodeError{Property: string(name), Reason: "malformed Edm.Binary"}
	}
	return out, true, true, nil
}

func (src *propSource) Value(name []byte) (uint8, any, bool, error) {
	ps := src.props
	i, ok := src.find(name)
	if !ok {
		return 0, nil, false, nil
	}
	at := annotationOf(ps, i, name, src.apart)
	if at == 0 {
		at = storedType(0, true, &ps[i])
	}
	v, err := dynamicValue(string(name), at, &ps[i])
	return uint8(at), v, true, err
}
