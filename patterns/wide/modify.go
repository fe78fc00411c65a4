package wide

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/errline"
)

// defaultModifyAttempts is Modify's number of rounds when
// opts.Retry.Attempts is 0, as entity.ModifyOptions documents.
const defaultModifyAttempts = 40

// errKeysChanged reports a change function that edited the keys: an
// argument refused before the write, matching entity.ErrInvalid.
var errKeysChanged = fmt.Errorf("%w: the change edited PartitionKey or RowKey", entity.ErrInvalid)

// Modify reads the logical entity, lets change edit it, and writes it back
// with opts.Mode (0 means entity.Merge) on condition that nobody wrote it
// in between; when somebody did, it starts again from a fresh read, with
// backoff, at most opts.Retry.Attempts times (0 means 40, as for
// entity.Table.Modify; then entity.ErrContention).
// change may return an error to give up (returned as is, after one call,
// even one matching entity.ErrPreconditionFailed:
// TestModifyReturnsTheChangesErrorAsIs); a nil change is
// refused before any request, and a change that edits the keys before the
// write, matching entity.ErrInvalid (TestInvalidInputRefusedBeforeSending,
// TestModifyThatEditsTheKeysIsRefused). The written
// entity is returned. It costs one read and one transaction per round.
//
// A missing logical entity is an error matching entity.ErrNotFound, unless
// opts.Create: then change gets T's zero value with the keys set and no
// ETag, and what it leaves is inserted (head and rows in one transaction);
// when another writer inserts it first, the round starts again and changes
// theirs, so racing creators each apply their change exactly once
// (TestModifyCreateRacingCreators), and an entity deleted between a
// round's read and its write is created again. An insert whose reply was
// lost is settled by the version token in the head, as every write of
// this package is: applied once, never twice (TestModifyCreateLostReply).
//
// Only the rows whose properties changed are written, with the head: a
// change of a few values rewrites a few rows. With entity.Replace the
// logical entity becomes exactly what change left (properties that T does
// not model are removed, unless T has an `extra` field); with entity.Merge
// the properties T's value holds are written over the stored ones and the
// others are kept.
func (w *Table[T]) Modify(ctx context.Context, pk, id string, change func(*T) error, opts entity.ModifyOptions) (T, error) {
	if err := w.ok(); err != nil {
		return *new(T), err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return *new(T), err
	}
	var out T
	mode, policy := opts.Mode, opts.Retry
	if mode == 0 {
		mode = entity.Merge
	}
	if policy.Attempts <= 0 {
		policy.Attempts = defaultModifyAttempts
	}
	if err := checkKeys(pk, id); err != nil {
		return out, &Error{Op: "modify", PartitionKey: pk, ID: id, Err: err}
	}
	if change == nil {
		return out, &Error{Op: "modify", PartitionKey: pk, ID: id, Err: &entity.ValidationError{Rule: "change function", Limit: "non-nil", Value: "nil"}}
	}
	if mode != entity.Merge && mode != entity.Replace {
		return out, &Error{Op: "modify", PartitionKey: pk, ID: id, Err: &entity.ValidationError{Rule: "update mode", Limit: "entity.Merge or entity.Replace", Value: "an UpdateMode of another value"}}
	}
	var given error // change's own error, returned as is
	err := policy.Retry(ctx, func(ctx context.Context) error {
		st, err := w.read(ctx, pk, id)
		var old *entity.DynamicEntity
		var from *base // nil: insert
		switch {
		case opts.Create && errors.Is(err, entity.ErrNotFound):
			// change gets T's zero value with the keys set and no ETag.
			old = &entity.DynamicEntity{PartitionKey: pk, RowKey: id, Properties: map[string]any{}}
		case err != nil:
			return err
		default:
			// In clear: a merge below merges values.
			if old, err = w.open(ctx, st.bag()); err != nil {
				return err
			}
			from = st.base()
		}
		var v T
		if err := w.codec.FromDynamic(old, &v); err != nil {
			return err
		}
		if err := change(&v); err != nil {
			given = err
			return errGaveUp // not change's error, which Retry might take for a lost round
		}
		bag, err := w.codec.ToDynamic(&v)
		if err != nil {
			return err
		}
		if bag.PartitionKey != pk || bag.RowKey != id {
			return errKeysChanged
		}
		if mode == entity.Merge {
			maps.Copy(old.Properties, bag.Properties)
			bag.Properties = old.Properties
		}
		if bag, err = w.seal(ctx, bag); err != nil {
			return err
		}
		res, err := w.commit(ctx, bag, from)
		switch {
		case err == nil:
		case errors.Is(err, entity.ErrOutcomeUnknown):
			return err
		case opts.Create && from == nil && errors.Is(err, entity.ErrAlreadyExists):
			// Created by another writer since the read (a refusal commit
			// settled: not this write's own resent insert): change theirs.
			return errline.Join(entity.ErrPreconditionFailed, err)
		case opts.Create && from != nil && errors.Is(err, entity.ErrNotFound):
			// Deleted since the read: create it again.
			return errline.Join(entity.ErrPreconditionFailed, err)
		default:
			return err
		}
		out = v
		return setWritten(&out, bag, res)
	})
	if err == errGaveUp {
		return out, given
	}
	if err != nil {
		return out, &Error{Op: "modify", PartitionKey: pk, ID: id, Err: err}
	}
	return out, nil
}

// errGaveUp stands, inside Modify's rounds, for the error change gave up
// with: whatever that error matches, entity.ErrPreconditionFailed
// included, it ends the rounds.
var errGaveUp = errors.New("wide: the change gave up")
