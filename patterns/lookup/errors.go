package lookup

import (
	"github.com/tablekit/tablekit/internal/argerr"
	"strings"

	"github.com/tablekit/tablekit/entity"
)

// ConfigError reports a Config, argument or type that cannot work, found
// before any request: "lookup: invalid <Field>: <Reason>". It matches
// entity.ErrInvalid, as every package's ConfigError does.
type ConfigError struct {
	Field  string // "Config.Query", "Config.FullEvery", "table", "type T", "Cache"
	Reason string // ReasonNil, ReasonNegative, ReasonZeroValue, or words
}

func (e *ConfigError) Error() string { return argerr.Message("lookup", e.Field, e.Reason) }

// Is makes errors.Is(err, entity.ErrInvalid) true.
func (e *ConfigError) Is(target error) bool { return target == argerr.Err }

// Reasons a *ConfigError of this package gives that callers may compare.
const (
	ReasonNil       = "is nil"
	ReasonZeroValue = "is nil or the zero value: make it with New"
	ReasonNegative  = "is negative"
)

// NotFoundError reports a lookup of an entity the cached data does not
// hold. It matches entity.ErrNotFound.
type NotFoundError struct {
	PartitionKey, RowKey string
}

func (e *NotFoundError) Error() string {
	return "lookup: Get (" + argerr.Keys(e.PartitionKey, e.RowKey) + "): not in the cached data"
}

// Is makes errors.Is(err, entity.ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == entity.ErrNotFound }

// LoadError reports a load or revalidation that failed; the cache keeps
// serving the last snapshot it had (Cache.Cached) and the next lookup tries
// again. It unwraps to the cause, an entity error.
type LoadError struct {
	Full bool // a full load, rather than a revalidation
	Err  error
}

func (e *LoadError) Error() string {
	s := "lookup: revalidation"
	if e.Full {
		s = "lookup: load"
	}
	return s + ": " + strings.TrimPrefix(e.Err.Error(), "lookup: ")
}

func (e *LoadError) Unwrap() error { return e.Err }

// RowError is a row of the cached data that does not decode as the
// cache's type (a property of another type, a value out of range): the
// row is not held and the rest of the data is. It matches entity.ErrDecode
// and unwraps to the decoding error.
type RowError struct {
	PartitionKey, RowKey string
	Err                  error
}

func (e *RowError) Error() string {
	return "lookup: load (" + argerr.Keys(e.PartitionKey, e.RowKey) + "): the row does not decode, so it is not held: " + strings.TrimPrefix(e.Err.Error(), "entity: ")
}

func (e *RowError) Unwrap() error { return e.Err }
