package indexentity

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// handle is the message handler of the Set's kind.
func (s *Set[T]) handle(ctx context.Context, m indexset.SyncMessage) error {
	return s.sync(ctx, m.PK, m.RK, m.Values, false)
}

// sync brings the OtherPartition and Blob lists of primary pk/rk in line
// with it (indexset.Core.Sync): the list of each value it holds lists it,
// the lists of the given values it does not hold do not. A list that
// cannot be written (unreadable, or a failed request) does not stop the
// others. With only (a repair), sync reads and writes the given values'
// lists alone, not the list of the value the primary holds: a damaged
// list of that value is its own finding.
func (s *Set[T]) sync(ctx context.Context, pk, rk string, values map[string][]string, only bool) error {
	attempts := s.cfg.Retry.Attempts
	if attempts <= 0 {
		attempts = 10
	}
	return s.core.Sync(ctx, pk, rk, values, indexset.Syncer[T, *index[T]]{
		Rounds: attempts,
		Only:   only,
		Want: func(ix *index[T], p *version[T], pk, _ string) (string, bool, error) {
			v, has, err := ix.valueOf(&p.E, pk)
			return v, has && err == nil, nil // a value that makes no key has no list
		},
		Apply: func(ctx context.Context, ix *index[T], _ *version[T], pk, rk, value string, holds bool) error {
			if ix.checkValue(pk, value) != nil {
				return nil // no list can hold it
			}
			return s.edit(ctx, ix, pk, value, rk, holds)
		},
	})
}

// edit adds member to (or removes it from) value's list of primaries'
// partition pk in an OtherPartition or Blob index, unless it holds (or
// lacks) it already: read, change, write on condition of the ETag read,
// again from the read when another writer got there first. A write whose
// outcome is unknown is read again too: adding or removing a member is
// idempotent.
func (s *Set[T]) edit(ctx context.Context, ix *index[T], pk, value, member string, add bool) error {
	if ix.Placement == Blob {
		return s.editBlob(ctx, ix, pk, value, member, add)
	}
	epk := ix.entryPK(pk)
	if ix.Placement == TableWide {
		member = wideMember(pk, member)
		epk = ix.widePK(value, ix.wideBucket(member))
	}
	err := s.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		l, err := s.readFor(ctx, ix, epk, value, member)
		if err != nil {
			return err
		}
		b := s.core.Entries.NewBatch()
		changed, err := s.change(ix, l, member, add, false, b)
		if err != nil || !changed {
			return err
		}
		_, err = s.core.Entries.Submit(ctx, b)
		if errors.Is(err, entity.ErrOutcomeUnknown) || conflict(err) {
			return errChanged
		}
		return err
	})
	return wrap(err, "sync: write index entity", ix.Name, epk, ix.headRK(value))
}

// conflict reports a refused transaction that another writer of the
// entities it read explains: a changed or deleted entity (412, 404), or
// one inserted meanwhile (409).
func conflict(err error) bool {
	var te *entity.TransactionError
	if !errors.As(err, &te) {
		return false
	}
	return errors.Is(err, entity.ErrPreconditionFailed) || errors.Is(err, entity.ErrNotFound) || errors.Is(err, entity.ErrAlreadyExists)
}
