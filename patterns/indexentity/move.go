package indexentity

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/entity"
)

// MoveTo moves the primary pk/rk to table dst (an archive): it copies the
// stored version to dst with entity's InsertOrReplace (Upsert, Replace),
// then deletes it through the Set, on condition of the ETag it copied, so
// that its lists follow it out as any Delete's do. A primary changed
// between the copy and the delete is copied again; one already gone is
// nothing to do (nil). MoveTo is idempotent: run it again after a crash or
// an error and it finishes the move, so it is a step an eventual handler
// can run — the message's redelivery is the retry. It never loses a
// primary: the copy is written before the delete, and an entity that is
// in neither table was deleted by somebody else (TestMoveCrashAtEveryStep).
//
// dst is written as is, without lists: it is another table, not one of
// the Set's. dst must not be the primaries' table (a *ConfigError before
// any request).
func (s *Set[T]) MoveTo(ctx context.Context, pk, rk string, dst *entity.Table[T]) error {
	if dst == nil {
		return &ConfigError{Field: "MoveTo: dst", Reason: "is nil"}
	}
	if dst.Name() != "" && dst.Name() == s.primary.Name() {
		return &ConfigError{Field: "MoveTo: dst", Reason: "is the primaries' table " + dst.Name()}
	}
	if err := s.validKeys(pk, rk); err != nil {
		return err
	}
	err := s.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		v, found, err := s.read(ctx, pk, rk)
		if err != nil {
			return &stop{&StepError{Step: "move: read primary", PartitionKey: pk, RowKey: rk, Err: err}}
		}
		if !found {
			return nil // moved already, or deleted
		}
		e, err := v.copyEntity()
		if err != nil {
			return &stop{&StepError{Step: "move: decode primary", PartitionKey: pk, RowKey: rk, Err: err}}
		}
		if err := dst.Upsert(ctx, &e, entity.Replace); err != nil {
			return &stop{&StepError{Step: "move: copy to " + dst.Name(), PartitionKey: pk, RowKey: rk, Err: err}}
		}
		err = s.Delete(ctx, pk, rk, v.etag)
		switch {
		case err == nil, errors.Is(err, entity.ErrNotFound):
			return nil
		case errors.Is(err, entity.ErrPreconditionFailed):
			return errChanged // changed since the copy: copy the new version
		}
		return &stop{err}
	})
	return unstop(err)
}
