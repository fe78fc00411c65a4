package denormalize

import (
	"context"

	"github.com/tablekit/tablekit/internal/argerr"
)

// Provision creates what the Copies store in, unless it exists: the
// sources' table and the targets' table (one, when they share it), as
// entity.Table.Provision does, and the queues and container of
// Config.Processor, when there is one (eventual.Processor.Provision; a
// processor shared with other patterns is provisioned by each, which is
// harmless). It returns nil only when all of them exist — created now,
// found existing, or found by the resend of a create whose reply was lost
// — and, while the service answers that a name is being deleted, asks
// again until ctx ends (an error matching entity.ErrBeingDeleted then). It
// is a package account Provisioner: account.Provision(ctx, copies, …)
// creates every resource of a program in one call
// (TestProvisionEveryPattern in package account).
func (c *Copies[T, S]) Provision(ctx context.Context) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := c.ok(); err != nil {
		return err
	}
	if err := c.sources.Provision(ctx); err != nil {
		return err
	}
	if !c.same {
		if err := c.targets.Provision(ctx); err != nil {
			return err
		}
	}
	if c.cfg.Processor != nil {
		return c.cfg.Processor.Provision(ctx)
	}
	return nil
}
