package crypt

import (
	"io"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

// RewriteFilter is the filter a query with f sends to the service.
func RewriteFilter[T any](t *Table[T], f filter.Expr) (filter.Expr, error) {
	q, _, err := t.query(entity.Query{Filter: f}, nil, false)
	return q.Filter, err
}

// SetRandom makes r the source of t's content keys and nonces, for the
// documented example of the wire format.
func SetRandom[T any](t *Table[T], r io.Reader) { t.core.random = r }
