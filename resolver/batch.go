package resolver

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// Batch is an entity group transaction over entities of several registered
// types, stamped like single writes: at most 100 operations on distinct
// entities of one partition, applied all or nothing (design guide §5: a
// department and its employees change together). Build it with
// Table.NewBatch and run it with that Table's Submit.
//
// Operations take a pointer to a registered struct or a
// *entity.DynamicEntity. The methods mirror Table's writes, with the same
// ETag rules as entity.Batch: Update and DeleteEntity are conditional on
// the value's ETag and record entity.ErrNoETag without one; UpdateAny,
// Upsert, and Delete with entity.AnyETag are unconditional. Builder
// methods record the first error, returned by Validate and Submit.
type Batch struct {
	s       *Schema
	b       *entity.Batch
	targets []target
	err     error
}

// NewBatch returns an empty transaction for this table's schema.
// A nil or zero Table gives a Batch that Validate and Submit refuse.
func (t *Table) NewBatch() *Batch {
	if err := t.ok(); err != nil {
		return &Batch{err: err}
	}
	return &Batch{s: t.s, b: t.bags.NewBatch()}
}

// errNilBatch is returned for a nil *Batch, and recorded by the builder
// methods of a nil or zero one (they return a new Batch that carries it).
var errNilBatch = &entity.BatchError{Index: -1, Err: errors.New("resolver: nil or zero *resolver.Batch (make one with Table.NewBatch)")}

// usable returns b, or a new Batch recording errNilBatch when b cannot be
// added to.
func (b *Batch) usable() *Batch {
	if b == nil {
		return &Batch{err: errNilBatch}
	}
	if b.s == nil && b.err == nil {
		b.err = errNilBatch
	}
	return b
}

// Insert adds an insert of v.
func (b *Batch) Insert(v any) *Batch {
	return b.add(v, func(eb *entity.Batch, bag *entity.DynamicEntity) { eb.Insert(bag) })
}

// Update adds a merge or replace of the existing entity by v, conditional
// on v's ETag (entity.ErrNoETag without one), as Table.Update.
func (b *Batch) Update(v any, mode entity.UpdateMode) *Batch {
	return b.add(v, func(eb *entity.Batch, bag *entity.DynamicEntity) { eb.Update(bag, mode) })
}

// UpdateAny adds a merge or replace of the existing entity by v, whatever
// its ETag, as Table.UpdateAny.
func (b *Batch) UpdateAny(v any, mode entity.UpdateMode) *Batch {
	return b.add(v, func(eb *entity.Batch, bag *entity.DynamicEntity) { eb.UpdateAny(bag, mode) })
}

// Upsert adds an insert of v or a merge or replace of the entity with its
// keys, whatever its ETag, as Table.Upsert.
func (b *Batch) Upsert(v any, mode entity.UpdateMode) *Batch {
	return b.add(v, func(eb *entity.Batch, bag *entity.DynamicEntity) { eb.Upsert(bag, mode) })
}

// DeleteEntity adds a delete of v's entity, conditional on v's ETag
// (entity.ErrNoETag without one), as Table.DeleteEntity.
func (b *Batch) DeleteEntity(v any) *Batch {
	if b = b.usable(); b.s == nil {
		return b
	}
	pk, rk, etag, err := b.s.address(v)
	if err != nil {
		return b.fail(err)
	}
	if etag == "" {
		return b.fail(entity.ErrNoETag)
	}
	b.b.Delete(pk, rk, etag)
	b.targets = append(b.targets, target{})
	return b
}

// Delete adds a delete by stored keys, conditional on etag, as
// Table.Delete: entity.AnyETag deletes any version, "" is
// entity.ErrNoETag.
func (b *Batch) Delete(partitionKey, rowKey, etag string) *Batch {
	if b = b.usable(); b.s == nil {
		return b
	}
	b.b.Delete(partitionKey, rowKey, etag)
	b.targets = append(b.targets, target{})
	return b
}

// Len is the number of operations.
func (b *Batch) Len() int {
	if b == nil {
		return 0
	}
	return b.b.Len()
}

// Validate checks the transaction's rules (see entity.Batch.Validate)
// without sending anything.
func (b *Batch) Validate() error {
	if b == nil {
		return errNilBatch
	}
	if b.err != nil {
		return b.err
	}
	return b.b.Validate()
}

func (b *Batch) add(v any, op func(*entity.Batch, *entity.DynamicEntity)) *Batch {
	if b = b.usable(); b.s == nil {
		return b
	}
	bag, tg, err := b.s.prepare(v)
	if err != nil {
		return b.fail(err)
	}
	op(b.b, bag)
	b.targets = append(b.targets, tg)
	return b
}

// fail records the first error, at the index of the operation being added,
// and keeps the indexes of later operations right with a placeholder.
func (b *Batch) fail(err error) *Batch {
	if b.err == nil {
		b.err = &entity.BatchError{Index: b.b.Len(), Err: err}
	}
	b.b.Delete("", "", entity.AnyETag)
	b.targets = append(b.targets, target{})
	return b
}

// Submit runs b as one entity group transaction. On success it returns each
// operation's new ETag ("" for deletes) and writes it back into each value.
// On failure nothing was written: the error is a *entity.TransactionError
// naming the failing operation, or a *entity.BatchError for a transaction
// that breaks a rule and was not sent.
func (t *Table) Submit(ctx context.Context, b *Batch) ([]string, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	if err := t.ok(); err != nil {
		return nil, err
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if b.s != t.s {
		return nil, invalidArg("resolver: the batch was built for another schema: make it with this Table's NewBatch")
	}
	etags, err := t.bags.Submit(ctx, b.b)
	if err != nil {
		return nil, err
	}
	for i, tg := range b.targets {
		tg.written(etags[i])
	}
	return etags, nil
}
