package wide

import (
	"github.com/tablekit/tablekit/entity"
)

// Config tunes a Table. The zero value is ready to use.
type Config struct {
	// ReadAttempts is how many times a read may find rows of different
	// versions — a writer committed between two pages of its query — and
	// read again, before it fails with ErrTorn; 0 means 5.
	ReadAttempts int
	// Retry bounds the read-and-write rounds of Upsert, and of Delete with
	// entity.AnyETag; the zero value means entity.RetryPolicy's defaults.
	// Modify takes its own.
	Retry entity.RetryPolicy
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
	cfg  Config
	// pageSize is the $top of reads; 0 means the service's maximum. Tests
	// make it small to read a logical entity in several pages.
	pageSize int
}

// New returns a Table storing T's logical entities in table's table.
// T is a struct with `table` tags (or entity.DynamicEntity): its
// PartitionKey is the logical entity's partition and its RowKey the
// logical entity's id, from which the rows' keys are made.
func New[T any](table *entity.Table[T], cfg Config) (*Table[T], error) {
	rows, err := entity.NewTable[entity.DynamicEntity](table.Client())
	if err != nil {
		return nil, err
	}
	return &Table[T]{rows: rows, cfg: cfg.withDefaults()}, nil
}
