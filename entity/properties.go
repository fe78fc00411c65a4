package entity

import (
	"reflect"

	"github.com/tablekit/tablekit/internal/entityfields"
)

// The hook of internal/entityfields that lists an entity type's stored
// properties (patterns/secondaryindex checks the properties an index
// copies against it).
func init() { entityfields.PropertiesOf = propertiesOf }

// propertiesOf returns the properties values of type t store; see
// entityfields.PropertiesOf.
func propertiesOf(t reflect.Type) ([]entityfields.Property, bool, error) {
	if t == nil {
		return nil, false, &TypeError{Reason: "nil reflect.Type"}
	}
	sh, err := shapeOf(t)
	if err != nil {
		return nil, false, err
	}
	p, ok := sh.(*structCodec)
	if !ok {
		return nil, true, nil // DynamicEntity, json.RawMessage: any property
	}
	props := make([]entityfields.Property, len(p.fields))
	for i, f := range p.fields {
		props[i] = entityfields.Property{Name: f.name, GoPath: f.goName}
	}
	return props, p.extra != nil, nil
}
