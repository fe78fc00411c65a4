package entity

import (
	"slices"
	"time"

	"github.com/tablekit/tablekit/entity/internal/protect"
)

// DynamicEntity is an entity of unknown shape: the property bag the design
// guide calls DynamicTableEntity (§7). Marshal accepts it and Unmarshal fills
// it.
//
// Properties holds the user properties. Unmarshal stores each value as one of
// the eight canonical Go types, one per EDM type:
//
//	Edm.String   string        Edm.Double    float64
//	Edm.Int32    int32         Edm.Boolean   bool
//	Edm.Int64    int64         Edm.DateTime  time.Time (UTC)
//	Edm.Guid     uuid.UUID     Edm.Binary    []byte
//
// Marshal accepts those types and also int, int8, int16, uint8, uint16,
// uint32, uint, uint64 and float32, mapped as for struct fields. When a body
// carries no type annotations (no metadata), Int64, DateTime, Guid and Binary
// values arrive as strings and stay strings: read in full or minimal metadata
// to keep their types.
type DynamicEntity struct {
	PartitionKey string
	RowKey       string
	ETag         string    // from odata.etag; never sent
	Timestamp    time.Time // set by the service; never sent
	Properties   map[string]any
}

// Prop returns the property name of d as a T, and whether it is present with
// that type.
func Prop[T any](d *DynamicEntity, name string) (T, bool) {
	if d == nil {
		var zero T
		return zero, false
	}
	v, ok := d.Properties[name].(T)
	return v, ok
}

// Set stores a property, creating the map when needed, and returns d; on
// a nil d it returns a new DynamicEntity holding the property.
func (d *DynamicEntity) Set(name string, value any) *DynamicEntity {
	if d == nil {
		d = &DynamicEntity{}
	}
	if d.Properties == nil {
		d.Properties = make(map[string]any)
	}
	d.Properties[name] = value
	return d
}

// MarshalStored encodes d as Marshal does — the same bytes for every
// entity Marshal takes — but without the limits a write checks (keys,
// property names, string and Binary lengths, the DateTime range, the
// entity's size and property count): for copying what a table holds, which
// may break them (Azurite and Cosmos DB store a DateTime before 1601 or a
// property name that is not a C# identifier). Its values must be of the
// types Marshal takes; ETag and Timestamp are not written.
func MarshalStored(d *DynamicEntity) ([]byte, error) {
	if d == nil {
		return nil, &ValidationError{Rule: RulePropertyType, Limit: "a non-nil *DynamicEntity", Value: "nil"}
	}
	return d.appendWith(encoder{stored: true})
}

func (d DynamicEntity) appendTo(dst []byte) ([]byte, error) {
	return d.appendWith(encoder{b: dst})
}

func (d DynamicEntity) appendWith(e encoder) ([]byte, error) {
	dst := e.b
	if err := e.keys(d.PartitionKey, d.RowKey); err != nil {
		return dst, err
	}
	// Sorted names make the body deterministic, which tests and signatures like.
	for _, name := range sortedNames(d.Properties) {
		if err := e.property(name, d.Properties[name]); err != nil {
			return dst, err
		}
	}
	return e.finishWith()
}

func sortedNames(m map[string]any) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func (d *DynamicEntity) decode(data []byte) error { return d.decodeWith(data, nil) }

// decodeWith decodes through a protection scheme s, when set (see
// protect.go).
func (d *DynamicEntity) decodeWith(data []byte, s protect.Scheme) error {
	return scanProps(data, func(src *propSource) error {
		props := src.props
		apart := annotationsApart(props)
		var r protect.Reader
		if s != nil {
			var err error
			src.apart = apart
			if r, err = openEntity(src, s); err != nil {
				return err
			}
			defer r.Close()
		}
		var opened rawProp
		for i := range props {
			pr := &props[i]
			if pr.Kind == tokNull || pr.Kind == tokNested || isAnnotation(pr.Name) {
				continue
			}
			name := string(pr.Name) // unescaped by scanProps
			at := annotationOf(props, i, []byte(name), apart)
			switch name {
			case "PartitionKey", "RowKey", "odata.etag":
				s, ok := stringOf(pr.Val, pr.ValEsc)
				if pr.Kind != tokString || !ok {
					return &DecodeError{Property: name, Reason: "not a string"}
				}
				switch name {
				case "PartitionKey":
					d.PartitionKey = s
				case "RowKey":
					d.RowKey = s
				default:
					d.ETag = s
				}
				continue
			case "Timestamp":
				t, ok := parseTimeToken(pr)
				if !ok {
					return &DecodeError{Property: name, Reason: "malformed Timestamp"}
				}
				d.Timestamp = t
				continue
			}
			if len(name) > 6 && name[:6] == "odata." {
				continue
			}
			if r != nil {
				var skip bool
				var err error
				if pr, at, skip, err = openProp(r, []byte(name), 0, pr, at, &opened); err != nil {
					return err
				}
				if skip {
					continue
				}
			}
			val, err := dynamicValue(name, at, pr)
			if err != nil {
				if pr == &opened {
					return withheld(err) // a decrypted value stays out of errors
				}
				return err
			}
			if d.Properties == nil {
				d.Properties = make(map[string]any, len(props))
			}
			d.Properties[name] = val
		}
		return nil
	})
}
