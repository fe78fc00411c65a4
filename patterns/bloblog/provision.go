package bloblog

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/internal/provision"
)

// Provision creates the Logger's blob container unless it exists: nil only
// when it exists — created now, found existing (409
// ContainerAlreadyExists), or found by the resend of a create whose reply
// was lost — and, while the service answers that the name is being deleted
// (409 ContainerBeingDeleted), asked again with backoff until ctx ends (an
// error matching entity.ErrBeingDeleted then). Call it before the first
// flush: the Logger creates blobs, not their container. It is a package
// account Provisioner: account.Provision(ctx, logger, …) creates
// every resource of a program in one call (TestProvisionEveryPattern in
// package account). A Reader has no Provision: it reads the container its
// Loggers write.
func (l *Logger) Provision(ctx context.Context) error {
	if err := l.ready(ctx); err != nil {
		return err
	}
	if err := provision.Container(ctx, l.c); err != nil {
		return fmt.Errorf("bloblog: provision: %w", err)
	}
	return nil
}
