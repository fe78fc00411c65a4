package secondaryindex

import (
	"context"

	"github.com/tablekit/tablekit/internal/argerr"
)

// Delete removes the entity with keys pk, rk and its entries, if its ETag
// is still etag (entity.ErrPreconditionFailed otherwise); "" or
// entity.AnyETag deletes whatever its version, retrying from a fresh
// read when a writer changes it meanwhile. A missing entity is an error
// matching entity.ErrNotFound.
//
// A delete whose reply was lost carries no write token: Delete reads the
// entity again. Gone, the delete was applied; the version it deleted
// still there, it was not, and Delete goes on; another version there
// (this delete applied and the entity written again by another process
// inside the retry window, or another process's change before it) is
// entity.ErrOutcomeUnknown: Delete neither reports it refused nor deletes
// the other process's version (TestLostReplyBesideWriter).
//
// opts may carry the caller's messages, committed with the delete
// (WriteOptions); a Delete that finds nothing to delete sends none.
func (s *Set[T]) Delete(ctx context.Context, pk, rk, etag string, opts ...WriteOptions) error {
	if err := s.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	return s.core.Delete(ctx, pk, rk, etag, opts...)
}
