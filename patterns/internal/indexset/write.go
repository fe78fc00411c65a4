package indexset

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/entityfields"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// What the two Sets' writes share: the checks before any request, the
// errors that name a write's step and keys, and MoveTo's loop. How a
// write builds its transaction (entries or lists) stays in each package.

// Given carries the error of Modify's change function out of the retry
// loop, to be returned as is. It does not unwrap, so that
// entity.RetryPolicy does not take it for a lost race
// (ErrPreconditionFailed).
type Given struct{ Err error }

func (g *Given) Error() string { return g.Err.Error() }

// Retry is the policy of one call: r unless it is zero, else def (the
// Set's Config.Retry).
func Retry(r, def entity.RetryPolicy) entity.RetryPolicy {
	if r == (entity.RetryPolicy{}) {
		return def
	}
	return r
}

// OpError names the operation op and the primary's keys in an error that
// does not come from the package (entity's answer to the transaction, a
// cancelled context): nil, a *StepError and what named reports (the
// package's own errors, which name them already) are returned as they
// are.
func OpError[P Package](op, pk, rk string, err error, named func(error) bool) error {
	var se *StepError[P]
	if err == nil || errors.As(err, &se) || named != nil && named(err) {
		return err
	}
	return &StepError[P]{Step: op, PartitionKey: pk, RowKey: rk, Err: err}
}

// NilEntity is the error of a write given a nil entity, before any
// request: entity.Table's, an *entity.TypeError matching
// entity.ErrInvalidType and entity.ErrInvalid.
func NilEntity[T any]() error {
	return &entity.TypeError{Type: reflect.TypeFor[*T](), Reason: "nil entity"}
}

// NilChange is the error of a Modify given a nil change function, before
// any request.
func NilChange() error {
	return &entity.ValidationError{Rule: "change function", Limit: "non-nil", Value: "nil"}
}

// ChangedKeys checks that a Modify's change function kept the keys pk,
// rk of the entity e it was given.
func ChangedKeys[T any](e *T, pk, rk string) error {
	if epk, erk, err := KeyOf(e); err != nil || epk != pk || erk != rk {
		return &entity.ValidationError{Property: "keys", Rule: "change function", Limit: "keeps the keys " + pk + "/" + rk, Value: epk + "/" + erk}
	}
	return nil
}

// Fresh is what the change function of a Modify with
// entity.ModifyOptions.Create gets when the primary pk/rk is missing, as
// entity.Table.Modify gives it: T's zero value with the keys set, no ETag
// (by which the change can tell), and an empty property map for an
// entity.DynamicEntity.
func Fresh[T any](pk, rk string) (T, error) {
	var e T
	if d, ok := any(&e).(*entity.DynamicEntity); ok {
		d.Properties = map[string]any{}
	}
	err := entityfields.SetSystem(&e, entityfields.System{PartitionKey: pk, RowKey: rk})
	return e, err
}

// ErrLostCreate makes a Modify with Create start again from the read:
// its insert lost to another creator (409), or the version it changed
// was deleted meanwhile (404). It matches entity.ErrPreconditionFailed,
// so that entity.RetryPolicy runs the next round, which changes what the
// other writer stored (or creates the primary again).
var ErrLostCreate = fmt.Errorf("the primary was created or deleted by another writer since it was read: %w", entity.ErrPreconditionFailed)

// KeyOf returns e's keys.
func KeyOf[T any](e *T) (pk, rk string, err error) {
	sys, err := entity.SystemOf(e)
	return sys.PartitionKey, sys.RowKey, err
}

// NoETag is the error of an Update given an entity without an ETag, before
// any request; hint says how to get one.
func NoETag[P Package](pk, rk, hint string) error {
	return &StepError[P]{Step: "update", PartitionKey: pk, RowKey: rk, Err: fmt.Errorf("%w: read it first (%s) or use Modify", entity.ErrNoETag, hint)}
}

// NotFound is the error of operation op of a primary that is not there.
func NotFound[P Package](op, pk, rk string) error {
	return &StepError[P]{Step: op, PartitionKey: pk, RowKey: rk, Err: entity.ErrNotFound}
}

// Stale is the error of operation op of a primary whose stored version
// is not the one the caller gave (want).
func Stale[P Package](op, pk, rk, stored, want string) error {
	return &StepError[P]{Step: op, PartitionKey: pk, RowKey: rk, Err: fmt.Errorf("the stored version is %s, not %s: %w", stored, want, entity.ErrPreconditionFailed)}
}

// ReadPrimary is the error of the read of the primary in operation op.
func ReadPrimary[P Package](op, pk, rk string, err error) error {
	return &StepError[P]{Step: op + ": read primary", PartitionKey: pk, RowKey: rk, Err: err}
}

// errMoved makes MoveTo read again: the primary changed since the copy,
// or the delete's outcome is unknown. It matches
// entity.ErrPreconditionFailed, so that entity.RetryPolicy goes on.
var errMoved = fmt.Errorf("the primary changed since it was copied: %w", entity.ErrPreconditionFailed)

// errCopyRaced makes MoveTo read again: the destination's copy changed
// since it was read (another move wrote it), or the copy's outcome is
// unknown.
var errCopyRaced = fmt.Errorf("the destination changed since it was read: %w", entity.ErrPreconditionFailed)

