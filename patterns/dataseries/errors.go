package dataseries

import (
	"errors"
	"fmt"
	"github.com/tablekit/tablekit/internal/argerr"

	"github.com/tablekit/tablekit/entity"
)

// ErrInvalid reports an argument refused before any request was sent: a
// key that is not valid, a slot out of range, a Config that cannot work.
// Every *ArgError matches it, and entity.ErrInvalid too.
var ErrInvalid = errors.New("dataseries: invalid argument")

// ErrOverflow reports an increment that would take a counter beyond the
// range of Int64. Nothing was written.
var ErrOverflow = errors.New("dataseries: counter overflow")

// ErrStoredType reports a slot's property stored with a type other than
// Int64 or Int32, written by another program: it is not a counter this
// package may change.
var ErrStoredType = errors.New("dataseries: slot property is not an integer")

// ArgError is an argument refused before any request: Arg names it, Value
// shows it, Reason says what is wanted. Err is the cause found by another
// package, if any.
type ArgError struct {
	Op     string // "New", "Add", "Get", …
	Arg    string // "slot", "partition key", …
	Value  string
	Reason string
	Err    error
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("dataseries: %s: %s %s: %s", e.Op, e.Arg, e.Value, e.Reason)
}

// Is makes errors.Is(err, ErrInvalid) and errors.Is(err, entity.ErrInvalid)
// true.
func (e *ArgError) Is(target error) bool { return target == ErrInvalid || target == entity.ErrInvalid }

func (e *ArgError) Unwrap() error { return e.Err }

// ConfigError reports a Config field or an argument of New that cannot
// work, found before any request: "dataseries: invalid <Field>: <Reason>",
// Field as the caller wrote it ("Config.Slots", "table"). It matches
// ErrInvalid and entity.ErrInvalid, as every package's ConfigError does.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string { return argerr.Message("dataseries", e.Field, e.Reason) }

// Is makes errors.Is(err, ErrInvalid) and errors.Is(err, entity.ErrInvalid)
// true.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalid || target == argerr.Err }

// ReasonNil is the Reason of a *ConfigError about a nil argument.
const ReasonNil = "is nil"

// Error is a failed operation on one series entity, named by its keys. It
// unwraps to entity's errors: errors.Is(err, entity.ErrContention) after a
// loop that lost every round to other writers, entity.ErrOutcomeUnknown when
// the outcome of a write could not be learned, and the *azcore.ResponseError
// behind a service error.
type Error struct {
	Op                   string // "Add", "Get"
	PartitionKey, RowKey string // the entity's keys
	Err                  error
}

func (e *Error) Error() string {
	return fmt.Sprintf("dataseries: %s (%s): %v", e.Op, argerr.Keys(e.PartitionKey, e.RowKey), e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
