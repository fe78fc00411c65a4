package crypt

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/entity"
)

// Batch is an entity group transaction of entities encrypted as single
// writes are (design guide §1, §3); see entity.Batch. The entities are
// encrypted when the batch is submitted, each under its own content key.
// Merge and UpsertMerge are refused: the first refused operation makes
// Submit fail with a *entity.BatchError wrapping ErrMerge, before any
// request.
type Batch struct {
	ops []batchOp
}

type batchOp struct {
	kind       entity.OpKind
	e          any
	byKeys     bool // DeleteKeys
	pk, rk, et string
}

// Insert adds an insert of e (a pointer to a tagged struct, or
// *entity.DynamicEntity).
func (b *Batch) Insert(e any) *Batch { return b.add(entity.OpInsert, e) }

// Replace adds a replace of the existing entity by e, conditional on e's
// ETag when it has one.
func (b *Batch) Replace(e any) *Batch { return b.add(entity.OpReplace, e) }

// UpsertReplace adds an insert-or-replace of e.
func (b *Batch) UpsertReplace(e any) *Batch { return b.add(entity.OpUpsertReplace, e) }

// Merge is refused (ErrMerge): encrypted entities are replaced whole.
func (b *Batch) Merge(e any) *Batch { return b.add(entity.OpMerge, e) }

// UpsertMerge is refused (ErrMerge).
func (b *Batch) UpsertMerge(e any) *Batch { return b.add(entity.OpUpsertMerge, e) }

// Delete adds a delete of e's entity, conditional on e's ETag if it has one.
func (b *Batch) Delete(e any) *Batch { return b.add(entity.OpDelete, e) }

// DeleteKeys adds a delete by keys; etag "" or entity.AnyETag deletes any
// version.
func (b *Batch) DeleteKeys(partitionKey, rowKey, etag string) *Batch {
	b.ops = append(b.ops, batchOp{kind: entity.OpDelete, byKeys: true, pk: partitionKey, rk: rowKey, et: etag})
	return b
}

func (b *Batch) add(kind entity.OpKind, e any) *Batch {
	b.ops = append(b.ops, batchOp{kind: kind, e: e})
	return b
}

// Len is the number of operations.
func (b *Batch) Len() int { return len(b.ops) }

// Submit encrypts the batch's entities and runs it as one transaction; see
// entity.Submit for the results and errors.
func (t *Table[T]) Submit(ctx context.Context, b *Batch) ([]string, error) {
	if b == nil {
		return nil, &entity.BatchError{Index: -1, Err: &WriteError{Reason: "nil batch", Kind: errors.New("crypt: invalid batch")}}
	}
	s := t.core.bind(ctx)
	eb := &entity.Batch{}
	for i, op := range b.ops {
		switch {
		case op.kind == entity.OpMerge || op.kind == entity.OpUpsertMerge:
			return nil, &entity.BatchError{Index: i, Err: errMerge("a transaction's " + op.kind.String())}
		case op.byKeys:
			eb.DeleteKeys(op.pk, op.rk, op.et)
		default:
			t.hooks.BatchAdd(eb, uint8(op.kind), op.e, s)
		}
	}
	return t.base.Submit(ctx, eb)
}
