package crypt

import (
	"errors"
	"strings"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
)

// Sentinel errors, for errors.Is. Every failure to read an entity also
// matches entity.ErrDecode, every refused write entity.ErrInvalid (nothing
// was sent), and every refused filter filter.ErrInvalidFilter.
var (
	// ErrNotEncrypted: the entity carries no encryption metadata, so it was
	// not written through this package (or its metadata was removed).
	// Config.ReadPlaintext lets such entities be read, for migrating a
	// plaintext table.
	ErrNotEncrypted = errors.New("crypt: entity is not encrypted")
	// ErrMetadata: the encryption metadata is malformed, truncated, or of a
	// version or algorithm this package does not know.
	ErrMetadata = errors.New("crypt: malformed encryption metadata")
	// ErrUnknownKey: no key-encryption key holds the key id the entity was
	// written with.
	ErrUnknownKey = errors.New("crypt: unknown key-encryption key")
	// ErrUnwrap: the wrapped content key does not unwrap (it was changed,
	// or belongs to another key).
	ErrUnwrap = errors.New("crypt: content key does not unwrap")
	// ErrTampered: authentication failed: a ciphertext, a signed value or
	// the set of protected properties is not what was written for this
	// entity (changed, swapped with another entity's or property's,
	// added or removed).
	ErrTampered = errors.New("crypt: entity failed authentication")
	// ErrPolicy: a property is stored with another protection than the
	// entity type (its tags) and Config ask for, so a read-modify-write
	// would silently change it.
	ErrPolicy = errors.New("crypt: stored protection differs from the type's")
	// ErrMerge: merge (and upsert-merge) is refused for encrypted entities
	// (design guide §4): the entity's properties are under one content key
	// and one signature, which a partial write cannot keep.
	ErrMerge = errors.New("crypt: merge is not supported for encrypted entities; use Replace")
	// ErrEncryptedFilter: a filter compares an encrypted property, which on
	// the service could only match ciphertext, or one Config.Encrypt may
	// encrypt for some of the entities the filter can match (see the
	// package doc's Filters).
	ErrEncryptedFilter = errors.New("crypt: filter on an encrypted property")
	// ErrNoBeacon: entity.Table.Beacon of a property whose values cannot
	// be matched by a beacon (see BeaconError).
	ErrNoBeacon = errors.New("crypt: no beacon")
	// ErrNoKey: a write on a Table without Config.Key (read-only).
	ErrNoKey = errors.New("crypt: no key-encryption key to write with")
	// ErrInvalidConfig: a Config, or an argument of New or NewLocalKey,
	// that cannot work; nothing was made and nothing was sent. Every
	// *ConfigError matches it, and so does the *WriteError of a write
	// for which Config.Encrypt marks a property Config.Encryptable does not
	// list.
	ErrInvalidConfig = errors.New("crypt: invalid configuration")
)

// ConfigError names the Config field (or the argument of New or
// NewLocalKey) that is wrong, and why: "Config.Key", "tbl". Its text is
// argerr.Message's, "crypt: invalid <field>: <reason>"; it matches
// ErrInvalidConfig and entity.ErrInvalid.
type ConfigError struct {
	Field  string // "Config.Key", "Config.Table", "Config.Encryptable", "Config.BeaconKey", "Config.Beacons"; "tbl", "id", "key" for arguments
	Reason string
}

func (e *ConfigError) Error() string {
	return argerr.Message("crypt", e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidConfig) and errors.Is(err,
// entity.ErrInvalid) true.
func (e *ConfigError) Is(target error) bool {
	return target == ErrInvalidConfig || target == entity.ErrInvalid
}

// BeaconError reports a property entity.Table.Beacon cannot compute a
// beacon of, and why: encrypted without one (Config.Beacons), encrypted
// for some entities only (Config.Encrypt), or a value of another type than
// the property's. Its text reads "crypt: no beacon of property <p>:
// <reason>"; it matches ErrNoBeacon and entity.ErrInvalid.
type BeaconError struct {
	Property string
	Reason   string
}

func (e *BeaconError) Error() string {
	return ErrNoBeacon.Error() + " of property " + e.Property + ": " + e.Reason
}

// Is makes errors.Is(err, ErrNoBeacon) and errors.Is(err, entity.ErrInvalid)
// true.
func (e *BeaconError) Is(target error) bool {
	return target == ErrNoBeacon || target == entity.ErrInvalid
}

// ReadError reports an entity that cannot be read: ErrTampered,
// ErrMetadata, ErrUnknownKey, ErrUnwrap, ErrNotEncrypted or ErrPolicy, with
// the operation, the entity's keys and the property at fault. It matches
// entity.ErrDecode. Its text reads "crypt: <op> of PartitionKey "p", RowKey
// "r" property <name>: <kind>: <reason>: <cause>", the parts that do not
// apply left out.
type ReadError struct {
	Op                   string // "Get", "Query", "QueryPage", "QueryPartitions", "Unmarshal", "Rotate"; "" reads "read"
	PartitionKey, RowKey string
	Property             string // "" when about the whole entity
	Kind                 error  // one of the sentinels above
	Reason               string
	Err                  error // the underlying cause, if any
}

func (e *ReadError) Error() string {
	var b strings.Builder
	b.WriteString("crypt: ")
	op := e.Op
	if op == "" {
		op = "read"
	}
	b.WriteString(op)
	b.WriteString(" of ")
	b.WriteString(argerr.Keys(e.PartitionKey, e.RowKey))
	if e.Property != "" {
		b.WriteString(" property ")
		b.WriteString(e.Property)
	}
	if e.Kind != nil {
		b.WriteString(": ")
		b.WriteString(strings.TrimPrefix(e.Kind.Error(), "crypt: "))
	}
	if e.Reason != "" {
		b.WriteString(": ")
		b.WriteString(e.Reason)
	}
	if e.Err != nil && e.Err != e.Kind { // the bare sentinel would repeat the kind
		b.WriteString(": ")
		b.WriteString(strings.TrimPrefix(e.Err.Error(), "crypt: "))
	}
	return b.String()
}

func (e *ReadError) Is(target error) bool { return target == e.Kind || target == entity.ErrDecode }

// Unwrap returns the underlying cause.
func (e *ReadError) Unwrap() error { return e.Err }

// WriteError reports a write refused before any request: ErrMerge,
// ErrNoKey, or ErrInvalidConfig for a property Config.Encrypt marks and
// Config.Encryptable does not list. It matches entity.ErrInvalid.
type WriteError struct {
	Property string
	Kind     error
	Reason   string
}

func (e *WriteError) Error() string {
	s := e.Kind.Error()
	if e.Property != "" {
		s += ": property " + e.Property
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Is matches the error's kind and entity.ErrInvalid.
func (e *WriteError) Is(target error) bool { return target == e.Kind || target == entity.ErrInvalid }

// FilterError reports a comparison the filter rewriting refuses. It matches
// ErrEncryptedFilter and filter.ErrInvalidFilter.
type FilterError struct {
	Property string
	Reason   string
}

func (e *FilterError) Error() string {
	return ErrEncryptedFilter.Error() + " " + e.Property + ": " + e.Reason
}

// Is matches ErrEncryptedFilter, filter.ErrInvalidFilter and
// entity.ErrInvalid: a filter refused before any request.
func (e *FilterError) Is(target error) bool {
	return target == ErrEncryptedFilter || target == filter.ErrInvalidFilter || target == entity.ErrInvalid
}
