package sas

import (
	"errors"
	"strings"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// ErrInvalid reports a signature value, token, URL, key or connection string
// that cannot be used: nothing was signed and nothing was sent. Every
// *FieldError matches it, and matches entity.ErrInvalid too.
var ErrInvalid = errors.New("sas: invalid")

// FieldError names the field that is wrong and why. Field is the query
// parameter where there is one ("spk", "se", "sig"), else the Go field or
// input ("Table", "AccountKey", "URL").
type FieldError struct {
	Field  string
	Value  string // the offending value, shortened for display; never a key or signature
	Reason string
	Err    error // the underlying cause, such as a *keys.KeyError
}

func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString("sas: ")
	b.WriteString(e.Field)
	b.WriteString(": ")
	b.WriteString(e.Reason)
	if e.Value != "" {
		b.WriteString(": got ")
		b.WriteString(e.Value)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalid) and errors.Is(err, entity.ErrInvalid)
// true.
func (e *FieldError) Is(target error) bool {
	return target == ErrInvalid || target == entity.ErrInvalid
}

// Unwrap returns the underlying cause.
func (e *FieldError) Unwrap() error { return e.Err }

// invalid returns a *FieldError for field, quoting value ("" for none).
func invalid(field, value, reason string) *FieldError {
	e := &FieldError{Field: field, Reason: reason}
	if value != "" {
		e.Value = quote(value)
	}
	return e
}

// quote shortens a value for an error message, as every error of
// tablekit quotes a key or a value (argerr.Quote).
func quote(s string) string { return argerr.Quote(s) }
