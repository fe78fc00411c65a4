package integration

import (
	"context"
	"errors"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

// Scratch resources for programs: the tour, examples and benchmarks that
// run outside a test's Cleanup. Each is created with a unique name built
// from hint (as the test helpers name theirs) and comes with a drop function
// that deletes it; drop uses a fresh context, so it works after ctx ends, and
// deleting what is already gone is not an error.

// ScratchTable creates a uniquely named table and returns a client for it
// and a function that deletes it.
func (e *Env) ScratchTable(ctx context.Context, hint string) (*aztables.Client, func() error, error) {
	if e.viewErr != nil {
		return nil, nil, e.viewErr
	}
	return e.scratchTable(ctx, e.TableService, hint)
}

func (e *Env) scratchTable(ctx context.Context, svc *aztables.ServiceClient, hint string) (*aztables.Client, func() error, error) {
	name, err := e.uniqueName(hint)
	if err != nil {
		return nil, nil, err
	}
	if _, err := svc.CreateTable(ctx, name, nil); err != nil {
		return nil, nil, fmt.Errorf("integration: creating table %s: %w", name, err)
	}
	return svc.NewClient(name), func() error { return dropTable(svc, name) }, nil
}

// dropTable deletes a table with a fresh context; a table already gone is
// not an error.
func dropTable(svc *aztables.ServiceClient, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if _, err := svc.DeleteTable(ctx, name, nil); err != nil && !isNotFound(err) {
		return fmt.Errorf("integration: deleting table %s: %w", name, err)
	}
	return nil
}

// ScratchQueue creates a uniquely named queue and returns a client for it
// and a function that deletes it.
func (e *Env) ScratchQueue(ctx context.Context, hint string) (*azqueue.QueueClient, func() error, error) {
	if e.viewErr != nil {
		return nil, nil, e.viewErr
	}
	if e.QueueService == nil {
		return nil, nil, errors.New("integration: this account has no queue service")
	}
	name, err := e.uniqueName(hint)
	if err != nil {
		return nil, nil, err
	}
	q := e.QueueService.NewQueueClient(name)
	if _, err := q.Create(ctx, nil); err != nil {
		return nil, nil, fmt.Errorf("integration: creating queue %s: %w", name, err)
	}
	drop := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if _, err := q.Delete(ctx, nil); err != nil && !isNotFound(err) {
			return fmt.Errorf("integration: deleting queue %s: %w", name, err)
		}
		return nil
	}
	return q, drop, nil
}

// ScratchContainer creates a uniquely named blob container and returns a
// client for it and a function that deletes it.
func (e *Env) ScratchContainer(ctx context.Context, hint string) (*container.Client, func() error, error) {
	if e.viewErr != nil {
		return nil, nil, e.viewErr
	}
	if e.BlobService == nil {
		return nil, nil, errors.New("integration: this account has no blob service")
	}
	name, err := e.uniqueName(hint)
	if err != nil {
		return nil, nil, err
	}
	c := e.BlobService.ServiceClient().NewContainerClient(name)
	if _, err := c.Create(ctx, nil); err != nil {
		return nil, nil, fmt.Errorf("integration: creating container %s: %w", name, err)
	}
	drop := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if _, err := c.Delete(ctx, nil); err != nil && !isNotFound(err) {
			return fmt.Errorf("integration: deleting container %s: %w", name, err)
		}
		return nil
	}
	return c, drop, nil
}
