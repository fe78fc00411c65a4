// Package protect is the seam between the entity codec and client-side
// encryption (package entity/crypt, design guide §4). The codec stays free of
// cryptography: it asks a Scheme how each property is protected, hands it the
// value exactly as the codec wrote or read it, and writes back what the
// Scheme returns. The Scheme (entity/crypt) holds the keys and the formats.
//
// Package entity registers its half (Hooks) once, at init; package
// entity/crypt reaches it with Entity. Nothing here is public API: it lives
// under entity/internal/ because only entity's packages use it (package
// internal describes the layers).
package protect

import (
	"context"
	"reflect"
)

// Mode says how a property is protected. The zero Mode is plaintext.
type Mode uint8

const (
	// Encrypt: the value is stored as ciphertext (an Edm.Binary) and
	// authenticated.
	Encrypt Mode = 1 << iota
	// Sign: the value is stored in clear and authenticated by the
	// entity's signature.
	Sign
	// Beacon: an encrypted value also gets an equality beacon (a keyed hash
	// of the plaintext) stored beside it.
	Beacon
	// Reserved: a property the Scheme itself writes (metadata, beacons);
	// decoders skip it.
	Reserved
)

// Scheme protects the entities of one table. A Scheme is bound to one call
// (its context reaches the key-encryption key) and may serve many entities.
type Scheme interface {
	// Writer starts the write of one entity with these keys.
	Writer(partitionKey, rowKey string) (Writer, error)
	// Reader starts the read of one entity whose properties props holds.
	// The keys are only borrowed for the read.
	Reader(partitionKey, rowKey []byte, props Props) (Reader, error)
	// Reserved reports names the Scheme writes itself, so that $select may
	// ask for them.
	Reserved(name string) bool
}

// Writer protects the properties of one entity write.
type Writer interface {
	// Mode returns how the property is protected: the mode its tag asks for
	// combined with the Scheme's own rules. It refuses reserved names.
	Mode(name string, tagged Mode) (Mode, error)
	// Property is given one protected property: its EDM type, its value's
	// text (a string's unescaped characters, a number's or a boolean's
	// literal), and, when mode has Sign or Beacon, its canonical Go value.
	// With Encrypt it returns the ciphertext to store as Edm.Binary, valid
	// until the next call; without, the property is stored in clear and the
	// result is ignored.
	Property(name string, mode Mode, edm uint8, text []byte, value any) ([]byte, error)
	// Finish returns the Scheme's reserved properties, each an Edm.Binary
	// that the codec adds and counts in the entity's size and property
	// limits. They are valid until Close.
	Finish() ([]Property, error)
	// Close ends the write; the Writer is not used again.
	Close()
}

// Property is one reserved property a Writer adds.
type Property struct {
	Name  string
	Value []byte
}

// Reader opens the properties of one entity read.
type Reader interface {
	// Mode returns how the stored property is protected, checked against
	// the mode its tag asks for; Reserved for the Scheme's own properties.
	// name is only borrowed for the call.
	Mode(name []byte, tagged Mode) (Mode, error)
	// Open returns the plaintext of an encrypted property: its EDM type and
	// its value's text, as Writer.Property was given them, valid until the
	// next call.
	Open(name []byte) (edm uint8, text []byte, err error)
	// Close ends the read; the Reader is not used again.
	Close()
}

// Props gives a Scheme the raw properties of one entity body. Names are
// only borrowed for the call.
type Props interface {
	// Binary appends the bytes of a property annotated Edm.Binary to dst.
	// found is false when the body does not hold the property; annotated
	// is false when it holds it without an @odata.type annotation (dst is
	// then returned as it is: Value says its type). An annotation of
	// another type, or a value that is not base64, is an error.
	Binary(name []byte, dst []byte) (value []byte, found, annotated bool, err error)
	// Value returns a property's EDM type and canonical Go value (string,
	// int32, int64, float64, bool, time.Time, uuid.UUID or []byte).
	Value(name []byte) (edm uint8, value any, ok bool, err error)
	// Has reports whether the body holds the property.
	Has(name []byte) bool
	// CountPrefix counts the properties whose names start with prefix
	// (a name that appears twice counts twice).
	CountPrefix(prefix []byte) int
}

// Field is one property of a struct type as its tags declare it.
type Field struct {
	Name string
	Mode Mode  // Encrypt or Sign from the tag; 0 for plain properties
	EDM  uint8 // the stored EDM type; 0 when decided per value (PropertyMarshaler)
}

// Guard is the protection of a whole table view (package entity/crypt's
// Table.Entity): an entity.Table that holds one binds it at every call, so
// that each call's scheme reaches the key-encryption key with that call's
// context, and lets it check what the call sends besides entities.
type Guard interface {
	// Bind returns the scheme of one call: ctx reaches the key-encryption
	// key; op names the operation in read errors ("" for a write);
	// beaconed says that the call's filter matched beacons (see Query).
	Bind(ctx context.Context, op string, beaconed bool) Scheme
	// Query checks and translates a query (an entity.Query) for the
	// service: a filter on an encrypted property becomes a beacon match or
	// is refused, and a $select asks for what the scheme needs. partitions
	// and fanOut are those of entity.Table.QueryPartitions. It returns the
	// query to send (an entity.Query) and whether it matches beacons.
	Query(q any, partitions []string, fanOut bool) (any, bool, error)
	// Refuse returns the error that refuses a write the format cannot take
	// (a merge: the entity's signature covers its protected properties as
	// a whole); op names it.
	Refuse(op string) error
	// Encrypts reports whether the property is encrypted in every entity
	// (always) or may be in some (maybe).
	Encrypts(property string) (always, maybe bool)
	// Beacon returns the equality beacon stored beside an encrypted
	// property's value (see entity.Table.Beacon).
	Beacon(property string, value any) (beacon []byte, ok bool, err error)
}

// Hooks is what package entity offers to the Scheme's package.
type Hooks struct {
	// Guarded returns a copy of table (an *entity.Table[T]) that binds g at
	// every call (see Guard).
	Guarded func(table any, g Guard) any
	// Fields lists the properties of an entity type (a tagged struct
	// type); nil for DynamicEntity, whose properties are known per value.
	Fields func(t reflect.Type) ([]Field, error)
	// BatchAdd adds one operation (an entity.OpKind) on e to batch (an
	// *entity.Batch), encoding e through s; a merge, replace or delete is
	// conditional on e's ETag unless unconditional.
	BatchAdd func(batch any, kind uint8, unconditional bool, e any, s Scheme)
	// Marshal and Unmarshal are entity.Marshal and entity.Unmarshal through
	// s, for a pointer to an entity.
	Marshal   func(v any, s Scheme) ([]byte, error)
	Unmarshal func(data []byte, v any, s Scheme) error
}

var entity *Hooks

// Register is called once by package entity's init.
func Register(h Hooks) {
	if entity != nil {
		panic("protect: Register called twice")
	}
	entity = &h
}

// Entity returns package entity's hooks. Importing package entity (as every
// caller does) guarantees they are registered.
func Entity() *Hooks {
	if entity == nil {
		panic("protect: package entity is not linked in")
	}
	return entity
}
