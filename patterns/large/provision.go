package large

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/provision"
)

// Provision creates what the Table stores in, unless it exists: its table
// (entity.Table.Provision), its blob container, and the queues of
// Config.Processor, when there is one (eventual.Processor.Provision; a
// processor shared with other patterns is provisioned by each, which is
// harmless). It returns nil only when all of them exist — created now,
// found existing, or found by the resend of a create whose reply was lost
// — and, while the service answers that a name is being deleted, asks
// again until ctx ends (an error matching entity.ErrBeingDeleted then). It
// is a package account Provisioner: account.Provision(ctx, emps, …)
// creates every resource of a program in one call
// (TestProvisionEveryPattern in package account).
func (t *Table[T]) Provision(ctx context.Context) error {
	if err := t.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if t == nil || t.rows == nil || t.blobs == nil {
		return &ConfigError{Field: "Table", Reason: argerr.ZeroValue}
	}
	if err := t.rows.Provision(ctx); err != nil {
		return err
	}
	if err := provision.Container(ctx, t.blobs); err != nil {
		return fmt.Errorf("large: provision: %w", err)
	}
	if t.proc != nil {
		return t.proc.Provision(ctx)
	}
	return nil
}
