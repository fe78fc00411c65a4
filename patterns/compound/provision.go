package compound

import (
	"context"

	"github.com/tablekit/tablekit/internal/argerr"
)

// Provision creates the table of the relation's entities unless it exists,
// as entity.Table.Provision does: nil only when it exists — created now,
// found existing, or found by the resend of a create whose reply was lost —
// and, while the service answers that the name is being deleted, asked again
// until ctx ends (an error matching entity.ErrBeingDeleted then). It is a
// package account Provisioner: account.Provision(ctx, readings, …) creates
// every resource of a program in one call (TestProvisionEveryPattern in
// package account).
func (r *Relation[T, P, C]) Provision(ctx context.Context) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if r == nil || r.t == nil {
		return &ConfigError{Field: "Relation", Reason: argerr.ZeroValue}
	}
	return r.t.Provision(ctx)
}
