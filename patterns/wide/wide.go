package wide

import (
	"fmt"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// Config tunes a Table. The zero value is ready to use.
type Config struct {
	// ReadAttempts is how many times a read may find rows of different
	// versions — a writer committed between two pages of its query — and
	// read again, before it fails with ErrTorn; 0 means 5, a negative
	// number is a *ConfigError.
	ReadAttempts int
	// Retry bounds the read-and-write rounds of Upsert, and of Delete with
	// entity.AnyETag; the zero value means entity.RetryPolicy's defaults.
	// Modify takes its own.
	Retry entity.RetryPolicy
	// PageSize is the most rows a read asks for in one request (the
	// query's $top), 1 to entity.MaxPageSize; 0 means entity.MaxPageSize,
	// so that a logical entity (at most MaxRows+1 rows) is one request.
	// A smaller page reads a wide entity in several requests, between
	// which writers may commit (the read then reads again, see
	// ReadAttempts): useful to bound the size of one reply, and to test.
	PageSize int
}

func (c Config) withDefaults() Config {
	if c.ReadAttempts <= 0 {
		c.ReadAttempts = 5
	}
	return c
}

// Table stores logical entities of type T, each as several rows of one
// partition (design guide §6.10). It is safe for concurrent use.
type Table[T any] struct {
	rows *entity.Table[entity.DynamicEntity] // the physical rows, any shape
	// codec converts logical entities: the table given to New, which
	// seals (encrypts) a logical entity as a whole when it is protected
	// (package crypt), before its properties are spread over rows.
	codec *entity.Table[T]
	cfg   Config
}

// New returns a Table storing T's logical entities in table's table.
// T is a struct with `table` tags (or entity.DynamicEntity): its
// PartitionKey is the logical entity's partition and its RowKey the
// logical entity's id, from which the rows' keys are made.
//
// A nil table, or a Config field out of its range, is a *ConfigError.
func New[T any](table *entity.Table[T], cfg Config) (*Table[T], error) {
	if table == nil {
		return nil, &ConfigError{Field: "table", Reason: ReasonNil}
	}
	if cfg.ReadAttempts < 0 {
		return nil, &ConfigError{Field: "Config.ReadAttempts", Reason: argerr.Negative}
	}
	if cfg.PageSize < 0 || cfg.PageSize > entity.MaxPageSize {
		return nil, &ConfigError{Field: "Config.PageSize", Reason: fmt.Sprintf("is %d, want 1 to %d, or 0 for %d", cfg.PageSize, entity.MaxPageSize, entity.MaxPageSize)}
	}
	rows, err := entity.NewTable[entity.DynamicEntity](table.Client())
	if err != nil {
		return nil, err
	}
	return &Table[T]{rows: rows, codec: table, cfg: cfg.withDefaults()}, nil
}
