package bucket

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tablekit/tablekit/internal/argerr"

	"github.com/tablekit/tablekit/entity"
)

// ErrInvalid reports an argument refused before any request was sent: a
// name or RowKey that is not a valid key, a count out of range, a filter on
// PartitionKey. Every *ArgError matches it, and entity.ErrInvalid too.
var ErrInvalid = errors.New("bucket: invalid argument")

// ArgError is an argument refused before any request: Arg names it, Value
// shows it, Reason says what is wanted. Err is the cause found by another
// package (a *keys.KeyError, an *entity.ValidationError), if any.
type ArgError struct {
	Op     string // "New", "Write", "Tail", …
	Arg    string // "name", "n", "entry", …
	Value  string
	Reason string
	Err    error
}

func (e *ArgError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("bucket: %s: %s %s: %s: %s", e.Op, e.Arg, e.Value, e.Reason, strings.TrimPrefix(e.Err.Error(), "entity: "))
	}
	return fmt.Sprintf("bucket: %s: %s %s: %s", e.Op, e.Arg, e.Value, e.Reason)
}

// Is makes errors.Is(err, ErrInvalid) and errors.Is(err, entity.ErrInvalid)
// true.
func (e *ArgError) Is(target error) bool { return target == ErrInvalid || target == entity.ErrInvalid }

func (e *ArgError) Unwrap() error { return e.Err }

// ConfigError reports a Config field or an argument of New that cannot
// work, found before any request: "bucket: invalid <Field>: <Reason>",
// Field as the caller wrote it ("Config.Buckets", "table"). It matches
// ErrInvalid and entity.ErrInvalid, as every package's ConfigError does.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string { return argerr.Message("bucket", e.Field, e.Reason) }

// Is makes errors.Is(err, ErrInvalid) and errors.Is(err, entity.ErrInvalid)
// true.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalid || target == argerr.Err }

// ReasonNil is the Reason of a *ConfigError about a nil argument.
const ReasonNil = "is nil"

// Error is a failed storage call of an operation on one spread partition
// (all its buckets). It unwraps to entity's errors: an *entity.BulkError
// for a Write of several entries, entity.ErrNotFound for Get, the
// *azcore.ResponseError behind a service error.
type Error struct {
	Op   string // "Write", "Get", "Query", "Tail"
	Name string // the spread partition's name
	Err  error
	// NotWritten are a Write's entries that were not written, in input
	// order, each with its keys and its own error (an error matching
	// entity.ErrOutcomeUnknown when it may have been written). Every other
	// entry was written, and its ETag set (empty when its transaction was
	// found applied after a lost reply).
	NotWritten []entity.Outcome
}

func (e *Error) Error() string {
	return fmt.Sprintf("bucket: %s %q: %v", e.Op, e.Name, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
