package secondaryindex

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/errline"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// errAgain makes a write build its transaction again after learning
// something about its entries (an old entry already gone, a unique entry
// held by nobody).
var errAgain = indexset.ErrAgain

// write is one change of a primary, from old (nil: none) to cur (nil:
// deleted), run in rounds until it is applied or refused: the Writer of
// the Set's engine (indexset.Core), which runs the rounds.
type write[T any] struct {
	s      *Set[T]
	pk, rk string
	old    *version[T]
	cur    *version[T]

	// What earlier rounds learned, by entry RowKey.
	gone     map[string]bool   // an old SamePartition entry that is missing
	takeover map[string]string // a unique entry held by no one: its ETag
	// Values reserved in OtherPartition indexes by any round, by index:
	// the message of the round that commits (or a clean-up message)
	// releases those the primary does not hold.
	reserved map[string][]string
	// This round's reservations and when the first was sent.
	reservedNow int
	reservedAt  time.Time

	msgs    []eventual.Message    // the caller's (WriteOptions.Messages)
	primary *entity.DynamicEntity // the primary's operation, for its new ETag
	roles   []role                // the roles of the transaction's operations
	offset  int                   // operations before ours (outbox intents)
}

type roleKind uint8

const (
	rolePrimary roleKind = iota + 1
	roleDelete           // delete an old SamePartition entry
	rolePut              // insert, replace or upsert a SamePartition entry
)

type role struct {
	kind   roleKind
	name   string // the index's
	erk    string
	value  string
	unique bool // the insert or replace of a unique entry
}

func (s *Set[T]) newWrite(pk, rk string, msgs []eventual.Message) indexset.Writer[T] {
	return &write[T]{s: s, pk: pk, rk: rk, msgs: msgs, gone: map[string]bool{}, takeover: map[string]string{}, reserved: map[string][]string{}}
}

// entryOf returns the keys of v's entry in ix; has is false when v is nil
// or not indexed.
func (w *write[T]) entryOf(ix *index[T], v *version[T]) (epk, erk, value string, has bool, err error) {
	if v == nil {
		return "", "", "", false, nil
	}
	return ix.entryKeys(&v.E, w.pk, w.rk)
}

// Round builds and submits the transaction from old to cur once. It
// returns errAgain when the transaction must be built again, the
// service's error, or nil once applied.
func (w *write[T]) Round(ctx context.Context, old, cur *version[T]) error {
	s := w.s
	w.old, w.cur = old, cur
	msg, err := w.reserve(ctx)
	if err != nil {
		return err
	}
	build := func(b *entity.Batch) error {
		w.offset = b.Len()
		w.roles = w.roles[:0]
		return w.build(b)
	}
	sctx := ctx
	if w.reservedNow > 0 && w.old == nil {
		// An insert's reservations protect it for Grace: past half of it,
		// it is not sent (see the package documentation). An update's
		// need no deadline: a taker fences the primary first.
		var cancel context.CancelFunc
		sctx, cancel = context.WithDeadline(ctx, w.reservedAt.Add(s.cfg.Grace/2))
		defer cancel()
	}
	late := func(err error) error {
		// The insert's own deadline, not the caller's: not sent (nothing
		// applied), or cut in flight (entity.ErrOutcomeUnknown).
		return &StepError{Step: "insert: send within Config.Grace/2 of the reservation", PartitionKey: w.pk, RowKey: w.rk, Err: err}
	}
	if sctx != ctx && sctx.Err() != nil && ctx.Err() == nil {
		return late(sctx.Err()) // the reservations took too long: nothing is sent
	}
	msgs := w.msgs
	if msg != nil {
		msgs = append([]eventual.Message{*msg}, w.msgs...)
	}
	err = s.core.Submit(sctx, w.pk, build, msgs)
	if err == nil {
		return nil
	}
	if sctx != ctx && sctx.Err() != nil && ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, entity.ErrOutcomeUnknown)) {
		return late(err)
	}
	return w.refused(ctx, err)
}

// build adds the primary's operation and the SamePartition entries'.
func (w *write[T]) build(b *entity.Batch) error {
	w.primary = indexset.PrimaryOp(b, w.pk, w.rk, w.old, w.cur)
	w.roles = append(w.roles, role{kind: rolePrimary})
	for _, ix := range w.s.core.Local {
		_, oldK, _, oldHas, err := w.entryOf(ix, w.old)
		if err != nil {
			return err
		}
		_, newK, newV, newHas, err := w.entryOf(ix, w.cur)
		if err != nil {
			return err
		}
		r := role{name: ix.Name, erk: newK, value: newV, unique: ix.Unique}
		if oldHas && newHas && oldK == newK {
			want := ix.copyOf(w.cur, w.pk, newK, w.pk, w.rk)
			if sameCopy(want, ix.copyOf(w.old, w.pk, oldK, w.pk, w.rk)) {
				continue // the entry holds this already
			}
			b.Upsert(want, entity.Replace)
			r.kind = rolePut
			r.unique = false // replaces its own entry
			w.roles = append(w.roles, r)
			continue
		}
		if oldHas && !w.gone[oldK] {
			b.Delete(w.pk, oldK, entity.AnyETag)
			w.roles = append(w.roles, role{kind: roleDelete, name: ix.Name, erk: oldK})
		}
		if newHas {
			want := ix.copyOf(w.cur, w.pk, newK, w.pk, w.rk)
			r.kind = rolePut
			switch etag, held := w.takeover[newK]; {
			case !ix.Unique:
				b.Upsert(want, entity.Replace)
			case held:
				want.ETag = etag
				b.Update(want, entity.Replace)
			default:
				b.Insert(want)
			}
			w.roles = append(w.roles, r)
		}
	}
	return nil
}

