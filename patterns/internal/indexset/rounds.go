package indexset

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/entityfields"
	"github.com/tablekit/tablekit/internal/errline"
)

// The round driver of the Sets' writes: Insert, Update, Modify and Delete
// read the primary (not Insert), compute the version to write and run
// the package's Writer until the write is applied or refused. Both Sets'
// writes are optimistic: a round lost to another writer of the primary or
// of an index row starts again from the read (Config.Retry), and a round
// that learned something about the index rows (ErrAgain) builds its
// transaction again at once.

// ErrAgain makes the driver build a write's transaction again at once,
// with what the round learned (an old entry already gone, a unique entry
// held by no one); a write does it at most 2·indexes + 4 times in a row,
// then fails with entity.ErrContention.
var ErrAgain = errors.New("build the transaction again")

// ErrRowChanged reports an index row (an entry, a list) that changed
// since the round read it: the driver reads again after a backoff. It
// matches entity.ErrPreconditionFailed, and tells that refusal from the
// primary's own, which ends an Update.
var ErrRowChanged = fmt.Errorf("an index row changed since it was read: %w", entity.ErrPreconditionFailed)

// Writer is a package's side of one write of a primary: what one round
// does, and what the write leaves when it ends.
type Writer[T any] interface {
	// Round builds the transaction that changes the primary from old
	// (nil: there is none) to cur (nil: delete it), with its index rows and
	// the caller's messages, and submits it once (Core.Submit). It returns
	// nil once applied; an error matching ErrAgain to be built again;
	// ErrRowChanged (or another error matching
	// entity.ErrPreconditionFailed) to read again; the service's refusal of
	// the primary's operation as entity reports it; anything else ends the
	// write.
	Round(ctx context.Context, old, cur *Version[T]) error
	// PrimaryRefused reports err as the service's refusal of the primary's
	// own operation of the last round, matching target.
	PrimaryRefused(err, target error) bool
	// Written is the ETag the primary got from the applied round, "" when
	// it is not known (the outcome was settled after a lost reply).
	Written() string
	// End is called once, with the error the write returns (nil when it
	// was applied): it releases what the rounds reserved, and returns the
	// error to report.
	End(ctx context.Context, err error) error
}

func (c *Core[P, T, X]) maxBuilds() int { return 2*len(c.Indexes) + 4 }

// rounds runs w's rounds for one read until the write is applied or
// refused: ErrAgain builds again, at most maxBuilds times, then a
// *StepError of op's submit matching entity.ErrContention.
func (c *Core[P, T, X]) rounds(ctx context.Context, op, pk, rk string, w Writer[T], old, cur *Version[T]) error {
	for n := 0; ; n++ {
		err := w.Round(ctx, old, cur)
		if !errors.Is(err, ErrAgain) {
			return err
		}
		if n >= c.maxBuilds() {
			return &StepError[P]{Step: op + ": submit", PartitionKey: pk, RowKey: rk, Err: entity.ErrContention}
		}
	}
}

// opError is OpError with the package's own named errors.
func (c *Core[P, T, X]) opError(op, pk, rk string, err error) error {
	return OpError[P](op, pk, rk, unstop(err), func(err error) bool {
		return errors.Is(err, ErrAgain) || c.hooks.Named != nil && c.hooks.Named(err)
	})
}

// intend is the version e would be once written as primary pk/rk, its
// values checked (Hooks.Valid).
func (c *Core[P, T, X]) intend(ctx context.Context, e *T, pk, rk string) (Version[T], error) {
	if c.hooks.Valid != nil {
		if err := c.hooks.Valid(e, pk, rk); err != nil {
			return Version[T]{}, err
		}
	}
	return c.Intend(ctx, e)
}

// prepare is the start of Insert and Update of e as primary pk/rk: the
// checks before any request, the version to write, and the write's
// Writer.
func (c *Core[P, T, X]) prepare(ctx context.Context, op string, e *T, pk, rk string, opts []WriteOptions) (Version[T], Writer[T], error) {
	if err := c.ValidKeys(pk, rk); err != nil {
		return Version[T]{}, nil, err
	}
	msgs, err := c.Messages(op, opts)
	if err != nil {
		return Version[T]{}, nil, err
	}
	cur, err := c.intend(ctx, e, pk, rk)
	if err != nil {
		return Version[T]{}, nil, err
	}
	return cur, c.hooks.Writer(pk, rk, msgs), nil
}

// finish reports the ETag the write gave the primary into e; with none
// known (or none new), e's ETag is cleared: read it again before a
// conditional write.
func finish[T any](e *T, written, base string) {
	if written != "" && written != base {
		_ = entityfields.SetWritten(e, written)
		return
	}
	if sys, err := entity.SystemOf(e); err == nil {
		sys.ETag = ""
		_ = entityfields.SetSystem(e, entityfields.System(sys))
	}
}

