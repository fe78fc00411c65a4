package resolver

import "github.com/tablekit/tablekit/internal/argerr"

// ctxError is this package's refusal of an argument, made by argerr.Ctx
// for a nil context.Context at every exported function and method that
// takes one: "resolver: invalid ctx: is nil: …", matching
// entity.ErrInvalid.
func ctxError(field, reason string) error {
	return invalidArg(argerr.Message("resolver", field, reason))
}
