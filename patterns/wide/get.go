package wide

import (
	"context"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// Get reads the logical entity with partition key pk and id, with one range
// query over its rows (one storage transaction). It never returns a mix of
// two versions: when a writer commits between two pages of the query, Get
// reads again (Config.ReadAttempts, then ErrTorn). A missing entity is an
// error matching entity.ErrNotFound.
//
// The returned value's ETag field, if T has one, holds the logical entity's
// ETag, which Replace and Delete are conditional on; its Timestamp field the
// time of the last write.
func (w *Table[T]) Get(ctx context.Context, pk, id string) (T, error) {
	if err := w.ok(); err != nil {
		return *new(T), err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return *new(T), err
	}
	var v T
	if err := checkKeys(pk, id); err != nil {
		return v, &Error{Op: "get", PartitionKey: pk, ID: id, Err: err}
	}
	st, err := w.read(ctx, pk, id)
	if err == nil {
		err = w.fromBag(ctx, st.bag(), &v)
	}
	if err != nil {
		return v, &Error{Op: "get", PartitionKey: pk, ID: id, Err: err}
	}
	return v, nil
}

// checkKeys refuses, before any request, keys that the rows of a logical
// entity cannot have: every row must be addressable by a later
// transaction (entity.Batch's rules for keys).
func checkKeys(pk, id string) error {
	return (&entity.Batch{}).Delete(pk, rowKey(id, MaxRows), entity.AnyETag).Validate()
}