// Insert adds e and its index rows. See the packages' Insert.
func (c *Core[P, T, X]) Insert(ctx context.Context, e *T, opts []WriteOptions) error {
	if e == nil {
		return NilEntity[T]()
	}
	pk, rk, err := KeyOf(e)
	if err != nil {
		return err
	}
	cur, w, err := c.prepare(ctx, "Insert", e, pk, rk, opts)
	if err != nil {
		return err
	}
	err = c.Retry.Retry(ctx, func(ctx context.Context) error {
		return c.rounds(ctx, "insert", pk, rk, w, nil, &cur)
	})
	if err := w.End(ctx, c.opError("insert", pk, rk, err)); err != nil {
		return err
	}
	finish(e, w.Written(), "")
	return nil
}

// Update replaces the stored primary by e, on condition of e's ETag. See
// the packages' Update.
func (c *Core[P, T, X]) Update(ctx context.Context, e *T, opts []WriteOptions) error {
	if e == nil {
		return NilEntity[T]()
	}
	sys, err := entity.SystemOf(e)
	if err != nil {
		return err
	}
	pk, rk := sys.PartitionKey, sys.RowKey
	if sys.ETag == "" {
		return NoETag[P](pk, rk, c.hooks.UpdateHint)
	}
	cur, w, err := c.prepare(ctx, "Update", e, pk, rk, opts)
	if err != nil {
		return err
	}
	err = c.Retry.Retry(ctx, func(ctx context.Context) error {
		old, found, err := c.Read(ctx, pk, rk)
		switch {
		case err != nil:
			return ReadPrimary[P]("update", pk, rk, err)
		case !found:
			return &stop{NotFound[P]("update", pk, rk)}
		case old.ETag != sys.ETag:
			return &stop{Stale[P]("update", pk, rk, old.ETag, sys.ETag)}
		}
		err = c.rounds(ctx, "update", pk, rk, w, &old, &cur)
		if errors.Is(err, entity.ErrPreconditionFailed) && !errors.Is(err, ErrRowChanged) {
			return &stop{err} // the primary changed since e was read
		}
		return err
	})
	if err := w.End(ctx, c.opError("update", pk, rk, err)); err != nil {
		return err
	}
	finish(e, w.Written(), sys.ETag)
	return nil
}

// Modify reads the primary pk/rk, lets change edit it, and writes it back
// with its index rows, from a fresh read when a writer got there first;
// with opts.Create, a missing primary is created. See the packages'
// Modify.
func (c *Core[P, T, X]) Modify(ctx context.Context, pk, rk string, change func(*T) error, opts entity.ModifyOptions, wopts []WriteOptions) (T, error) {
	var out T
	if err := CheckMode[P]("Modify", opts.Mode); err != nil {
		return out, err
	}
	msgs, err := c.Messages("Modify", wopts)
	if err != nil {
		return out, err
	}
	if change == nil {
		return out, NilChange()
	}
	if err := c.ValidKeys(pk, rk); err != nil {
		return out, err
	}
	w := c.hooks.Writer(pk, rk, msgs)
	var base string
	err = Retry(opts.Retry, c.Retry).Retry(ctx, func(ctx context.Context) error {
		old, found, err := c.Read(ctx, pk, rk)
		switch {
		case err != nil:
			return ReadPrimary[P]("modify", pk, rk, err)
		case !found && !opts.Create:
			return &stop{NotFound[P]("modify", pk, rk)}
		}
		// change gets its own copy: old's rows are computed from old.E,
		// which a change of shared slices or maps must not touch.
		var e T
		prev := &old
		if found {
			e, _, err = c.Rows.Decode(ctx, old.Raw)
		} else {
			e, err = Fresh[T](pk, rk)
			prev = nil // an insert, with its index rows
		}
		if err != nil {
			return &stop{err}
		}
		if err := change(&e); err != nil {
			return &stop{&Given{Err: err}}
		}
		if err := ChangedKeys(&e, pk, rk); err != nil {
			return &stop{err}
		}
		cur, err := c.intend(ctx, &e, pk, rk)
		if err != nil {
			return &stop{err}
		}
		err = c.rounds(ctx, "modify", pk, rk, w, prev, &cur)
		switch {
		case err == nil:
			out, base = e, prev.ETagOr()
		case opts.Create && (!found && w.PrimaryRefused(err, entity.ErrAlreadyExists) || found && w.PrimaryRefused(err, entity.ErrNotFound)):
			return ErrLostCreate // another creator won, or a deleter: read again
		}
		return err
	})
	var g *Given
	if errors.As(unstop(err), &g) {
		return out, w.End(ctx, g.Err) // change's own error, as is
	}
	if err := w.End(ctx, c.opError("modify", pk, rk, err)); err != nil {
		return out, err
	}
	finish(&out, w.Written(), base)
	return out, nil
}

