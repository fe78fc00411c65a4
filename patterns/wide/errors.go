package wide

import (
	"errors"
	"fmt"
	"github.com/tablekit/tablekit/internal/argerr"
	"strconv"

	"github.com/tablekit/tablekit/entity"
)

var (
	// ErrTooLarge reports a logical entity that one transaction cannot
	// write: it needs more than MaxRows rows, or more than the 4 MiB of a
	// transaction. It comes as a *TooLargeError, which also matches
	// entity.ErrInvalid; nothing was sent.
	ErrTooLarge = errors.New("wide: entity too large for one transaction")
	// ErrTorn reports a read that found rows of different versions every
	// time it tried (Config.ReadAttempts): writers kept committing between
	// the pages of the query.
	ErrTorn = errors.New("wide: rows of different versions on every read")
	// ErrCorrupt reports rows in a logical entity's key range that no write
	// of this package left: a head without its bookkeeping, a property in
	// two rows.
	ErrCorrupt = errors.New("wide: rows are not a wide entity")
	// ErrInvalidETag reports an ETag that no read or write of this package
	// returned. It comes as an *ETagError, which also matches
	// entity.ErrInvalid; nothing was sent.
	ErrInvalidETag = errors.New("wide: not the etag of a wide entity")
)

// Error reports a failed operation on one logical entity. It unwraps to the
// cause, so errors.Is(err, entity.ErrPreconditionFailed),
// entity.ErrNotFound, entity.ErrAlreadyExists, entity.ErrOutcomeUnknown
// and the sentinels of this package work through it.
type Error struct {
	Op           string // "get", "insert", "replace", "modify", "upsert", "delete"
	PartitionKey string
	ID           string // the logical entity's RowKey
	Err          error
}

func (e *Error) Error() string {
	return fmt.Sprintf("wide: %s (%s): %v", e.Op, argerr.Keys(e.PartitionKey, e.ID), e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// TooLargeError reports a logical entity that one transaction cannot
// write.
type TooLargeError struct {
	Properties int   // the entity's user properties
	Rows       int   // the rows they need; 0 when more than MaxRows
	Err        error // the transaction's *entity.BatchError when it is over 4 MiB
}

func (e *TooLargeError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("%v: %d properties need more than %d rows of 252 properties and 1 MiB", ErrTooLarge, e.Properties, MaxRows)
	}
	return fmt.Sprintf("%v: %d properties in %d rows: %v", ErrTooLarge, e.Properties, e.Rows, e.Err)
}

// Is makes errors.Is(err, ErrTooLarge) and errors.Is(err, entity.ErrInvalid)
// true.
func (e *TooLargeError) Is(target error) bool {
	return target == ErrTooLarge || target == entity.ErrInvalid
}

func (e *TooLargeError) Unwrap() error { return e.Err }

// ETagError reports an ETag that is not one of a logical entity.
type ETagError struct {
	ETag string
}

func (e *ETagError) Error() string {
	return fmt.Sprintf("%v: %s (pass the ETag a read or write of this package returned)", ErrInvalidETag, strconv.Quote(e.ETag))
}

// Is makes errors.Is(err, ErrInvalidETag) and errors.Is(err,
// entity.ErrInvalid) true.
func (e *ETagError) Is(target error) bool {
	return target == ErrInvalidETag || target == entity.ErrInvalid
}

// ConfigError reports an argument of New that cannot work: "wide: invalid
// <Field>: <Reason>", Field naming it ("table", "Config.PageSize"),
// Reason saying what is wanted. It matches entity.ErrInvalid, as every
// package's ConfigError does; nothing was sent.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string { return argerr.Message("wide", e.Field, e.Reason) }

// Is makes errors.Is(err, entity.ErrInvalid) true.
func (e *ConfigError) Is(target error) bool { return target == argerr.Err }

// ReasonNil is the Reason of a *ConfigError about a nil argument.
const ReasonNil = "is nil"

// errNoETag is a Replace of a value without an ETag: it matches
// entity.ErrNoETag and says what to do.
var errNoETag = fmt.Errorf("%w: read it first, or use Upsert to write whatever its version", entity.ErrNoETag)

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// tornError is one read that found rows of different versions.
type tornError struct{ reason string }

func (e *tornError) Error() string { return "rows of different versions: " + e.reason }

func torn(format string, args ...any) error { return &tornError{fmt.Sprintf(format, args...)} }
