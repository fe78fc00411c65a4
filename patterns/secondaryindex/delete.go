package secondaryindex

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/entity"
)

// Delete removes the entity with keys pk, rk and its entries, if its ETag
// is still etag (entity.ErrPreconditionFailed otherwise); "" or
// entity.AnyETag deletes whatever its version, retrying from a fresh
// read when a writer changes it meanwhile. A missing entity is an error
// matching entity.ErrNotFound.
func (s *Set[T]) Delete(ctx context.Context, pk, rk, etag string) error {
	if err := s.validKeys(pk, rk); err != nil {
		return err
	}
	anyVersion := etag == "" || etag == entity.AnyETag
	w := s.newWrite(pk, rk)
	deleted := false
	attempt := func(ctx context.Context) error {
		for n := 0; ; n++ {
			old, found, err := s.read(ctx, pk, rk)
			if err != nil {
				return &StepError{Step: "delete: read primary", PartitionKey: pk, RowKey: rk, Err: err}
			}
			if !found {
				if deleted {
					return nil // the transaction whose outcome was unknown was applied
				}
				return &StepError{Step: "delete", PartitionKey: pk, RowKey: rk, Err: entity.ErrNotFound}
			}
			if !anyVersion && old.etag != etag {
				return &StepError{Step: "delete", PartitionKey: pk, RowKey: rk, Err: fmt.Errorf("the stored version is %s, not %s: %w", old.etag, etag, entity.ErrPreconditionFailed)}
			}
			w.old, w.cur = &old, nil
			err = w.round(ctx)
			switch {
			case err == nil:
				return nil
			case errors.Is(err, entity.ErrOutcomeUnknown) && !deleted:
				// Deletes carry no write token: the next read tells.
				deleted = true
				continue
			case !errors.Is(err, errAgain):
				return err
			}
			if n >= s.maxBuilds() {
				return &StepError{Step: "delete: submit", PartitionKey: pk, RowKey: rk, Err: entity.ErrContention}
			}
		}
	}
	var err error
	if anyVersion {
		err = s.cfg.Retry.Retry(ctx, attempt)
	} else {
		err = attempt(ctx)
	}
	return opError("delete", pk, rk, err)
}