// refused decides what a refused transaction means: the caller's
// business (the primary's operation failed), another round (an entry's
// operation failed on something this write can fix), or a *UniqueError.
//
// A resent transaction refused at an operation after the primary's (an
// entry's), whose outcome entity could not settle (ErrOutcomeUnknown), is
// settled here: the resend passed the primary's operation, which is
// conditional (an insert, or a write on the ETag read), so the first try
// did not change the primary and was not applied; the refusal is then
// the transaction's answer, read as any other (a unique entry held by
// another primary that holds the value is a *UniqueError, one left by no
// primary is taken over in the next round). The one case this misreads:
// an Insert applied, then, inside azcore's retry window, its primary
// deleted and the value given to another primary by other processes —
// reported as refused although it was applied and undone meanwhile.
func (w *write[T]) refused(ctx context.Context, err error) error {
	var te *entity.TransactionError
	if !errors.As(err, &te) {
		var oe *entity.OutcomeError
		if !errors.As(err, &oe) || !errors.As(oe.Last, &te) || te.Index-w.offset < 1 {
			return err
		}
	}
	i := te.Index - w.offset
	if i < 0 || i >= len(w.roles) {
		return err
	}
	r := w.roles[i]
	switch {
	case r.kind == roleDelete && errors.Is(te, entity.ErrNotFound):
		w.gone[r.erk] = true
		return errAgain
	case r.kind == rolePut && r.unique && errors.Is(te, entity.ErrAlreadyExists):
		ix := w.s.core.ByName[r.name]
		return w.held(ctx, ix, r.value, r.erk, te)
	case r.kind == rolePut && r.unique && (errors.Is(te, entity.ErrPreconditionFailed) || errors.Is(te, entity.ErrNotFound)):
		delete(w.takeover, r.erk) // the entry changed since: look again
		return errAgain
	}
	return err
}

// PrimaryRefused reports a transaction the service refused at the
// primary's operation, with an error matching target.
func (w *write[T]) PrimaryRefused(err, target error) bool {
	var te *entity.TransactionError
	if !errors.As(err, &te) || !errors.Is(te, target) {
		return false
	}
	i := te.Index - w.offset
	return i >= 0 && i < len(w.roles) && w.roles[i].kind == rolePrimary
}

// held decides about a unique SamePartition entry that exists: held by an
// entity that holds the value (a *UniqueError), or left by one that does
// not (an orphan, taken over in the next round, in the same transaction
// as the primary, on condition of its ETag).
func (w *write[T]) held(ctx context.Context, ix *index[T], value, erk string, cause error) error {
	e, err := w.s.core.Bags.Get(ctx, w.pk, erk)
	if errors.Is(err, entity.ErrNotFound) {
		return errAgain // gone since
	}
	if err != nil {
		return &StepError{Step: "read entry", Index: ix.Name, PartitionKey: w.pk, RowKey: erk, Err: err}
	}
	opk, ork, ok := owner(&e)
	if ok && opk == w.pk && ork != w.rk {
		o, found, err := w.s.read(ctx, opk, ork)
		if err != nil {
			return &StepError{Step: "read holder", Index: ix.Name, PartitionKey: opk, RowKey: ork, Err: err}
		}
		if found {
			if _, k, _, has, _ := ix.entryKeys(&o.E, opk, ork); has && k == erk {
				return &UniqueError{Index: ix.Name, Value: value, Holder: keyOfDrift(opk, ork), Err: cause}
			}
		}
	}
	w.takeover[erk] = e.ETag
	return errAgain
}

// Written is the ETag the applied round gave the primary.
func (w *write[T]) Written() string {
	if w.primary == nil {
		return ""
	}
	return w.primary.ETag
}

// End releases the reservations of a write that failed (cleanup).
func (w *write[T]) End(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	return w.cleanup(ctx, err)
}

// cleanup sends the message that releases the reservations of a write
// that was not applied (or whose outcome is unknown): the handler frees
// each value its primary does not hold.
func (w *write[T]) cleanup(ctx context.Context, cause error) error {
	if len(w.reserved) == 0 {
		return cause
	}
	m, err := w.s.core.Message(w.pk, w.rk, w.reserved)
	if err == nil {
		for range 3 {
			// The caller's context may be what ended the write.
			if err = w.s.core.Proc.Enqueue(context.WithoutCancel(ctx), m); err == nil {
				break
			}
		}
	}
	if err != nil {
		return errline.Join(cause, fmt.Errorf("secondaryindex: releasing the reservations of %s/%s: %w (a later write, Rebuild or the value's next claimant frees them)", w.pk, w.rk, err))
	}
	return cause
}
