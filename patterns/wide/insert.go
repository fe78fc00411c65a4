package wide

import (
	"context"
	"reflect"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
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
	if err := w.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	bag, err := w.toBag(ctx, v)
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
func (w *Table[T]) toBag(ctx context.Context, v *T) (*entity.DynamicEntity, error) {
	if v == nil {
		return nil, &entity.TypeError{Type: reflect.TypeFor[*T](), Reason: "nil entity"}
	}
	bag, err := w.codec.ToDynamic(v)
	if err != nil {
		return nil, err
	}
	if err := checkKeys(bag.PartitionKey, bag.RowKey); err != nil {
		return nil, err
	}
	return w.seal(ctx, bag)
}

// seal returns the logical entity bag as its rows store it: itself, or,
// in a protected table, its encrypted properties as ciphertexts and the
// encryption's metadata, bound to the logical entity's keys — so that
// every row holds ciphertext and a row moved to another entity does not
// decrypt there.
func (w *Table[T]) seal(ctx context.Context, bag *entity.DynamicEntity) (*entity.DynamicEntity, error) {
	if !w.codec.Protected() {
		return bag, nil
	}
	return w.codec.Seal(ctx, bag)
}

// open reverses seal: the logical entity in clear, decrypted and checked.
func (w *Table[T]) open(ctx context.Context, bag *entity.DynamicEntity) (*entity.DynamicEntity, error) {
	if !w.codec.Protected() {
		return bag, nil
	}
	return w.codec.Open(ctx, bag)
}

// fromBag stores the logical entity bag, as its rows store it, into v.
func (w *Table[T]) fromBag(ctx context.Context, bag *entity.DynamicEntity, v *T) error {
	plain, err := w.open(ctx, bag)
	if err != nil {
		return err
	}
	return w.codec.FromDynamic(plain, v)
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
