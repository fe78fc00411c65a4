package indexentity

import (
	"context"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// MoveTo moves the primary pk/rk to table dst (an archive): it reads the
// entity with the primary's keys in dst (its ETag), then the stored
// version, copies it to dst on condition that dst's entity is still the
// one read (an insert when there was none, else a replace on its ETag),
// then deletes it through the Set, on condition of the ETag it copied, so
// that its lists follow it out as any Delete's do. dst's ETag, read
// before the primary, keeps a move that read an older version from
// overwriting the newer one another move copied and deleted meanwhile
// (TestMoveToBesideAMoveOfANewerVersion). A primary changed between the
// copy and the delete, or a dst entity changed between its read and the
// copy, is read and copied again; one already gone is
// nothing to do (nil). MoveTo is idempotent: run it again after a crash or
// an error and it finishes the move, so it is a step an eventual handler
// can run — the message's redelivery is the retry. It never loses a
// primary: the copy is written before the delete, and an entity that is
// in neither table was deleted by somebody else (TestMoveCrashAtEveryStep).
//
// A copy or delete whose outcome stays unknown after a lost reply
// (entity.ErrOutcomeUnknown) is settled by the next round's reads, as a
// change since the copy is (indexset.Move, the loop of both index
// packages).
//
// dst is written as is, without lists: it is another table, not one of
// the Set's. dst must not be the primaries' table (a *ConfigError before
// any request).
func (s *Set[T]) MoveTo(ctx context.Context, pk, rk string, dst *entity.Table[T]) error {
	if err := s.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	return s.core.MoveTo(ctx, pk, rk, dst)
}
