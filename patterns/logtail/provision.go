package logtail

import (
	"context"

	"github.com/tablekit/tablekit/internal/argerr"
)

// Provision creates the table of the log unless it exists, as
// entity.Table.Provision does: nil only when it exists — created now, found
// existing, or found by the resend of a create whose reply was lost — and,
// while the service answers that the name is being deleted, asked again
// until ctx ends (an error matching entity.ErrBeingDeleted then). It is a
// package account Provisioner: account.Provision(ctx, log, …) creates every
// resource of a program in one call (TestProvisionEveryPattern in package
// account).
func (l *Log[T]) Provision(ctx context.Context) error {
	if err := l.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if l == nil || l.tbl == nil {
		return &ConfigError{Field: "Log", Reason: argerr.ZeroValue}
	}
	return l.tbl.Provision(ctx)
}
