package indexentity

import (
	"context"
	"errors"
	"slices"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/errline"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// syncMessage asks a worker to bring the OtherPartition and Blob lists of
// one primary in line with it: the list of the value it holds lists it,
// the lists of the other values named do not.
type syncMessage struct {
	PK     string              `json:"pk"`
	RK     string              `json:"rk"`
	Values map[string][]string `json:"values"` // by index name
}

// message is the message for primary pk/rk with the values to look at.
func (s *Set[T]) message(pk, rk string, values map[string][]string) (eventual.Message, error) {
	vals := make(map[string][]string, len(values))
	for k, vs := range values {
		vals[k] = dedupe(vs)
	}
	m, err := s.kind.Message(syncMessage{PK: pk, RK: rk, Values: vals})
	if err != nil {
		return m, err
	}
	m.Key = pk + "/" + rk // keys hold no '/'
	return m, nil
}

// handle is the message handler of the Set's kind.
func (s *Set[T]) handle(ctx context.Context, m syncMessage) error {
	return s.sync(ctx, m.PK, m.RK, m.Values, false)
}

// sync brings the OtherPartition and Blob lists of primary pk/rk in line
// with it: the list of each value it holds lists it, the lists of the
// given values it does not hold do not. It reads the primary again at the
// end and starts over if it changed, so that a sync that read an old
// version never leaves that version's membership behind: every change of
// the primary after the second read sends a message of its own, whose
// sync reads the primary after that change.
//
// A list that cannot be written (unreadable, or a failed request) does
// not stop the others: sync goes on with the rest and returns the errors
// at the end, so that the message is delivered again for that list
// alone. With only (a repair), sync reads and writes the given values'
// lists alone, not the list of the value the primary holds: a damaged
// list of that value is its own finding.
func (s *Set[T]) sync(ctx context.Context, pk, rk string, values map[string][]string, only bool) error {
	seen := map[string][]string{}
	for name, vs := range values {
		if ix, ok := s.byName[name]; ok && ix.remote() {
			seen[name] = slices.Clone(vs)
		}
	}
	attempts := s.cfg.Retry.Attempts
	if attempts <= 0 {
		attempts = 10
	}
	for range attempts {
		p, found, err := s.read(ctx, pk, rk)
		if err != nil {
			return &StepError{Step: "sync: read primary", PartitionKey: pk, RowKey: rk, Err: err}
		}
		var failed []error
		for _, ix := range s.remote {
			var want string
			var has bool
			if found {
				want, has, _ = ix.valueOf(&p.e, pk) // a value that makes no key has no list
			}
			vals := seen[ix.Name]
			if has && !only && !slices.Contains(vals, want) {
				vals = append(vals, want)
				seen[ix.Name] = vals
			}
			for _, v := range vals {
				if err := ix.checkValue(pk, v); err != nil {
					continue // no list can hold it
				}
				if err := s.edit(ctx, ix, pk, v, rk, has && v == want); err != nil {
					if ctx.Err() != nil {
						return err
					}
					failed = append(failed, err)
				}
			}
		}
		if len(failed) > 0 {
			return errline.Join(failed...)
		}
		after, still, err := s.read(ctx, pk, rk)
		if err != nil {
			return &StepError{Step: "sync: read primary", PartitionKey: pk, RowKey: rk, Err: err}
		}
		if still == found && after.etag == p.etag {
			return nil
		}
	}
	return &StepError{Step: "sync", PartitionKey: pk, RowKey: rk, Err: entity.ErrContention}
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
		b := s.entries.NewBatch()
		changed, err := s.change(ix, l, member, add, false, b)
		if err != nil || !changed {
			return err
		}
		_, err = s.entries.Submit(ctx, b)
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
