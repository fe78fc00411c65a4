package wide

import (
	"context"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/entityfields"
)

// Insert adds the logical entity v, keyed by its PartitionKey and RowKey
// fields, in one entity group transaction (one storage transaction). An
// entity with the same keys is an error matching entity.ErrAlreadyExists.
// v's ETag and Timestamp fields, if it has them, are set to the new
// version's.
//
// An entity that one transaction cannot hold (more than MaxRows rows of
// properties, or over 4 MiB) is refused with a *TooLargeError before any
// request.
func (w *Table[T]) Insert(ctx context.Context, v *T) error {
	bag, err := toBag(v)
	if err != nil {
		return opError("insert", v, err)
	}
	res, err := w.commit(ctx, bag, nil)
	if err != nil {
		return opError("insert", v, err)
	}
	return setWritten(v, bag, res)
}

// toBag converts v for writing, and checks its keys.
func toBag[T any](v *T) (*entity.DynamicEntity, error) {
	if v == nil {
		return nil, &entity.ValidationError{Rule: "entity", Limit: "a non-nil pointer", Value: "nil"}
	}
	bag, err := entity.ToDynamic(v)
	if err != nil {
		return nil, err
	}
	return bag, checkKeys(bag.PartitionKey, bag.RowKey)
}

// setWritten stores a committed version's ETag and Timestamp into v.
func setWritten[T any](v *T, bag *entity.DynamicEntity, res result) error {
	return entityfields.SetSystem(v, entityfields.System{PartitionKey: bag.PartitionKey, RowKey: bag.RowKey, ETag: res.etag, Timestamp: res.ts})
}

// opError wraps err with the operation and v's keys.
func opError[T any](op string, v *T, err error) error {
	s, _ := entity.SystemOf(v)
	return &Error{Op: op, PartitionKey: s.PartitionKey, ID: s.RowKey, Err: err}
}
