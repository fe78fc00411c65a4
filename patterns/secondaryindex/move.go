package secondaryindex

import (
	"context"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// MoveTo moves the primary pk/rk to dst (an archive table, say) with its
// entries: it reads the entity with the primary's keys in dst (its ETag),
// then the primary, copies the primary to dst on condition that dst's
// entity is still the one read (an insert when there was none, else a
// replace on its ETag), then deletes the primary through the Set, on
// condition of the version copied, so that its entries go too
// (SamePartition ones in the delete's transaction, the others by the
// index message it commits). dst's ETag, read before the primary, keeps
// a move that read an older version from overwriting the newer one
// another move copied and deleted meanwhile
// (TestMoveToBesideAMoveOfANewerVersion). A primary changed between the
// copy and the delete, or a dst entity changed between its read and the
// copy, is read and copied again; a missing primary is a move
// done already, and nil: MoveTo is an idempotent step, to be called again
// after any failure or crash, and as a patterns/eventual handler's step
// (TestMoveCrashAtEveryStep). It is what eventual.Move does for a table
// the Set does not manage — eventual.Move's plain delete would leave the
// entries behind as orphans (see the package documentation's Ownership).
//
// A copy or delete whose outcome stays unknown after a lost reply
// (entity.ErrOutcomeUnknown) is settled by the next round's reads, as a
// change since the copy is: gone, the move is done; there, it is copied
// and deleted again (indexset.Move, the loop of both index packages).
// A round costs 3 requests and the delete's (a transaction; the
// message's intent, enqueue and delete with remote indexes).
//
// dst is written as is, without indexes: moving into another Set's
// primaries needs that Set's Insert. dst must be another table than the
// Set's (a *ConfigError otherwise, before any request). A primary that
// another writer deletes during the move leaves its last version in dst.
// The rounds are bounded by Config.Retry.
func (s *Set[T]) MoveTo(ctx context.Context, pk, rk string, dst *entity.Table[T]) error {
	if err := s.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	return s.core.MoveTo(ctx, pk, rk, dst)
}
