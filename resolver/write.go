package resolver

import (
	"fmt"
	"reflect"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/entityfields"
)

// target is the Go value a write came from, to receive the new ETag; nil
// for a property bag, which entity updates itself.
type target struct{ v any }

func (t target) written(etag string) {
	if t.v != nil {
		_ = entityfields.SetWritten(t.v, etag) // v was checked when the write was prepared
	}
}

// Stamp returns the entity that writing v stores: v's properties and keys
// with the discriminator applied (the type property set, the RowKey
// prefixed, or the StampFunc run) and v's ETag. v is a pointer to a
// registered struct; a *entity.DynamicEntity is returned as it is, since a
// property bag is written as it stands. Stamp validates like entity.Marshal.
func (s *Schema) Stamp(v any) (*entity.DynamicEntity, error) {
	if s == nil {
		return nil, errNilSchema
	}
	bag, _, err := s.prepare(v)
	return bag, err
}

// prepare converts v into the property bag that is written for it.
func (s *Schema) prepare(v any) (*entity.DynamicEntity, target, error) {
	if d, ok := v.(*entity.DynamicEntity); ok {
		if d == nil {
			return nil, target{}, &entity.TypeError{Type: reflect.TypeOf(v), Reason: "nil pointer"}
		}
		return d, target{}, entity.Validate(d)
	}
	e, sys, err := s.registered(v)
	if err != nil {
		return nil, target{}, err
	}
	body, err := entity.Marshal(v)
	if err != nil {
		return nil, target{}, err
	}
	bag := &entity.DynamicEntity{}
	if err := entity.Unmarshal(body, bag); err != nil {
		return nil, target{}, err
	}
	if err := s.stamp(e, bag); err != nil {
		return nil, target{}, err
	}
	bag.ETag = sys.ETag
	// The stamp may have lengthened or rewritten the keys.
	if err := entity.Validate(bag); err != nil {
		return nil, target{}, err
	}
	return bag, target{v: v}, nil
}

// stamp marks bag, holding a value of e's type, with e's type name.
func (s *Schema) stamp(e *entry, bag *entity.DynamicEntity) error {
	d := &s.disc
	switch d.mode {
	case modePrefix:
		bag.RowKey = e.prefix + bag.RowKey
	case modeFunc:
		if d.stamp != nil {
			if err := d.stamp(e.name, bag); err != nil {
				return fmt.Errorf("resolver: stamping %q: %w", e.name, err)
			}
		}
		return nil
	}
	if d.property != "" {
		bag.Set(d.property, e.name)
	}
	return nil
}

// address returns the stored keys and the ETag of the entity v stands for.
func (s *Schema) address(v any) (pk, rk, etag string, err error) {
	if d, ok := v.(*entity.DynamicEntity); ok {
		if d == nil {
			return "", "", "", &entity.TypeError{Type: reflect.TypeOf(v), Reason: "nil pointer"}
		}
		return d.PartitionKey, d.RowKey, d.ETag, nil
	}
	e, sys, err := s.registered(v)
	if err != nil {
		return "", "", "", err
	}
	rk, err = s.storedRowKey(e, sys.PartitionKey, sys.RowKey)
	return sys.PartitionKey, rk, sys.ETag, err
}

// storedRowKey returns the RowKey a value of e's type with this id is
// stored under.
func (s *Schema) storedRowKey(e *entry, pk, id string) (string, error) {
	d := &s.disc
	switch d.mode {
	case modePrefix:
		return e.prefix + id, nil
	case modeFunc:
		if d.stamp != nil {
			bag := &entity.DynamicEntity{PartitionKey: pk, RowKey: id}
			if err := d.stamp(e.name, bag); err != nil {
				return "", fmt.Errorf("resolver: stamping %q: %w", e.name, err)
			}
			return bag.RowKey, nil
		}
	}
	return id, nil
}

// registered returns the entry of v's type and v's system properties; v
// must be a non-nil pointer to a registered struct.
func (s *Schema) registered(v any) (*entry, entity.System, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return nil, entity.System{}, &entity.TypeError{Type: reflect.TypeOf(v), Reason: fmt.Sprintf("resolver needs a non-nil pointer to a registered struct, or *entity.DynamicEntity; got %T", v)}
	}
	e := s.byType[rv.Elem().Type()]
	if e == nil {
		return nil, entity.System{}, s.unregistered(rv.Elem().Type())
	}
	sys, err := entity.SystemOf(v)
	return e, sys, err
}
