package wide

import "github.com/tablekit/tablekit/internal/argerr"

// ctxError is this package's refusal of an argument, made by argerr.Ctx
// for a nil context.Context at every exported function and method that
// takes one: "wide: invalid ctx: is nil: …", matching entity.ErrInvalid.
func ctxError(field, reason string) error { return &ConfigError{Field: field, Reason: reason} }

// ok refuses a nil or zero Table, which New never returns.
func (w *Table[T]) ok() error {
	if w == nil || w.rows == nil {
		return &ConfigError{Field: "Table", Reason: argerr.ZeroValue}
	}
	return nil
}
