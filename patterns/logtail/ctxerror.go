package logtail

import "github.com/tablekit/tablekit/internal/argerr"

// ctxError is this package's refusal of an argument, made by argerr.Ctx
// for a nil context.Context at every exported function and method that
// takes one: "logtail: invalid ctx: is nil: …", matching entity.ErrInvalid.
func ctxError(field, reason string) error { return &ConfigError{Field: field, Reason: reason} }

// ok refuses a nil or zero Log, which New never returns.
func (l *Log[T]) ok() error {
	if l == nil || l.tbl == nil {
		return &ConfigError{Field: "Log", Reason: argerr.ZeroValue}
	}
	return nil
}
