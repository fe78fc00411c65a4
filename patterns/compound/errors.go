package compound

import (
	"errors"
	"github.com/tablekit/tablekit/internal/argerr"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
)

// ErrNotInRelation reports a RowKey that Parse cannot read as a key of the
// relation: another prefix, another number of parts, or not the canonical
// key of the ids it holds.
var ErrNotInRelation = errors.New("compound: not a key of the relation")

// ConfigError reports a Config or argument that cannot work, found before
// any request: "compound: invalid <Field>: <Reason>". It matches
// entity.ErrInvalid, as every package's ConfigError does.
type ConfigError struct {
	Field  string // "Config.Prefix", "Config.Parent", "Config.Child", "table", "Relation"
	Reason string // ReasonNil, ReasonZeroPart, ReasonZeroValue, or words
}

func (e *ConfigError) Error() string { return argerr.Message("compound", e.Field, e.Reason) }

// Is makes errors.Is(err, entity.ErrInvalid) true.
func (e *ConfigError) Is(target error) bool { return target == argerr.Err }

// Reasons a *ConfigError of this package gives that callers may compare.
const (
	ReasonNil       = "is nil"
	ReasonZeroValue = "is nil or the zero value: make it with New"
	ReasonZeroPart  = "is the zero Part"
)

// KeyError reports an id that cannot be made into a key part, or a key
// that cannot be read: which part, the key when there is one, and the
// cause (a *keys.KeyError, or ErrNotInRelation). It matches
// keys.ErrInvalidKey and entity.ErrInvalid, so a key refused before any
// request reads like any invalid key.
type KeyError struct {
	Part string // "parent", "child", "prefix", "partition", "key"
	Key  string // the key being read, "" when making one
	Err  error
}

func (e *KeyError) Error() string {
	s := "compound: " + e.Part
	if e.Key != "" {
		s += " of key " + e.Key
	}
	return s + ": " + e.Err.Error()
}

func (e *KeyError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, keys.ErrInvalidKey) and errors.Is(err,
// entity.ErrInvalid) true.
func (e *KeyError) Is(target error) bool {
	return target == keys.ErrInvalidKey || target == entity.ErrInvalid
}
