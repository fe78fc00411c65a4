package large

import (
	"context"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// Replace writes e over the stored entity on condition that its ETag is
// still e's (entity.AnyETag: whatever the version, retried from the read
// while other writers interfere): a changed entity is an error matching
// entity.ErrPreconditionFailed, a missing one entity.ErrNotFound, and
// neither uploads anything.
//
// Replace reads the stored entity first. A []byte or string value equal
// to the stored one (same size and SHA-256) keeps its blob; a Stream read
// by Get keeps its blob; any other value is uploaded as a new blob. Then
// the entity is replaced, on condition of the version read, and the
// blobs it no longer references are deleted through the processor, after
// Config.DeleteDelay.
//
// Storage transactions: the read, one Put Blob per changed value, the
// replace, and one Put Message when a blob is to be deleted (its deletion
// costs a Get Messages share, the Delete Blob and a Delete Message, in
// the worker).
func (t *Table[T]) Replace(ctx context.Context, e *T) error {
	if err := t.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	etag := ""
	if e != nil {
		sys, err := entity.SystemOf(e)
		if err != nil {
			return &Error{Op: "replace", Err: err}
		}
		etag = sys.ETag
		if etag == "" {
			return &Error{Op: "replace", PartitionKey: sys.PartitionKey, RowKey: sys.RowKey, Err: entity.ErrNoETag}
		}
	}
	return t.write(ctx, "replace", e, condETag, etag)
}
