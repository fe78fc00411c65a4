package rotation

import (
	"context"

	"github.com/tablekit/tablekit/internal/argerr"
)

// Provision creates the catalog table unless it exists, as
// entity.Table.Provision does: nil only when it exists — created now,
// found existing, or found by the resend of a create whose reply was lost
// — and, while the service answers that the name is being deleted, asked
// again until ctx ends (an error matching entity.ErrBeingDeleted then).
// The period tables are not the catalog's: the first write of a period
// creates its table, with Config.Ahead more, and Prepare creates them
// before it. It is a package account Provisioner: account.Provision(ctx,
// logs, …) creates every resource of a program in one call
// (TestProvisionEveryPattern in package account).
func (r *Rotation[T]) Provision(ctx context.Context) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := r.ok(); err != nil {
		return err
	}
	return r.catalog.Provision(ctx)
}
