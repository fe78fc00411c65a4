package resolver

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/entity"
)

// Batch is an entity group transaction over entities of several registered
// types, stamped like single writes: at most 100 operations on distinct
// entities of one partition, applied all or nothing (design guide §5: a
// department and its employees change together). Build it with
// Table.NewBatch and run it with Table.Submit.
//
// Operations take a pointer to a registered struct or a
// *entity.DynamicEntity. Merge, Replace and Delete are conditional on the
// value's ETag when it has one, otherwise unconditional. Builder methods
// record the first error, returned by Validate and Submit.
type Batch struct {
	s       *Schema
	b       entity.Batch
	targets []target
	err     error
}

// NewBatch returns an empty transaction for this table's schema.
// A nil or zero Table gives a Batch that Validate and Submit refuse.
func (t *Table) NewBatch() *Batch {
	if err := t.ok(); err != nil {
		return &Batch{err: err}
	}
	return &Batch{s: t.s}
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
func (b *Batch) Insert(v any) *Batch { return b.add(v, (*entity.Batch).Insert) }

// Merge adds a merge of v into the existing entity.
func (b *Batch) Merge(v any) *Batch { return b.add(v, (*entity.Batch).Merge) }

// Replace adds a replace of the existing entity by v.
func (b *Batch) Replace(v any) *Batch { return b.add(v, (*entity.Batch).Replace) }

// UpsertMerge adds an insert-or-merge of v.
func (b *Batch) UpsertMerge(v any) *Batch { return b.add(v, (*entity.Batch).UpsertMerge) }

// UpsertReplace adds an insert-or-replace of v.
func (b *Batch) UpsertReplace(v any) *Batch { return b.add(v, (*entity.Batch).UpsertReplace) }

// Delete adds a delete of v's entity, conditional on v's ETag if it has one.
func (b *Batch) Delete(v any) *Batch {
	if b = b.usable(); b.s == nil {
		return b
	}
	pk, rk, etag, err := b.s.address(v)
	if err != nil {
		return b.fail(err)
	}
	b.b.DeleteKeys(pk, rk, etag)
	b.targets = append(b.targets, target{})
	return b
}

// DeleteKeys adds a delete by stored keys; etag "" or entity.AnyETag
// deletes any version.
func (b *Batch) DeleteKeys(partitionKey, rowKey, etag string) *Batch {
	b = b.usable()
	b.b.DeleteKeys(partitionKey, rowKey, etag)
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

func (b *Batch) add(v any, op func(*entity.Batch, any) *entity.Batch) *Batch {
	if b = b.usable(); b.s == nil {
		return b
	}
	bag, tg, err := b.s.prepare(v)
	if err != nil {
		return b.fail(err)
	}
	op(&b.b, bag)
	b.targets = append(b.targets, tg)
	return b
}

// fail records the first error, at the index of the operation being added,
// and keeps the indexes of later operations right with a placeholder.
func (b *Batch) fail(err error) *Batch {
	if b.err == nil {
		b.err = &entity.BatchError{Index: b.b.Len(), Err: err}
	}
	b.b.DeleteKeys("", "", "")
	b.targets = append(b.targets, target{})
	return b
}

// Submit runs b as one entity group transaction. On success it returns each
// operation's new ETag ("" for deletes) and writes it back into each value.
// On failure nothing was written: the error is a *entity.TransactionError
// naming the failing operation, or a *entity.BatchError for a transaction
// that breaks a rule and was not sent.
func (t *Table) Submit(ctx context.Context, b *Batch) ([]string, error) {
	if err := t.ok(); err != nil {
		return nil, err
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if b.s != t.s {
		return nil, errors.New("resolver: the batch was built for another schema")
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	etags, err := t.bags.Submit(ctx, &b.b)
	if err != nil {
		return nil, err
	}
	for i, tg := range b.targets {
		tg.written(etags[i])
	}
	return etags, nil
}
