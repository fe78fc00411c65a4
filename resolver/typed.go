package resolver

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
)

// entryFor returns the entry T is written under.
func entryFor[T any](s *Schema) (*entry, error) {
	if s == nil {
		return nil, errNilSchema
	}
	t := reflect.TypeFor[T]()
	e := s.byType[t]
	if e == nil {
		return nil, s.unregistered(t)
	}
	return e, nil
}

// RowKeyOf returns the RowKey an entity of the registered type T with this
// id is stored under: kind+separator+id with a RowKey-prefix discriminator,
// the StampFunc's RowKey with a function discriminator, else id itself.
func RowKeyOf[T any](s *Schema, id string) (string, error) {
	e, err := entryFor[T](s)
	if err != nil {
		return "", err
	}
	return s.storedRowKey(e, "", id)
}

// OfType returns a filter that selects the rows read as T: with a RowKey
// prefix, the range of T's kind (with a PartitionKey, a range query — the
// guide's second-best kind); with a type property, an equality on it for T's
// name and the names upgraded to T (a partition scan). Combine it with the
// PartitionKey: filter.And(filter.PK("Sales"), f). A function
// discriminator cannot be expressed as a filter: OfType then fails with an
// error matching entity.ErrInvalid.
func OfType[T any](s *Schema) (filter.Expr, error) {
	e, err := entryFor[T](s)
	if err != nil {
		return filter.Expr{}, err
	}
	switch s.disc.mode {
	case modePrefix:
		return filter.RowKeyPrefix(e.prefix), nil
	case modeProperty:
		names := s.resolving[e.typ]
		es := make([]filter.Expr, len(names))
		for i, n := range names {
			es[i] = filter.Eq(s.disc.property, filter.String(n))
		}
		return filter.Or(es...), nil
	}
	return filter.Expr{}, invalidArg(fmt.Sprintf("resolver: a function discriminator has no filter for %v", e.typ))
}

// Get reads the entity of the registered type T with this PartitionKey and
// id (the RowKey field's value: without the prefix of a RowKey-prefix
// discriminator). A missing entity matches entity.ErrNotFound, one of
// another registered type ErrWrongType, one of unknown type ErrUnknownType;
// each is a *RowError.
func Get[T any](ctx context.Context, t *Table, partitionKey, id string) (*T, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	if err := t.ok(); err != nil {
		return nil, err
	}
	e, err := entryFor[T](t.s)
	if err != nil {
		return nil, err
	}
	rk, err := t.s.storedRowKey(e, partitionKey, id)
	if err != nil {
		return nil, err
	}
	v, err := t.Get(ctx, partitionKey, rk)
	if err != nil {
		return nil, err
	}
	return as[T](v, partitionKey, rk)
}

func as[T any](v any, pk, rk string) (*T, error) {
	switch x := v.(type) {
	case *T:
		return x, nil
	case *entity.DynamicEntity:
		return nil, &RowError{PartitionKey: pk, RowKey: rk, Err: ErrUnknownType}
	}
	return nil, &RowError{PartitionKey: pk, RowKey: rk, Err: fmt.Errorf("%w: %T, not *%v", ErrWrongType, v, reflect.TypeFor[T]())}
}

// Query runs q restricted to the rows read as T (OfType, when the
// discriminator can say it as a filter) and yields them as *T, dropping any
// other row; see Table.Query. q.Limit counts the rows yielded.
func Query[T any](ctx context.Context, t *Table, q entity.Query) iter.Seq2[*T, error] {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(*T, error) bool) { yield(nil, err) }
	}
	return func(yield func(*T, error) bool) {
		if err := t.ok(); err != nil {
			yield(nil, err)
			return
		}
		f, err := OfType[T](t.s)
		if err != nil && t.s.disc.mode == modeFunc && !errors.Is(err, ErrUnregistered) {
			err = nil // no filter: read everything, keep the T rows
		}
		if err != nil {
			yield(nil, err)
			return
		}
		q.Filter = filter.And(q.Filter, f)
		limit := q.Limit
		q.Limit = 0 // rows of other types must not count
		if limit > 0 && q.PageSize == 0 && limit < entity.MaxPageSize {
			q.PageSize = limit
		}
		n := 0
		for v, err := range t.Query(ctx, q) {
			if err != nil {
				yield(nil, err)
				return
			}
			x, ok := v.(*T)
			if !ok {
				continue
			}
			if !yield(x, nil) {
				return
			}
			if n++; limit > 0 && n == limit {
				return
			}
		}
	}
}
