package indexentity

import "github.com/tablekit/tablekit/internal/argerr"

// ctxError is this package's refusal of an argument, made by argerr.Ctx
// for a nil context.Context at every exported function and method that
// takes one: "indexentity: invalid ctx: is nil: …", matching entity.ErrInvalid.
func ctxError(field, reason string) error { return &ConfigError{Field: field, Reason: reason} }

// ok refuses a nil or zero Set, which New never returns.
func (s *Set[T]) ok() error {
	if s == nil || s.core == nil {
		return &ConfigError{Field: "Set", Reason: argerr.ZeroValue}
	}
	return nil
}
