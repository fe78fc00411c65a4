package resolver

import (
	"fmt"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
)

type mode uint8

const (
	modeNone mode = iota // the zero Discriminator
	modeProperty
	modePrefix
	modeFunc
)

// Discriminator says how the rows of one table are told apart, and how
// writes are marked so that they can be (design guide §7: a type property
// or a RowKey prefix). Build one with ByProperty, ByRowKeyPrefix or ByFunc
// and set it as Config.Discriminator.
type Discriminator struct {
	mode     mode
	property string
	sep      string
	resolve  ResolveFunc
	stamp    StampFunc
	bad      string // a misuse, reported by NewSchema
}

// ByProperty tells types apart by a String property holding the type name,
// such as EntityType = "Employee.v2". Writes set the property; a row without
// it is of unknown type.
func ByProperty(name string) Discriminator {
	return Discriminator{mode: modeProperty, property: name}
}

// ByRowKeyPrefix tells types apart by the start of the RowKey: the type
// name's kind (the name without its .vN version) and the separator, as in
// EMPLOYEE_000123 and DEPARTMENT_SALES for the types "EMPLOYEE.v2" and
// "DEPARTMENT.v1" with separator "_". Rows of one kind are grouped in the
// key space, so a kind can be read with one range query (OfType), and
// entities of different kinds may share an id.
//
// The RowKey field of a registered Go type holds the id only ("000123"):
// writes store kind+separator+id, reads strip it again. Filters on RowKey,
// DeleteIfExists and Table.Get see stored keys; RowKeyOf builds them.
//
// The version is kept out of the key, so that an entity keeps its key from
// one version to the next: writes also set the property DefaultProperty to
// the full type name, and reads use it to choose among the versions of a
// kind. A row with the prefix but without the property (written by another
// client) is read as the kind's oldest registered version. WithProperty
// renames the property, or, with "", drops it; a kind can then have only
// one registered version.
func ByRowKeyPrefix(separator string) Discriminator {
	return Discriminator{mode: modePrefix, property: DefaultProperty, sep: separator}
}

// ResolveFunc returns the type name of a stored row from its keys and
// properties, or "" when it does not know it. props decodes the row's
// properties on first use only, so a function that looks at the keys alone
// costs nothing more.
type ResolveFunc func(partitionKey, rowKey string, props Props) string

// StampFunc marks an entity about to be written as being of typeName: it may
// set properties or change the RowKey. The entity holds the Go value's
// properties and keys.
type StampFunc func(typeName string, e *entity.DynamicEntity) error

// ByFunc tells types apart with a function of each row's keys and
// properties. stamp marks writes; with a nil stamp writes are not marked,
// and resolve must recognise rows by what the types write themselves.
//
// With Query.Select, name the properties resolve reads: only the property
// and prefix discriminators are added to a projection automatically. The
// RowKey of a row is given to the Go value as stored.
func ByFunc(resolve ResolveFunc, stamp StampFunc) Discriminator {
	return Discriminator{mode: modeFunc, resolve: resolve, stamp: stamp}
}

// WithProperty returns d with another type property: the discriminator of
// ByProperty, or the version property of ByRowKeyPrefix ("" for none). It
// has no meaning for ByFunc, which NewSchema then refuses.
func (d Discriminator) WithProperty(name string) Discriminator {
	if d.mode == modeFunc {
		d.bad = "WithProperty on a ByFunc discriminator"
		return d
	}
	d.property = name
	return d
}

// Property returns the property that holds type names, "" when there is none.
func (d Discriminator) Property() string { return d.property }

// Separator returns the separator of a RowKey-prefix discriminator, "" for
// the others.
func (d Discriminator) Separator() string { return d.sep }

func (d Discriminator) String() string {
	switch d.mode {
	case modeProperty:
		return "property " + d.property
	case modePrefix:
		if d.property == "" {
			return fmt.Sprintf("RowKey prefix KIND%s", d.sep)
		}
		return fmt.Sprintf("RowKey prefix KIND%s and property %s", d.sep, d.property)
	case modeFunc:
		return "function"
	}
	return "invalid discriminator"
}

func (d Discriminator) check() error {
	if d.bad != "" {
		return fmt.Errorf("%w: %s", ErrSchema, d.bad)
	}
	switch d.mode {
	case modeProperty:
		if d.property == "" {
			return fmt.Errorf("%w: ByProperty with an empty property name", ErrSchema)
		}
		return checkPropertyName(d.property)
	case modePrefix:
		if d.sep == "" {
			return fmt.Errorf("%w: ByRowKeyPrefix with an empty separator", ErrSchema)
		}
		if err := keys.Validate(d.sep); err != nil {
			return fmt.Errorf("%w: separator %q: %w", ErrSchema, d.sep, err)
		}
		if d.property != "" {
			return checkPropertyName(d.property)
		}
		return nil
	case modeFunc:
		if d.resolve == nil {
			return fmt.Errorf("%w: ByFunc with a nil resolve function", ErrSchema)
		}
		return nil
	}
	return fmt.Errorf("%w: the zero Discriminator (use ByProperty, ByRowKeyPrefix or ByFunc)", ErrSchema)
}

// checkPropertyName asks entity whether name is a valid user property name.
func checkPropertyName(name string) error {
	d := &entity.DynamicEntity{}
	d.Set(name, "")
	if err := entity.Validate(d); err != nil {
		return fmt.Errorf("%w: type property %q: %w", ErrSchema, name, err)
	}
	return nil
}
