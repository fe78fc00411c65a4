package bucket

import (
	"errors"
	"slices"
	"strconv"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
)

// Config tunes a Spread.
type Config struct {
	// Buckets is the number of partitions a name is spread over, 1 to 1000;
	// 0 means 16. It is part of the data's layout: every entity's partition
	// depends on it, so changing it later strands the entities written
	// before (they are still there, under partitions the new count no
	// longer reads).
	Buckets int
	// Mode is how Write stores an entity: entity.OpUpsertReplace,
	// entity.OpUpsertMerge or entity.OpInsert; 0 means OpUpsertReplace,
	// which makes writing again harmless (a retry after a lost reply, a
	// replayed load), as in entity.BulkOptions.
	Mode entity.OpKind
	// Concurrency is the most requests in flight for one call: bucket
	// transactions of a Write, bucket queries of a read. 0 means
	// entity.DefaultConcurrency.
	Concurrency int
}

func (c Config) withDefaults() (Config, error) {
	if c.Buckets == 0 {
		c.Buckets = 16
	}
	if c.Mode == 0 {
		c.Mode = entity.OpUpsertReplace
	}
	if c.Concurrency == 0 {
		c.Concurrency = entity.DefaultConcurrency
	}
	switch {
	case c.Buckets < 1 || c.Buckets > entity.MaxPageSize:
		return c, &ConfigError{Field: "Config.Buckets", Reason: "is " + strconv.Itoa(c.Buckets) + ", want 1 to 1000 (0 means 16)"}
	case c.Mode != entity.OpInsert && c.Mode != entity.OpUpsertReplace && c.Mode != entity.OpUpsertMerge:
		return c, &ConfigError{Field: "Config.Mode", Reason: "is " + c.Mode.String() + ", want insert, upsert-replace or upsert-merge"}
	case c.Concurrency < 0:
		return c, &ConfigError{Field: "Config.Concurrency", Reason: "is " + strconv.Itoa(c.Concurrency) + ", want 1 or more (0 means entity.DefaultConcurrency)"}
	}
	return c, nil
}

// Spread writes the entities of a named partition over Config.Buckets
// partitions of one table and reads them back merged in RowKey order
// (design guide §6.12). It is safe for concurrent use.
type Spread[T any] struct {
	tbl *entity.Table[T]
	cfg Config
	ids []string // keys.Buckets(cfg.Buckets)
}

// New returns a spread over tbl, whose type T must have PartitionKey and
// RowKey fields: Write sets the PartitionKey.
func New[T any](tbl *entity.Table[T], cfg Config) (*Spread[T], error) {
	if tbl == nil {
		return nil, &ConfigError{Field: "table", Reason: ReasonNil}
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Mode == entity.OpUpsertMerge && tbl.Protected() {
		return nil, &ConfigError{Field: "Config.Mode", Reason: "is upsert-merge, and the table is encrypted (package crypt), whose entities are written whole: use entity.OpUpsertReplace or entity.OpInsert"}
	}
	return &Spread[T]{tbl: tbl, cfg: cfg, ids: slices.Collect(keys.Buckets(cfg.Buckets))}, nil
}

// Partition returns the PartitionKey of the entity with rowKey in the
// spread partition name: the compound key (name, bucket), the bucket being
// keys.Bucket(rowKey, Buckets) — a stable hash, so a point read needs no
// lookup, and consecutive RowKeys land in different buckets.
func (s *Spread[T]) Partition(name, rowKey string) string {
	if s.ok() != nil {
		return ""
	}
	return keys.Compound(name, keys.Bucket(rowKey, s.cfg.Buckets))
}

// Partitions returns the PartitionKeys of every bucket of name, in the
// service's order.
func (s *Spread[T]) Partitions(name string) []string {
	if s.ok() != nil {
		return nil
	}
	out := make([]string, len(s.ids))
	for i, id := range s.ids {
		out[i] = keys.Compound(name, id)
	}
	return out
}

// checkName refuses a name whose bucket PartitionKeys are not valid keys.
func (s *Spread[T]) checkName(op, name string) error {
	if err := keys.Validate(keys.Compound(name, s.ids[len(s.ids)-1])); err != nil {
		return &ArgError{Op: op, Arg: "name", Value: quoteShort(name), Reason: "does not make valid PartitionKeys", Err: err}
	}
	return nil
}

func quoteShort(s string) string {
	if r := []rune(s); len(r) > 64 {
		s = string(r[:64]) + "…"
	}
	return strconv.Quote(s)
}

// wrap names the operation and spread partition of a storage error.
func wrap(op, name string, err error) error {
	if err == nil {
		return nil
	}
	var ae *ArgError
	if errors.As(err, &ae) {
		return err
	}
	return &Error{Op: op, Name: name, Err: err}
}
