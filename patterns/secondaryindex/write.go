package secondaryindex

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/entityfields"
	"github.com/tablekit/tablekit/internal/errline"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// errAgain makes a write build its transaction again after learning
// something about its entries (an old entry already gone, a unique entry
// held by nobody).
var errAgain = errors.New("secondaryindex: build the transaction again")

// write is one change of a primary, from old (nil: none) to cur (nil:
// deleted), run in rounds until it is applied or refused.
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

func (s *Set[T]) newWrite(pk, rk string) *write[T] {
	return &write[T]{s: s, pk: pk, rk: rk, gone: map[string]bool{}, takeover: map[string]string{}, reserved: map[string][]string{}}
}

// entryOf returns the keys of v's entry in ix; has is false when v is nil
// or not indexed.
func (w *write[T]) entryOf(ix *index[T], v *version[T]) (epk, erk, value string, has bool, err error) {
	if v == nil {
		return "", "", "", false, nil
	}
	return ix.entryKeys(&v.e, w.pk, w.rk)
}

// round builds and submits the transaction once. It returns errAgain
// when the transaction must be built again, the service's error, or nil
// once applied.
func (w *write[T]) round(ctx context.Context) error {
	s := w.s
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
	if len(msgs) == 0 {
		b := s.bags.NewBatch()
		if err := build(b); err != nil {
			return err
		}
		_, err = s.bags.Submit(sctx, b)
	} else {
		err = s.outbox.Submit(sctx, w.pk, build, msgs...)
	}
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
	switch {
	case w.cur == nil:
		b.Delete(w.pk, w.rk, w.old.etag)
	case w.old == nil:
		w.primary = &entity.DynamicEntity{PartitionKey: w.pk, RowKey: w.rk, Properties: w.cur.bag.Properties}
		b.Insert(w.primary)
	default:
		props := w.cur.bag.Properties
		if w.old.chain != nil {
			// The chain read lets entity prove this write's outcome after
			// a lost reply; it replaces it with the write's own.
			props = make(map[string]any, len(w.cur.bag.Properties)+1)
			for k, v := range w.cur.bag.Properties {
				props[k] = v
			}
			props[propWriteToken] = w.old.chain
		}
		w.primary = &entity.DynamicEntity{PartitionKey: w.pk, RowKey: w.rk, ETag: w.old.etag, Properties: props}
		b.Update(w.primary, entity.Replace)
	}
	w.roles = append(w.roles, role{kind: rolePrimary})
	for _, ix := range w.s.local {
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
		ix := w.s.byName[r.name]
		return w.held(ctx, ix, r.value, r.erk, te)
	case r.kind == rolePut && r.unique && (errors.Is(te, entity.ErrPreconditionFailed) || errors.Is(te, entity.ErrNotFound)):
		delete(w.takeover, r.erk) // the entry changed since: look again
		return errAgain
	}
	return err
}

// primaryRefused reports a transaction the service refused at the
// primary's operation, with an error matching target.
func (w *write[T]) primaryRefused(err, target error) bool {
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
	e, err := w.s.bags.Get(ctx, w.pk, erk)
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
			if _, k, _, has, _ := ix.entryKeys(&o.e, opk, ork); has && k == erk {
				return &UniqueError{Index: ix.Name, Value: value, Holder: keyOfDrift(opk, ork), Err: cause}
			}
		}
	}
	w.takeover[erk] = e.ETag
	return errAgain
}

// opError names the operation and the primary's keys in an error that
// does not come from this package (entity's answer to the transaction, a
// cancelled context); the Set's own errors (a *UniqueError, errAgain)
// name them already.
func opError(op, pk, rk string, err error) error {
	return indexset.OpError[pkg](op, pk, rk, err, func(err error) bool {
		var ue *UniqueError
		return errors.As(err, &ue) || errors.Is(err, errAgain)
	})
}

// finish reports the applied write's new ETag into e (none when the
// transaction was found applied after a lost reply).
func (w *write[T]) finish(e *T) {
	if w.primary == nil || e == nil {
		return
	}
	if w.primary.ETag != "" && w.primary.ETag != w.old.etagOr() {
		_ = entityfields.SetWritten(e, w.primary.ETag)
		return
	}
	sys, err := entity.SystemOf(e)
	if err == nil {
		sys.ETag = ""
		_ = entityfields.SetSystem(e, entityfields.System(sys))
	}
}

func (v *version[T]) etagOr() string {
	if v == nil {
		return ""
	}
	return v.etag
}

// cleanup sends the message that releases the reservations of a write
// that was not applied (or whose outcome is unknown): the handler frees
// each value its primary does not hold.
func (w *write[T]) cleanup(ctx context.Context, cause error) error {
	if len(w.reserved) == 0 {
		return cause
	}
	m, err := w.s.message(w.pk, w.rk, w.reserved)
	if err == nil {
		for range 3 {
			// The caller's context may be what ended the write.
			if err = w.s.proc.Enqueue(context.WithoutCancel(ctx), m); err == nil {
				break
			}
		}
	}
	if err != nil {
		return errline.Join(cause, fmt.Errorf("secondaryindex: releasing the reservations of %s/%s: %w (a later write, Rebuild or the value's next claimant frees them)", w.pk, w.rk, err))
	}
	return cause
}

// message is the OtherPartition message for primary pk/rk with the
// values to look at, by index.
func (s *Set[T]) message(pk, rk string, values map[string][]string) (eventual.Message, error) {
	vals := make(map[string][]string, len(values))
	for k, vs := range values {
		vs = slices.Clone(vs)
		slices.Sort(vs)
		vals[k] = slices.Compact(vs)
	}
	m, err := s.kind.Message(syncMessage{PK: pk, RK: rk, Values: vals})
	if err != nil {
		return m, err
	}
	m.Key = pk + "/" + rk
	return m, nil
}
