package dataseries

import "github.com/tablekit/tablekit/internal/argerr"

// ctxError is this package's refusal of an argument, made by argerr.Ctx
// for a nil context.Context at every exported function and method that
// takes one: "dataseries: invalid ctx: is nil: …", matching entity.ErrInvalid.
func ctxError(field, reason string) error { return &ConfigError{Field: field, Reason: reason} }

// ok refuses a nil or zero Series, which New never returns.
func (s *Series) ok() error {
	if s == nil || s.tbl == nil {
		return &ConfigError{Field: "Series", Reason: argerr.ZeroValue}
	}
	return nil
}
