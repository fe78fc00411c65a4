package bucket

import "github.com/tablekit/tablekit/internal/argerr"

// ctxError is this package's refusal of an argument, made by argerr.Ctx
// for a nil context.Context at every exported function and method that
// takes one: "bucket: invalid ctx: is nil: …", matching entity.ErrInvalid.
func ctxError(field, reason string) error { return &ConfigError{Field: field, Reason: reason} }

// ok refuses a nil or zero Spread, which New never returns.
func (s *Spread[T]) ok() error {
	if s == nil || s.tbl == nil {
		return &ConfigError{Field: "Spread", Reason: argerr.ZeroValue}
	}
	return nil
}
