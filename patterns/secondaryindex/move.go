package secondaryindex

import (
	"context"

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
// A delete whose outcome stays unknown after a lost reply
// (entity.ErrOutcomeUnknown) is settled by the next round's read, as a
// change since the copy is: gone, the move is done; there, it is copied
// and deleted again (indexset.Move, the loop of both index packages).
//
// dst is written as is, without indexes: moving into another Set's
// primaries needs that Set's Insert. dst must be another table than the
// Set's (a *ConfigError otherwise, before any request). A primary that
// another writer deletes during the move leaves its last version in dst.
// The rounds are bounded by Config.Retry.
func (s *Set[T]) MoveTo(ctx context.Context, pk, rk string, dst *entity.Table[T]) error {
	return s.core.MoveTo(ctx, pk, rk, dst)
}
