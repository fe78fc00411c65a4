package crypt

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// Batch is an entity group transaction of entities encrypted as single
// writes are (design guide §1, §3); see entity.Batch. Make it with
// Table.NewBatch and run it with that table's Submit. The entities are
// encrypted when the batch is submitted, each under its own content key.
// Its methods mirror the Table's writes, with entity.Batch's ETag rules;
// the Merge mode is refused: the first refused operation makes Submit fail
// with a *entity.BatchError wrapping ErrMerge, before any request.
type Batch struct {
	made bool
	ops  []batchOp
}

type batchOp struct {
	kind       entity.OpKind
	any        bool // unconditional: UpdateAny
	e          any
	byKeys     bool // Delete by keys
	pk, rk, et string
}

// NewBatch returns an empty transaction on this table.
func (t *Table[T]) NewBatch() *Batch { return &Batch{made: true} }

// Insert adds an insert of e (a pointer to a tagged struct, or
// *entity.DynamicEntity).
func (b *Batch) Insert(e any) *Batch { return b.add(entity.OpInsert, false, e) }

// Update adds a replace of the existing entity by e, conditional on e's
// ETag (entity.ErrNoETag without one). mode must be entity.Replace.
func (b *Batch) Update(e any, mode entity.UpdateMode) *Batch {
	return b.add(kindOf(mode, entity.OpMerge, entity.OpReplace), false, e)
}

// UpdateAny adds a replace of the existing entity by e, whatever its ETag.
// mode must be entity.Replace.
func (b *Batch) UpdateAny(e any, mode entity.UpdateMode) *Batch {
	return b.add(kindOf(mode, entity.OpMerge, entity.OpReplace), true, e)
}

// Upsert adds an insert-or-replace of e. mode must be entity.Replace.
func (b *Batch) Upsert(e any, mode entity.UpdateMode) *Batch {
	return b.add(kindOf(mode, entity.OpUpsertMerge, entity.OpUpsertReplace), false, e)
}

// Delete adds a delete by keys, conditional on etag: entity.AnyETag
// deletes any version, "" is entity.ErrNoETag.
func (b *Batch) Delete(partitionKey, rowKey, etag string) *Batch {
	b.ops = append(b.ops, batchOp{kind: entity.OpDelete, byKeys: true, pk: partitionKey, rk: rowKey, et: etag})
	return b
}

// DeleteEntity adds a delete of e's entity, conditional on e's ETag
// (entity.ErrNoETag without one).
func (b *Batch) DeleteEntity(e any) *Batch { return b.add(entity.OpDelete, false, e) }

// kindOf is merge for entity.Merge (refused by Submit), else replace.
func kindOf(mode entity.UpdateMode, merge, replace entity.OpKind) entity.OpKind {
	if mode == entity.Merge {
		return merge
	}
	return replace
}

func (b *Batch) add(kind entity.OpKind, unconditional bool, e any) *Batch {
	b.ops = append(b.ops, batchOp{kind: kind, any: unconditional, e: e})
	return b
}

// Len is the number of operations.
func (b *Batch) Len() int { return len(b.ops) }

// Submit encrypts the batch's entities and runs it as one transaction; see
// entity.Table.Submit for the results and errors. The transaction is
// atomic: one entity that cannot be written (too large once encrypted, an
// invalid property) refuses the whole Submit before any request, with a
// *entity.BatchError at its index whose text names its keys
// (TestSubmitOneBadEntityAmongMany).
func (t *Table[T]) Submit(ctx context.Context, b *Batch) ([]string, error) {
	if err := t.ok(); err != nil {
		return nil, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	if b == nil || !b.made {
		return nil, &entity.BatchError{Index: -1, Err: &WriteError{Reason: "nil batch or one not made by Table.NewBatch", Kind: errors.New("crypt: invalid batch")}}
	}
	s := t.core.bind(ctx)
	eb := t.base.NewBatch()
	for i, op := range b.ops {
		switch {
		case op.kind == entity.OpMerge || op.kind == entity.OpUpsertMerge:
			return nil, &entity.BatchError{Index: i, Err: errMerge("a transaction's " + op.kind.String())}
		case op.byKeys:
			eb.Delete(op.pk, op.rk, op.et)
		default:
			t.hooks.BatchAdd(eb, uint8(op.kind), op.any, op.e, s)
		}
	}
	if err := eb.Validate(); err != nil {
		return nil, err // a *entity.BatchError naming the entity's keys
	}
	return t.base.Submit(ctx, eb)
}
