package logtail

import (
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/entity"
)

// ErrInvalid reports an argument refused before any request was sent:
// a partition that is not a valid key, a count out of range, a time outside
// .NET's DateTime range, a malformed RowKey. Every *ArgError matches it, and
// entity.ErrInvalid too.
var ErrInvalid = errors.New("logtail: invalid argument")

// ErrUnsorted reports a call that needs the service's key order on a log
// configured with Config.Unsorted (Page: a continuation token of an unsorted
// backend does not resume "older entries").
var ErrUnsorted = errors.New("logtail: needs a sorted backend")

// ArgError is an argument refused before any request: Arg names it, Value
// shows it, Reason says what is wanted. Err is the cause found by another
// package (a *keys.KeyError), if any.
type ArgError struct {
	Op     string // "Append", "Tail", …
	Arg    string // "partition", "n", "writer id", …
	Value  string
	Reason string
	Err    error
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("logtail: %s: %s %s: %s", e.Op, e.Arg, e.Value, e.Reason)
}

// Is makes errors.Is(err, ErrInvalid) and errors.Is(err, entity.ErrInvalid)
// true.
func (e *ArgError) Is(target error) bool { return target == ErrInvalid || target == entity.ErrInvalid }

func (e *ArgError) Unwrap() error { return e.Err }

// Error is a failed storage call of an operation on one partition of the
// log. It unwraps to entity's errors, so errors.Is(err, entity.ErrNotFound),
// errors.As(err, &*entity.TransactionError) and the *azcore.ResponseError
// behind them still work.
type Error struct {
	Op        string // "Append", "Tail", "Trim", …
	Partition string
	Err       error
}

func (e *Error) Error() string {
	return fmt.Sprintf("logtail: %s in partition %q: %v", e.Op, e.Partition, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
