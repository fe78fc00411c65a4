package filter

import (
	"errors"
	"strconv"

	"github.com/tablekit/tablekit/internal/argerr"
)

// ErrInvalidFilter is the sentinel every build error matches with errors.Is:
// an invalid property name, a value with no OData literal (NaN, a nil pointer,
// an unsupported Go type, invalid UTF-8, ...), or a malformed expression.
var ErrInvalidFilter = errors.New("filter: invalid filter")

// Error describes why an expression cannot be built. It is carried inside the
// Expr that caused it and returned by Expr.Build; errors.Is(err,
// ErrInvalidFilter) and errors.Is(err, entity.ErrInvalid) hold for every
// *Error: a query or a call given it refuses it before any request.
//
// The message quotes the property name with Go syntax but never includes the
// offending value, so it is safe to log.
type Error struct {
	// Property is the property the comparison is about; empty for errors
	// about the expression structure (for example Not of an empty Expr).
	Property string
	// Reason says what is wrong, in words.
	Reason string
}

func (e *Error) Error() string {
	if e == nil {
		return "filter: invalid filter: <nil>"
	}
	if e.Property == "" {
		return "filter: invalid filter: " + e.Reason
	}
	return "filter: invalid filter: property " + strconv.Quote(e.Property) + ": " + e.Reason
}

// Is reports whether target is ErrInvalidFilter or entity.ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalidFilter || target == argerr.Err }

func invalid(prop, reason string) *Error { return &Error{Property: prop, Reason: reason} }
