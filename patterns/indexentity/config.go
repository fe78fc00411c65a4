package indexentity

import (
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// Config tunes a Set. The zero value works for SamePartition indexes; each
// field says what 0 means.
type Config struct {
	// Processor is the processor of patterns/eventual whose workers keep
	// the OtherPartition, TableWide and Blob indexes (New registers the
	// Set's message kind on it; run its Run somewhere) and send the
	// caller's messages (WriteOptions.Messages). It is required when an
	// index is OtherPartition, TableWide or Blob (a *ConfigError naming
	// Config.Processor otherwise, before any request); nil is allowed
	// when every index is SamePartition and no write carries messages.
	Processor *eventual.Processor
	// Entries is the table of the OtherPartition and TableWide indexes'
	// entities (guide §6.4 option 3: "in a separate partition or table");
	// nil means the primary's table.
	Entries *entity.Table[entity.DynamicEntity]
	// Blobs is the container of the Blob indexes' lists (option 1); nil
	// is allowed only when no index is a Blob index.
	Blobs *container.Client
	// PrimaryPrefix is the RowKey prefix of the primaries ("empid_"), so
	// that Check tells them from other entity types sharing their
	// partitions; "" means every entity whose RowKey is not an index
	// entity's or tablekit's own ("tablekit."). Writes refuse a primary
	// without it.
	PrimaryPrefix string
	// Retry bounds the read-modify-write rounds lost to concurrent writers
	// of the same entity or index entity; the zero value is
	// entity.RetryPolicy's defaults (10 rounds). A Modify whose
	// ModifyOptions.Retry is not zero uses that instead.
	Retry entity.RetryPolicy
	// Kind is the name of the message kind that keeps OtherPartition and
	// Blob indexes; "" means "indexentity.<table>.v1". Two Sets of one
	// table on one processor need distinct kinds.
	Kind string
	// Outbox tunes the outbox that makes a primary's change and its index
	// message one transaction (OtherPartition and Blob indexes).
	Outbox eventual.OutboxConfig
	// Concurrency is how many primaries a lookup reads at once, and how
	// many buckets of a TableWide list; 0 means
	// entity.DefaultConcurrency.
	Concurrency int
	// MaxEntityBytes is the size, by the service's formula, past which an
	// index entity's list spills to continuation entities; 0 means
	// 256 KiB. 8 KiB to 960 KiB: the entity that one more member tips over
	// the threshold still fits the service's 1 MiB. Below 1 MiB so that a
	// transaction that splits one list, shrinks another and writes the
	// entity (a rename) stays under the 4 MiB of an entity group
	// transaction: a rename writes at most about three times this per
	// SamePartition index whose value changes, plus the entity. With
	// several SamePartition indexes renamed at once, lower it; a
	// transaction over 4 MiB is refused before it is sent
	// (entity.ErrInvalid).
	MaxEntityBytes int
}

// Limits of Config.MaxEntityBytes.
const (
	DefaultMaxEntityBytes = 256 << 10
	minEntityBytes        = 8 << 10
	maxEntityBytes        = entity.MaxEntitySize - 64<<10
)

func (c Config) withDefaults() Config {
	if c.Concurrency <= 0 {
		c.Concurrency = entity.DefaultConcurrency
	}
	if c.MaxEntityBytes == 0 {
		c.MaxEntityBytes = DefaultMaxEntityBytes
	}
	return c
}

func (c Config) check() error {
	if c.PrimaryPrefix != "" {
		if err := keys.Validate(c.PrimaryPrefix); err != nil {
			return &ConfigError{Field: "Config.PrimaryPrefix", Reason: err.Error()}
		}
	}
	if c.MaxEntityBytes != 0 && (c.MaxEntityBytes < minEntityBytes || c.MaxEntityBytes > maxEntityBytes) {
		return &ConfigError{Field: "Config.MaxEntityBytes", Reason: "must be 0 or 8 KiB to 960 KiB"}
	}
	if c.Concurrency < 0 {
		return &ConfigError{Field: "Config.Concurrency", Reason: "is negative"}
	}
	return nil
}

// LookupOptions tunes a lookup.
type LookupOptions struct {
	// Repair repairs, before the lookup returns, the members it found to
	// disagree with their primaries (gone, or holding another value): the
	// read-repair of an index that catches up (OtherPartition, Blob).
	Repair bool
	// Limit is the most entities a lookup returns; 0 means all. A
	// negative Limit is a *ConfigError, before any request.
	Limit int
	// After pages a LookupValueAll: it yields the primaries after this
	// one in its order (PartitionKey, then RowKey). Give the keys of the
	// last entity of the previous page; the zero Key starts at the first,
	// unless HasAfter is set.
	After drift.Key
	// HasAfter says After is given even when it is the zero Key: the keys
	// of the primary whose PartitionKey and RowKey are both empty, the
	// first of the order, which a zero After alone cannot name (a page
	// ending on it would start again at it). Set it on every page after
	// the first.
	HasAfter bool
}

// CheckOptions chooses what Check and Rebuild scan: the primaries'
// partitions, or (nil Partitions) the whole table, then the
// OtherPartition and Blob indexes' lists whose partition has no primaries.
type CheckOptions = drift.CheckOptions

// check refuses options no lookup can follow, before any request.
func (o LookupOptions) check() error {
	if o.Limit < 0 {
		return &ConfigError{Field: "LookupOptions.Limit", Reason: "is negative"}
	}
	return nil
}
