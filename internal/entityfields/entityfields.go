// Package entityfields lets tablekit's own packages (resolver, the
// patterns) read and write the system fields of entity
// values of any type: what package entity does after a write, exposed to
// them without being part of entity's public API.
//
// The variables are hooks that package entity fills in from its init
// function; nothing else writes them (a test checks the repository for
// that), so they are set before any code that imports package entity
// runs, and never change afterwards. This is how gRPC reaches its own
// internals (google.golang.org/grpc/internal): the implementation stays
// in the package that owns the types, and the hook lives where only the
// module can import it.
//
// A value v is a non-nil pointer to a tagged struct or to an
// entity.DynamicEntity; any other v is an *entity.TypeError.
package entityfields

import (
	"reflect"
	"time"
)

// System has the fields of entity.System, so each converts to the other:
// entityfields.System(s), entity.System(s).
type System struct {
	PartitionKey, RowKey string
	ETag                 string
	Timestamp            time.Time
}

// RowKeyField reads and writes the RowKey of values of one entity type,
// found once, for code that reaches it row after row (package resolver
// strips RowKey prefixes this way).
type RowKeyField interface {
	// Get returns v's RowKey; v must be a non-nil pointer to the type.
	Get(v any) (string, error)
	// Set stores rowKey into v.
	Set(v any, rowKey string) error
}

// Property is one property an entity type stores: its name on the wire
// ("Total_Cents") and the Go path of its field ("Total.Cents").
type Property struct {
	Name   string
	GoPath string
}

// The hooks. Package entity sets them in its init; do not assign them.
var (
	// SetSystem writes s into v's key fields, and into its ETag and
	// Timestamp fields when it has them.
	SetSystem func(v any, s System) error
	// SetWritten stores an ETag the service returned, and the Timestamp
	// it encodes, into v: what a Table does after a write.
	SetWritten func(v any, etag string) error
	// RowKeyFieldOf returns the RowKey field of an entity type: a tagged
	// struct type or entity.DynamicEntity.
	RowKeyFieldOf func(t reflect.Type) (RowKeyField, error)
	// PropertiesOf returns the properties values of entity type t store,
	// keys, ETag and Timestamp aside, in field order; open is true when
	// t keeps any property besides (entity.DynamicEntity, or a struct
	// with an extra map). A type that is not an entity type is an
	// *entity.TypeError.
	PropertiesOf func(t reflect.Type) (props []Property, open bool, err error)
)
