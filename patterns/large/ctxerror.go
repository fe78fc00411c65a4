package large

import "github.com/tablekit/tablekit/internal/argerr"

// ctxError is this package's refusal of an argument, made by argerr.Ctx
// for a nil context.Context at every exported function and method that
// takes one: "large: invalid ctx: is nil: …", matching entity.ErrInvalid.
func ctxError(field, reason string) error { return &ConfigError{Field: field, Reason: reason} }

// ok refuses a nil or zero Table, which New never returns.
func (t *Table[T]) ok() error {
	if t == nil || t.rows == nil || t.blobs == nil {
		return &ConfigError{Field: "Table", Reason: argerr.ZeroValue}
	}
	return nil
}
