package dataseries

import (
	"context"

	"github.com/tablekit/tablekit/internal/argerr"
)

// Provision creates the table of the series unless it exists, as
// entity.Table.Provision does: nil only when it exists — created now, found
// existing, or found by the resend of a create whose reply was lost — and,
// while the service answers that the name is being deleted, asked again
// until ctx ends (an error matching entity.ErrBeingDeleted then). It is a
// package account Provisioner: account.Provision(ctx, counts, …) creates
// every resource of a program in one call (TestProvisionEveryPattern in
// package account).
func (s *Series) Provision(ctx context.Context) error {
	if err := s.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if s == nil || s.tbl == nil {
		return &ConfigError{Field: "Series", Reason: argerr.ZeroValue}
	}
	return s.tbl.Provision(ctx)
}
