package large

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// Delete removes the entity with these keys on condition that its ETag is
// still etag (entity.AnyETag: whatever the version, retried from the read
// while other writers interfere; a changed entity is otherwise an error
// matching entity.ErrPreconditionFailed), then deletes its blobs through
// the processor, after Config.DeleteDelay. Delete is idempotent: an entity
// already gone — also what a resent delete finds after a lost reply — is
// not an error.
//
// Storage transactions: the read that finds the blobs' names, the delete,
// and one Put Message (then, in the worker, a Get Messages share, one
// Delete Blob per blob and a Delete Message).
func (t *Table[T]) Delete(ctx context.Context, partitionKey, rowKey, etag string) error {
	if err := t.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if etag == "" {
		return &Error{Op: "delete", PartitionKey: partitionKey, RowKey: rowKey, Err: entity.ErrNoETag}
	}
	var refs []Ref
	round := func(ctx context.Context) error {
		refs = nil
		got, err := t.rows.Get(ctx, partitionKey, rowKey)
		switch {
		case errors.Is(err, entity.ErrNotFound):
			return nil
		case err != nil:
			return err
		case etag != entity.AnyETag && got.ETag != etag:
			return &raced{entity.ErrPreconditionFailed}
		}
		found, _ := t.refsOf(&got) // a reference that does not parse names no blob to delete; Sweep finds it
		err = t.rows.Delete(ctx, partitionKey, rowKey, got.ETag)
		if errors.Is(err, entity.ErrOutcomeUnknown) {
			// The reply was lost: gone is gone, whoever deleted it.
			if _, rerr := t.rows.Get(ctx, partitionKey, rowKey); errors.Is(rerr, entity.ErrNotFound) {
				err = nil
			}
		}
		switch {
		case errors.Is(err, entity.ErrNotFound):
			err = nil // deleted by another since the read; the blobs are as good as gone
		case err == nil:
		case errors.Is(err, entity.ErrPreconditionFailed):
			return &raced{err}
		default:
			return err
		}
		refs = found
		return nil
	}
	var err error
	if etag == entity.AnyETag {
		err = t.cfg.Retry.Retry(ctx, round)
	} else {
		err = round(ctx)
	}
	if err != nil {
		return &Error{Op: "delete", PartitionKey: partitionKey, RowKey: rowKey, Err: err}
	}
	t.hints.put(partitionKey, rowKey, nil)
	var names []string
	for _, r := range refs {
		if !r.IsZero() {
			names = append(names, r.Blob)
		}
	}
	t.enqueueDisposal(context.WithoutCancel(ctx), partitionKey, rowKey, names, nil, t.cfg.DeleteDelay)
	return nil
}
