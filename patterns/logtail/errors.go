package logtail

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tablekit/tablekit/internal/argerr"

	"github.com/tablekit/tablekit/entity"
)

// ErrInvalid reports an argument refused before any request was sent:
// a partition that is not a valid key, a count out of range, an entry's
// time (Config.Now) outside .NET's DateTime range, a malformed RowKey. Every *ArgError matches it, and
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
	if e.Err != nil {
		return fmt.Sprintf("logtail: %s: %s %s: %s: %s", e.Op, e.Arg, e.Value, e.Reason, strings.TrimPrefix(e.Err.Error(), "entity: "))
	}
	return fmt.Sprintf("logtail: %s: %s %s: %s", e.Op, e.Arg, e.Value, e.Reason)
}

// Is makes errors.Is(err, ErrInvalid) and errors.Is(err, entity.ErrInvalid)
// true.
func (e *ArgError) Is(target error) bool { return target == ErrInvalid || target == entity.ErrInvalid }

func (e *ArgError) Unwrap() error { return e.Err }

// ConfigError reports a Config field or an argument of New that cannot
// work, found before any request: "logtail: invalid <Field>: <Reason>",
// Field as the caller wrote it ("Config.WriterID", "table"). It matches
// ErrInvalid and entity.ErrInvalid, as every package's ConfigError does.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string { return argerr.Message("logtail", e.Field, e.Reason) }

// Is makes errors.Is(err, ErrInvalid) and errors.Is(err, entity.ErrInvalid)
// true.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalid || target == argerr.Err }

// ReasonNil is the Reason of a *ConfigError about a nil argument.
const ReasonNil = "is nil"

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
	// The package's own errors say "logtail:" once.
	return fmt.Sprintf("logtail: %s (%s): %s", e.Op, argerr.Keys(e.Partition, ""), strings.TrimPrefix(fmt.Sprint(e.Err), "logtail: "))
}

func (e *Error) Unwrap() error { return e.Err }

// AppendError reports an Append of several entries in which the service
// refused some, or left their outcome unknown: NotWritten lists each, in
// argument order, with its error; every other entry was written. It comes
// inside an *Error. errors.Is matches what any entry's error matches
// (entity.ErrAlreadyExists for a PlainKeys collision,
// entity.ErrOutcomeUnknown for an entry that may be stored), and
// errors.As finds the *entity.BulkError of the write.
type AppendError struct {
	Total      int          // the entries of the Append
	NotWritten []EntryError // the entries not written, in argument order
	bulk       error
}

// EntryError is one entry an Append did not write.
type EntryError struct {
	Index  int    // its position among Append's entries
	RowKey string // the RowKey Append gave it
	Err    error  // why; entity.ErrOutcomeUnknown when it may be stored
}

func (e *AppendError) Error() string {
	if e == nil || len(e.NotWritten) == 0 {
		return "logtail: Append: every entry written"
	}
	first := e.NotWritten[0]
	return fmt.Sprintf("logtail: Append: %d of %d entries not written; the first, entry %d (RowKey %s): %v",
		len(e.NotWritten), e.Total, first.Index, strconv.Quote(first.RowKey), first.Err)
}

// Unwrap returns the write's *entity.BulkError and every entry's error.
func (e *AppendError) Unwrap() []error {
	if e == nil {
		return nil
	}
	out := make([]error, 0, len(e.NotWritten)+1)
	if e.bulk != nil {
		out = append(out, e.bulk)
	}
	for _, n := range e.NotWritten {
		out = append(out, n.Err)
	}
	return out
}
