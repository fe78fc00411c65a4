package steps

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tablekit/tablekit/entity"
)

// settleAttempts bounds the repeats of a step whose outcome was unknown
// (entity.ErrOutcomeUnknown: a reply was lost and reading back could not
// tell). A repeat settles it: the step is idempotent.
const settleAttempts = 3

// settle runs step until its outcome is known, at most settleAttempts
// times.
func settle(step func() error) error {
	var err error
	for range settleAttempts {
		if err = step(); !errors.Is(err, entity.ErrOutcomeUnknown) {
			return err
		}
	}
	return err
}

// errRound makes entity.RetryPolicy.Retry start a round again from its read.
var errRound = fmt.Errorf("steps: the outcome is unknown, reading again: %w", entity.ErrPreconditionFailed)

// Insert adds e. An entity with the same keys counts as done: it is this
// step's own insert, resent after a lost reply or run before, so Insert
// suits entities whose content is fixed by their keys. Use Upsert for
// content that may differ.
func Insert[T any](ctx context.Context, t *entity.Table[T], e *T) error {
	err := settle(func() error { return t.Insert(ctx, e) })
	if errors.Is(err, entity.ErrAlreadyExists) {
		return nil
	}
	return err
}

// Upsert writes e whatever is stored under its keys (InsertOrReplace).
func Upsert[T any](ctx context.Context, t *entity.Table[T], e *T) error {
	return t.Upsert(ctx, e, entity.Replace)
}

// Delete removes the entity whatever its version; a missing entity counts
// as done. A missing table is still an error.
func Delete[T any](ctx context.Context, t *entity.Table[T], partitionKey, rowKey string) error {
	return settle(func() error {
		_, err := t.DeleteIfExists(ctx, partitionKey, rowKey)
		return err
	})
}

// Move moves one entity from one table to another, the design guide's
// archive step (§6.3): read it from from, InsertOrReplace it into to
// (after edit, if not nil, changed the copy — its keys too, if it likes),
// and delete it from from on condition that it was not changed since the
// read. A concurrent change makes the round start again from the read, so
// the target ends with the last version; a missing source counts as done
// (moved already). Three storage operations when nothing races.
//
// Between the insert and the delete the entity is in both tables; a crash
// there leaves it so until Move runs again.
func Move[T any](ctx context.Context, from, to *entity.Table[T], partitionKey, rowKey string, edit func(*T) error, policy entity.RetryPolicy) error {
	return policy.Retry(ctx, func(ctx context.Context) error {
		e, err := from.Get(ctx, partitionKey, rowKey)
		if errors.Is(err, entity.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		sys, err := entity.SystemOf(&e)
		if err != nil {
			return err
		}
		etag := sys.ETag // the Upsert below overwrites the field
		if etag == "" {
			etag = entity.AnyETag // T has no ETag field
		}
		if edit != nil {
			if err := edit(&e); err != nil {
				return err
			}
		}
		if err := to.Upsert(ctx, &e, entity.Replace); err != nil {
			return err
		}
		err = from.Delete(ctx, partitionKey, rowKey, etag)
		switch {
		case errors.Is(err, entity.ErrNotFound):
			return nil // deleted by another run
		case errors.Is(err, entity.ErrOutcomeUnknown):
			return errRound // a lost reply: the next round's read tells
		}
		return err // ErrPreconditionFailed: changed since the read; Retry reads again
	})
}

// DeleteAll deletes the entities of one partition with the given RowKeys,
// whatever their versions: one transaction per 100, or one request per
// entity for a group some of which are gone already (another run deleted
// them, or azcore resent a transaction whose reply was lost). Missing
// entities count as done.
func DeleteAll[T any](ctx context.Context, t *entity.Table[T], partitionKey string, rowKeys []string) error {
	for chunk := range slices.Chunk(rowKeys, entity.MaxBatchOperations) {
		b := t.NewBatch()
		for _, rk := range chunk {
			b.Delete(partitionKey, rk, entity.AnyETag)
		}
		_, err := t.Submit(ctx, b)
		if err == nil {
			continue
		}
		if !errors.Is(err, entity.ErrNotFound) && !errors.Is(err, entity.ErrOutcomeUnknown) {
			return err
		}
		for _, rk := range chunk {
			if err := Delete(ctx, t, partitionKey, rk); err != nil {
				return err
			}
		}
	}
	return nil
}
