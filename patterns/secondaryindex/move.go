package secondaryindex

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/entity"
)

// MoveTo moves the primary pk/rk to dst (an archive table, say) with its
// entries: it copies the primary to dst with an upsert (InsertOrReplace),
// then deletes it through the Set, on condition of the version copied, so
// that its entries go too (SamePartition ones in the delete's transaction,
// the others by the index message it commits). A primary changed between
// the copy and the delete is copied again; a missing primary is a move
// done already, and nil: MoveTo is an idempotent step, to be called again
// after any failure or crash, and as a patterns/eventual handler's step
// (TestMoveCrashAtEveryStep). It is what eventual.Move does for a table
// the Set does not manage — eventual.Move's plain delete would leave the
// entries behind as orphans (see the package documentation's Ownership).
//
// dst is written as is, without indexes: moving into another Set's
// primaries needs that Set's Insert. dst must be another table than the
// Set's (a *ConfigError otherwise, before any request). A primary that
// another writer deletes during the move leaves its last version in dst.
func (s *Set[T]) MoveTo(ctx context.Context, pk, rk string, dst *entity.Table[T]) error {
	switch {
	case dst == nil:
		return &ConfigError{Field: "MoveTo", Reason: "the destination table is nil"}
	case dst.Name() != "" && dst.Name() == s.primary.Name():
		return &ConfigError{Field: "MoveTo", Reason: "the destination is the Set's own table " + dst.Name()}
	}
	if err := s.validKeys(pk, rk); err != nil {
		return err
	}
	for range maxRounds {
		p, found, err := s.read(ctx, pk, rk)
		if err != nil {
			return &StepError{Step: "move: read primary", PartitionKey: pk, RowKey: rk, Err: err}
		}
		if !found {
			return nil // moved already (or never there)
		}
		e := p.e
		if err := dst.Upsert(ctx, &e, entity.Replace); err != nil {
			return &StepError{Step: "move: copy", PartitionKey: pk, RowKey: rk, Err: err}
		}
		err = s.Delete(ctx, pk, rk, p.etag)
		switch {
		case err == nil || errors.Is(err, entity.ErrNotFound):
			return nil
		case errors.Is(err, entity.ErrPreconditionFailed):
			continue // changed since the copy: copy the new version
		}
		return err
	}
	return &StepError{Step: "move", PartitionKey: pk, RowKey: rk, Err: entity.ErrContention}
}
