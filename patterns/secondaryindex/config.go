package secondaryindex

import (
	"errors"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// Config tunes a Set. The zero value works for SamePartition indexes; each
// field says what 0 means.
type Config struct {
	// Processor is the processor of patterns/eventual whose workers keep
	// the OtherPartition and TableWide indexes (New registers the Set's
	// message kind on it; run its Run somewhere) and send the caller's
	// messages (WriteOptions). It is required when an index is
	// OtherPartition or TableWide (a *ConfigError naming
	// Config.Processor otherwise, before any request); nil is allowed
	// when every index is SamePartition and no write carries messages.
	Processor *eventual.Processor
	// Entries is the table of the OtherPartition and TableWide indexes'
	// entries (guide §6.2: "in different partitions or tables"); nil
	// means the primary's table. Entries are property bags: the copied properties and the
	// keys of their primary. An encrypted table is taken and written
	// without its protection: over an encrypted primary table, entries
	// hold beacons and properties in clear only.
	Entries *entity.Table[entity.DynamicEntity]
	// PrimaryPrefix is the RowKey prefix of the primaries ("empid_"), so
	// that Check tells them from other entity types sharing their
	// partitions; "" means every entity whose RowKey is not an entry's or
	// tablekit's own ("tablekit."). Writes refuse a primary without it.
	PrimaryPrefix string
	// Retry bounds the read-modify-write rounds of Modify, Delete and the
	// repairs, lost to concurrent writers; the zero value is
	// entity.RetryPolicy's defaults (10 rounds). A Modify whose
	// ModifyOptions.Retry is not zero uses that instead.
	Retry entity.RetryPolicy
	// Grace is how long the reservation of a unique OtherPartition or
	// TableWide value protects a write that is under way: another writer
	// takes a value claimed by an update that did not arrive only after
	// Grace (and after fencing the primary), one claimed by an insert only after Grace, an
	// insert being sent within Grace/2 of its reservation or not at all.
	// The last rests on time: the deadline stops a transaction from
	// leaving after Grace/2, not one that left earlier from landing
	// later. A reservation's age is read on the service's clock alone:
	// the Date of the answer that returned it less its Timestamp, so no
	// skew of this process's clock frees a reservation early or keeps it
	// late (TestReservationAgeIgnoresClockSkew); the Grace/2 deadline is
	// time elapsed on this process's clock. Choose Grace well above twice
	// the longest a request may spend in transit (azcore's per-try
	// timeout). 0 means Config.Processor's DefaultGrace (two thirds of
	// its redelivery window: 10 s with eventual's defaults). It must be
	// shorter than that window, the time the processor keeps redelivering
	// a message (eventual.Config's RetryDelay and MaxDeliveries), which a
	// message waiting for a claim relies on: New refuses a Grace the
	// processor's CheckGrace refuses, with a *ConfigError naming
	// Config.Grace, before any request, when an index is unique and
	// OtherPartition or TableWide (TestGraceChecked). On a slow account
	// raise the processor's window, and with it the default: see
	// eventual.Processor.DefaultGrace and the package documentation.
	Grace time.Duration
	// Kind is the name of the message kind that keeps OtherPartition and
	// TableWide indexes; "" means "secondaryindex.<table>.v1". Two Sets of one table
	// on one processor need distinct kinds.
	Kind string
	// Outbox tunes the outbox that makes a primary's change and its index
	// message one transaction (OtherPartition and TableWide indexes), and
	// of the caller's messages (WriteOptions).
	Outbox eventual.OutboxConfig
	// Concurrency is how many primaries a verifying lookup reads at once,
	// and how many buckets' first pages LookupValuePrefix reads at once
	// (set it to Index.Buckets to read them all side by side); 0 means
	// entity.DefaultConcurrency.
	Concurrency int
	// Now is the clock a reservation's age is read with when the answer
	// that returned it carried no Date header (a client built without
	// entity.ClientOptions); nil means time.Now.
	Now func() time.Time
}

// fallbackGrace is the Grace of a Set without a processor, which has no
// unique OtherPartition or TableWide index to use it.
const fallbackGrace = 10 * time.Second

func (c Config) withDefaults() Config {
	if c.Grace <= 0 && c.Processor != nil {
		c.Grace = c.Processor.DefaultGrace()
	}
	if c.Grace <= 0 {
		c.Grace = fallbackGrace
	}
	if c.Concurrency <= 0 {
		c.Concurrency = entity.DefaultConcurrency
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

func (c Config) check() error {
	if c.PrimaryPrefix != "" {
		if err := keys.Validate(c.PrimaryPrefix); err != nil {
			return &ConfigError{Field: "Config.PrimaryPrefix", Reason: err.Error()}
		}
	}
	if c.Grace < 0 {
		return &ConfigError{Field: "Config.Grace", Reason: "is negative"}
	}
	return nil
}

// checkGrace refuses a Grace that the processor's messages cannot wait
// for (eventual.Processor.CheckGrace): not shorter than its redelivery
// window, or any Grace of a processor that redelivers at once. given is
// the Grace as the caller set it (0: the processor's DefaultGrace).
func (c Config) checkGrace(given time.Duration) error {
	err := c.Processor.CheckGrace("Config.Grace", c.Grace)
	if err == nil {
		return nil
	}
	var ce *eventual.ConfigError
	if !errors.As(err, &ce) {
		return err
	}
	reason := ce.Reason
	if given == 0 {
		reason = "is 0, which means the processor's DefaultGrace, " + reason
	}
	return &ConfigError{Field: "Config.Grace", Reason: reason + " (an index is unique and OtherPartition or TableWide: its reservations wait for Grace)"}
}

// LookupOptions tunes a lookup.
type LookupOptions struct {
	// Verify reads the primary of every entry found (one point query
	// each, Config.Concurrency at once) and returns it, with its ETag, only
	// if it still holds the value looked up: a read-repair lookup, which
	// never returns an entity whose indexed value differs, and returns
	// each primary once, even when two of its entries are found (a value
	// changed, its old entry not removed yet, and the primary changed
	// between their reads). Entries that disagree are skipped, and
	// repaired when Repair is set. Without
	// Verify a lookup returns the entries' copies: the primary's keys and
	// the copied properties, no ETag — exact for SamePartition indexes,
	// possibly behind (or ahead, for a write under way) for OtherPartition
	// and TableWide ones. On an encrypted table every lookup verifies,
	// Verify or not: entries hold no copy of the encrypted values.
	Verify bool
	// Repair repairs the entries a verifying lookup skipped (Set.Repair),
	// before the lookup returns.
	Repair bool
	// Limit is the most entities a lookup returns; 0 means all. A
	// negative Limit is a *ConfigError, before any request.
	Limit int
	// After pages LookupAll and LookupValueAll, whose order is the
	// primaries' keys (PartitionKey, then RowKey): they yield the
	// primaries after this one. Give the keys of the last entity of the
	// previous page; the zero Key starts at the first, unless HasAfter is
	// set. It is patterns/indexentity's LookupOptions.After. The other
	// lookups refuse it with a *ConfigError, before any request.
	After drift.Key
	// HasAfter says After is given even when it is the zero Key: the keys
	// of the primary whose PartitionKey and RowKey are both empty, the
	// first of the order, which a zero After alone cannot name (a page
	// ending on it would start again at it). Set it on every page after
	// the first.
	HasAfter bool
}

// paged reports a lookup that starts after LookupOptions.After.
func (o LookupOptions) paged() bool { return o.HasAfter || o.After != (drift.Key{}) }

// compareKeys orders the primary pk/rk against after, in the service's
// key order.
func compareKeys(pk, rk string, after drift.Key) int {
	if c := keys.Compare(pk, after.PartitionKey); c != 0 {
		return c
	}
	return keys.Compare(rk, after.RowKey)
}

// CheckOptions chooses what Check and Rebuild scan: the primaries'
// partitions, or (nil Partitions) the whole table and Config.Entries.
type CheckOptions = drift.CheckOptions
