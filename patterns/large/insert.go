package large

import (
	"context"

	"github.com/tablekit/tablekit/internal/argerr"
)

// Insert adds e: its blob fields' values are uploaded first, each as a
// blob of its own, then the entity is inserted with their references. An
// entity with the same keys is an error matching entity.ErrAlreadyExists,
// and the blobs just written are deleted (through the processor). The new
// ETag and Timestamp are written back into e, and each Stream field
// becomes the stored value.
//
// Storage transactions: one Put Blob per blob field with a value (more
// for a Stream larger than Config.BlockSize), and the insert.
func (t *Table[T]) Insert(ctx context.Context, e *T) error {
	if err := t.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	return t.write(ctx, "insert", e, condInsert, "")
}
