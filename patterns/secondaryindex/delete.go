package secondaryindex

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
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
	if err := s.validKeys(pk, rk); err != nil {
		return err
	}
	msgs, err := s.writeMessages("Delete", opts)
	if err != nil {
		return err
	}
	anyVersion := etag == "" || etag == entity.AnyETag
	w := s.newWrite(pk, rk)
	w.msgs = msgs
	var unknown error // the answer of a delete of version tried whose outcome is unknown
	var tried string
	attempt := func(ctx context.Context) error {
		for n := 0; ; n++ {
			old, found, err := s.read(ctx, pk, rk)
			if err != nil {
				return indexset.ReadPrimary[pkg]("delete", pk, rk, err)
			}
			if !found {
				if unknown != nil {
					return nil // the transaction whose outcome was unknown was applied
				}
				return indexset.NotFound[pkg]("delete", pk, rk)
			}
			if unknown != nil && old.etag != tried {
				return unknown // applied and written again, or overtaken: no read tells
			}
			if !anyVersion && old.etag != etag {
				return indexset.Stale[pkg]("delete", pk, rk, old.etag, etag)
			}
			w.old, w.cur = &old, nil
			err = w.round(ctx)
			switch {
			case err == nil:
				return nil
			case errors.Is(err, entity.ErrOutcomeUnknown) && unknown == nil:
				// Deletes carry no write token: the next read tells.
				unknown, tried = err, old.etag
				continue
			case !errors.Is(err, errAgain):
				return err
			}
			if n >= s.maxBuilds() {
				return &StepError{Step: "delete: submit", PartitionKey: pk, RowKey: rk, Err: entity.ErrContention}
			}
		}
	}
	if anyVersion {
		err = s.cfg.Retry.Retry(ctx, attempt)
	} else {
		err = attempt(ctx)
	}
	return opError("delete", pk, rk, err)
}
