// Package patterns is the parent of one package per pattern of the Azure
// Table design guide ([Table design patterns], §6). Each sub-package states its consistency guarantee
// in its own doc.go and proves it in tests against Azurite, with failures
// injected (crashes between steps, lost replies, concurrent writers).
//
// # Map: guide section → package → guarantee
//
//	§6.1  secondary index, same partition     patterns/secondaryindex
//	§6.2  secondary index, other partitions  patterns/secondaryindex
//	      or table-wide (no PartitionKey to look up)
//	      entries change with the primary in one transaction, or converge
//	      through eventual; verified lookups; one winner per unique value;
//	      drift Check and resumable Rebuild
//	§6.4  index entities             patterns/indexentity
//	      the keys of every entity sharing a value, in the partition (one
//	      transaction), elsewhere or in a blob (eventual); spills past 1 MiB
//	§6.3  eventually consistent transactions  patterns/eventual
//	      queue-driven steps across partitions, tables and blobs: each step runs at
//	      least once and is idempotent, so the state converges once the queue drains;
//	      poison messages after MaxDeliveries, Replay, and an outbox written in the
//	      same transaction as the local change
//	§6.5  denormalisation            patterns/denormalize
//	      copies in the same partition change in the source's transaction; copies
//	      elsewhere through eventual, equal to their source once the queue drains
//	§6.6  compound key               patterns/compound
//	      typed parent/child ids in one RowKey: one point query, one range query
//	§5    join in the client         patterns/lookup
//	      small lookup data served from memory, revalidated by what changed
//	§6.7  log tail                   patterns/logtail
//	      the n newest entries of a partition in one $top request (inverted ticks)
//	§6.8  high-volume delete         patterns/rotation
//	      a table per period; Expire deletes whole tables, one transaction per period
//	§6.9  data series                patterns/dataseries
//	      counters in one entity, one point query to read, every increment exactly once
//	§6.10 wide entities              patterns/wide
//	      any number of properties over rows of one partition; one transaction per
//	      write, one range query per read, never a torn read
//	§6.11 large entities             patterns/large
//	      blob fields in versioned, hash-checked blobs; never a reference to a
//	      missing blob; old blobs collected through eventual and Sweep
//	§6.12 prepend/append             patterns/bucket
//	      time-ordered writes spread over N partitions, reads merged by RowKey
//	§6.13 log data                   patterns/bloblog
//	      buffered log records in append blobs by service and hour; exactly once per
//	      flushed record, readers skip blobs outside the time range
//	—     index findings             patterns/drift
//	      the vocabulary of the index packages' drift checks and rebuilds
//
// The string builders of §6.6 are keys.Compound, keys.CompoundPrefix and
// filter.RowKeyRange; §4's client-side encryption is package entity/crypt and
// §7's shared access signatures are package entity/sas.
//
// # Encrypted tables
//
// Every package that takes an *entity.Table[T] takes an encrypted one,
// crypt's Table.Entity, through that one type: whatever it writes is
// encrypted, whatever it reads is checked and decrypted, and what it copies
// out of an entity stays encrypted. Where it cannot, New refuses with an
// error matching entity.ErrInvalid: bucket's upsert-merge, large's blob
// fields that the crypt policy may choose, denormalize's copies into a
// property the targets' table does not encrypt, eventual.Move into a table
// without encryption (entity/crypt's doc lists each pattern; the canary in
// integration/canary proves no plaintext leaves). The index Sets key an
// index of an encrypted property (Index.Encrypted) by the value's beacon
// and check every lookup against the decrypted primary; rotation, which
// makes its period tables itself, wraps each through Config.Open.
//
// # Choosing an index
//
// Storage transactions per write and per lookup (lookups measured with the
// cost meter in the packages' benchmarks; writes counted from the steps each
// package's doc lists):
//
//	query                                   use                              per write                 per lookup
//	a value in a known partition            secondaryindex SamePartition     1 (insert), 2 (modify)    1 point or range query
//	  (unique, non-unique, prefix)          always exact
//	the same, entries kept elsewhere        secondaryindex OtherPartition    writer 3, 5 with a unique  1 (needs the PartitionKey)
//	                                        converges through eventual       value; + the worker's
//	a value whatever the partition          secondaryindex TableWide         writer 5; + the worker's  unique: 1 point query;
//	  ("order 10042", "status pending")     entries' partition from the                                non-unique: 1 range query;
//	                                        value, Buckets of them                                     prefix: Buckets queries
//	the same, with no queue worker          TableWide with an inline         unique: 8, all in         as TableWide
//	                                        processor (eventual.NewInline)   the write's path
//	every entity of a value with very       indexentity (in the partition,   2 in the partition (list  the list (Buckets of them
//	  many members ("all Jones in Sales")   elsewhere, table-wide)           read + transaction);      table-wide), then 1 point
//	                                                                         table-wide 3,
//	                                                                         9 with the worker's       read per member fetched
//
// A TableWide index takes about Buckets ×
// 2,000 entity writes per second (the service's target per partition), within
// the account's ~20,000, one value at most 2,000 (its
// bucket): a value held by very many entities (a status) is an index
// entity's job. Several indexes of one entity type belong in ONE Set, and
// a secondaryindex Set and an indexentity Set cannot both own one table's
// writes: within a Set, spread a hot value over several by putting a
// bucket of the primary's key in it ("pending_3", keys.Bucket(rk, 4)) and
// look each up.
//
// # Composing patterns
//
// Each package owns what it keeps in step — a Set every write of its
// primaries, a Copies its sources and targets, a wide.Table the rows of a
// wide entity, a large.Table its blob fields — and the Ownership sections
// (secondaryindex, indexentity, denormalize, wide, logtail, dataseries,
// rotation, bucket) say what a write through anything else leaves (and what
// Check then reports), with the test that shows it, and large's (a plain
// replace or delete leaves orphan blobs for Sweep). To compose, use the owner's
// writes as steps: WriteOptions.Messages (secondaryindex, indexentity,
// denormalize) commits the caller's own eventual messages in the write's
// transaction, sent exactly when it committed; Set.MoveTo archives an
// indexed primary with its entries (eventual.Move's plain delete would
// leave them behind); logtail entries are written once per message by an
// upsert under a key made from the message. examples/orders combines
// them: orders by customer, table-wide lookups by number and status,
// archiving through a queue, an audit log.
//
// # How a pattern package reads
//
// The packages follow one shape, so that learning one teaches the rest:
//
//   - New(clients…, cfg Config, declarations…) (*X, error), taking typed
//     tables (*entity.Table[T]), queues and containers, or the aztables
//     clients a table-per-period rotation needs — built with
//     entity.ClientOptions or package account, never connection strings;
//     Config is a value whose zero fields mean documented defaults
//     (bloblog.New also takes the context its Logger runs in).
//   - Provision(ctx) error on every type that owns storage creates its
//     tables, queues and containers unless they exist, nil only when they
//     do (a lost reply and a name being deleted included), so that
//     account.Provision(ctx, x, y, …) provisions a program in one call; a
//     type that only reads or borrows a caller's storage (lookup.Cache,
//     bloblog.Reader, eventual.Outbox) has none and says so.
//   - errors.go holds every sentinel and typed error, prefixed with the
//     package's name; typed errors name the step and the keys and unwrap to
//     entity's errors, so errors.Is(err, entity.ErrPreconditionFailed) and
//     errors.Is(err, entity.ErrOutcomeUnknown) keep working.
//   - doc.go: the problem, the fix, Guarantee, Steps, Failure and recovery,
//     Azurite / Cosmos DB differences, and a usage snippet (compound, whose
//     operations are single reads, and drift, a vocabulary, have less).
//   - Benchmarks compare /tablekit with a baseline in one function on the
//     same Azurite (/raw aztables, or the /naive or /handwritten code it
//     replaces) and report storage-tx/op from package cost.
//
// [Table design patterns]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns
package patterns