// Mover is what MoveTo needs of a Set: Read reads the primary (a fresh
// copy of it, with its ETag; found false when it is not there), Dest
// reads the ETag of the entity with its keys in the destination ("" when
// there is none), Copy writes it to the destination on condition that
// the entity there is still the one Dest read (etag; none when ""), and
// Delete deletes it through the Set on condition of etag, so that its
// entries or lists go with it.
type Mover[T any] struct {
	Read   func(ctx context.Context) (e T, etag string, found bool, err error)
	Dest   func(ctx context.Context) (etag string, err error)
	Copy   func(ctx context.Context, e *T, etag string) error
	Delete func(ctx context.Context, etag string) error
}

// Move is MoveTo of both Sets, after the checks of its arguments: it
// reads the destination's entity, then the stored primary pk/rk, copies
// the primary on condition that the destination's entity is still the
// one read, then deletes the primary on condition of the version copied.
// The destination is read before the primary so that its ETag guards the
// primary's version: a copy read before another move's read of a newer
// version and sent after that move wrote the destination would
// otherwise overwrite the newer version with the older one, and — that
// move having deleted the primary — lose a committed write
// (TestMoveToBesideAMoveOfANewerVersion). Read after the destination,
// the primary is the version another move copied there or a newer one,
// or gone; a move that wrote the destination after it was read fails the
// copy's condition. A primary changed between the copy and the delete is
// copied again, and so is one whose delete's (or copy's) outcome is
// unknown (entity.ErrOutcomeUnknown, a lost reply the Set could not
// settle): the next round's reads tell — gone, the move is done; there,
// it is copied and deleted again. A primary not there is a move done
// already (nil). The rounds are bounded by retry.
func Move[P Package, T any](ctx context.Context, pk, rk, dst string, retry entity.RetryPolicy, m Mover[T]) error {
	err := retry.Retry(ctx, func(ctx context.Context) error {
		detag, err := m.Dest(ctx)
		if err != nil {
			return &stop{&StepError[P]{Step: "move: read " + dst, PartitionKey: pk, RowKey: rk, Err: err}}
		}
		e, etag, found, err := m.Read(ctx)
		var se *StepError[P]
		if err != nil && !errors.As(err, &se) {
			err = ReadPrimary[P]("move", pk, rk, err)
		}
		if err != nil {
			return &stop{err}
		}
		if !found {
			return nil // moved already, or deleted
		}
		err = m.Copy(ctx, &e, detag)
		switch {
		case err == nil:
		case errors.Is(err, entity.ErrTableNotFound):
			return &stop{&StepError[P]{Step: "move: copy to " + dst, PartitionKey: pk, RowKey: rk, Err: err}}
		case errors.Is(err, entity.ErrPreconditionFailed), errors.Is(err, entity.ErrAlreadyExists),
			errors.Is(err, entity.ErrNotFound), errors.Is(err, entity.ErrOutcomeUnknown):
			return errCopyRaced // the next round's reads tell
		default:
			return &stop{&StepError[P]{Step: "move: copy to " + dst, PartitionKey: pk, RowKey: rk, Err: err}}
		}
		err = m.Delete(ctx, etag)
		switch {
		case err == nil, errors.Is(err, entity.ErrNotFound):
			return nil
		case errors.Is(err, entity.ErrPreconditionFailed), errors.Is(err, entity.ErrOutcomeUnknown):
			return errMoved // the next round's read tells
		}
		return &stop{err}
	})
	var st *stop
	if errors.As(err, &st) {
		return st.err
	}
	if errors.Is(err, entity.ErrContention) {
		return &StepError[P]{Step: "move", PartitionKey: pk, RowKey: rk, Err: entity.ErrContention}
	}
	return err
}

// stop carries an error out of entity.RetryPolicy.Retry without another
// round.
type stop struct{ err error }

func (e *stop) Error() string { return e.err.Error() }

// unstop is the error a stop carries, or err.
func unstop(err error) error {
	var st *stop
	if errors.As(err, &st) {
		return st.err
	}
	return err
}

// MoveDestination checks MoveTo's destination table before any request:
// not nil, and not the primaries' own table (named own).
func MoveDestination[P Package, T any](dst *entity.Table[T], own string) error {
	switch {
	case dst == nil:
		return &ConfigError[P]{Field: "MoveTo: dst", Reason: "is nil"}
	case dst.Name() != "" && dst.Name() == own:
		return &ConfigError[P]{Field: "MoveTo: dst", Reason: "is the primaries' table " + dst.Name()}
	}
	return nil
}

// Register is the end of both Sets' New when an index is kept by
// patterns/eventual: it names the Set's message kind (name, else
// "<package>.<table>.v1"), makes the outbox of the primaries' table bags,
// and registers handle for the kind on p.
func Register[P Package, M any](p *eventual.Processor, bags *entity.Table[entity.DynamicEntity], ocfg eventual.OutboxConfig, name, table string, handle func(context.Context, M) error) (eventual.Kind[M], *eventual.Outbox[entity.DynamicEntity], error) {
	var k eventual.Kind[M]
	if name == "" {
		if table == "" {
			return k, nil, &ConfigError[P]{Field: "Config.Kind", Reason: "is empty and the table's name is unknown (build its client with entity.ClientOptions)"}
		}
		var pk P
		name = pk.Name() + "." + table + ".v1"
	}
	k = eventual.NewKind[M](name)
	outbox, err := eventual.NewOutbox(p, bags, ocfg)
	if err != nil {
		return k, nil, err
	}
	if err := eventual.Handle(p, k, handle, eventual.HandleOptions{}); err != nil {
		return k, nil, err
	}
	return k, outbox, nil
}