// Delete removes the primary pk/rk and its index rows, on condition of
// etag ("" or entity.AnyETag: whatever its version). See the packages'
// Delete.
func (c *Core[P, T, X]) Delete(ctx context.Context, pk, rk, etag string, opts ...WriteOptions) error {
	if err := c.ValidKeys(pk, rk); err != nil {
		return err
	}
	msgs, err := c.Messages("Delete", opts)
	if err != nil {
		return err
	}
	anyVersion := etag == "" || etag == entity.AnyETag
	w := c.hooks.Writer(pk, rk, msgs)
	var unknown error // the answer of a delete of version tried whose outcome is unknown
	var tried string
	err = c.Retry.Retry(ctx, func(ctx context.Context) error {
		for n := 0; ; n++ {
			old, found, err := c.Read(ctx, pk, rk)
			switch {
			case err != nil:
				return ReadPrimary[P]("delete", pk, rk, err)
			case !found && unknown != nil:
				return nil // the transaction whose outcome was unknown was applied
			case !found:
				return &stop{NotFound[P]("delete", pk, rk)}
			case unknown != nil && old.ETag != tried:
				return &stop{unknown} // applied and written again, or overtaken: no read tells
			case !anyVersion && old.ETag != etag:
				return &stop{Stale[P]("delete", pk, rk, old.ETag, etag)}
			}
			err = w.Round(ctx, &old, nil)
			switch {
			case err == nil:
				return nil
			case errors.Is(err, entity.ErrOutcomeUnknown) && unknown == nil:
				// Deletes carry no write token: the next read tells.
				unknown, tried = err, old.ETag
				continue
			case !errors.Is(err, ErrAgain):
				return err
			}
			if n >= c.maxBuilds() {
				return &StepError[P]{Step: "delete: submit", PartitionKey: pk, RowKey: rk, Err: entity.ErrContention}
			}
		}
	})
	return w.End(ctx, c.opError("delete", pk, rk, err))
}

// Sync is the loop of a Set's message handler for primary pk/rk: for each
// remote index, the row of the value the primary holds lists it
// (Syncer.Apply with holds), and the rows of the given values it does not
// hold do not (holds false). It reads the primary again at the end and
// starts over if it changed, so that a sync that read an old version
// never leaves that version's rows behind: every later change sends a
// message of its own, whose sync reads the primary after that change.
//
// A row that cannot be written does not stop the others: Sync goes on
// with the rest and returns their errors joined at the end, so that the
// message is delivered again for those alone.
func (c *Core[P, T, X]) Sync(ctx context.Context, pk, rk string, values map[string][]string, s Syncer[T, X]) error {
	seen := map[string][]string{}
	for _, x := range c.Remote {
		if vs, ok := values[x.IndexName()]; ok {
			seen[x.IndexName()] = append([]string(nil), vs...)
		}
	}
	for range s.Rounds {
		p, found, err := c.Read(ctx, pk, rk)
		if err != nil {
			return &StepError[P]{Step: "sync: read primary", PartitionKey: pk, RowKey: rk, Err: err}
		}
		var failed []error
		for _, x := range c.Remote {
			var want string
			var has bool
			if found {
				if want, has, err = s.Want(x, &p, pk, rk); err != nil {
					failed = append(failed, err) // this index fails alone
					continue
				}
			}
			vals := seen[x.IndexName()]
			if has && !s.Only && !slices.Contains(vals, want) {
				vals = append(vals, want)
				seen[x.IndexName()] = vals
			}
			for _, v := range vals {
				if err := s.Apply(ctx, x, &p, pk, rk, v, has && v == want); err != nil {
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
		after, still, err := c.Read(ctx, pk, rk)
		if err != nil {
			return &StepError[P]{Step: "sync: read primary", PartitionKey: pk, RowKey: rk, Err: err}
		}
		if still == found && after.ETag == p.ETag {
			return nil
		}
	}
	return &StepError[P]{Step: "sync", PartitionKey: pk, RowKey: rk, Err: entity.ErrContention}
}

// Syncer is what Sync does with each remote index x.
type Syncer[T any, X Index] struct {
	// Rounds bounds the times the primary changes under the sync, then
	// entity.ErrContention.
	Rounds int
	// Only looks at the given values alone, not at the value the primary
	// holds (a repair of one row).
	Only bool
	// Want returns the value primary p (keys pk, rk) holds in x, has
	// false when none; an error fails x alone.
	Want func(x X, p *Version[T], pk, rk string) (value string, has bool, err error)
	// Apply makes x's row of value list primary p (holds) or not (p is
	// the zero Version when the primary is gone).
	Apply func(ctx context.Context, x X, p *Version[T], pk, rk, value string, holds bool) error
}
