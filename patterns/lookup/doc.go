// Package lookup joins in the client: a read-through cache of small,
// rarely changing lookup data — departments, product categories, country
// codes — that a service reads once and joins in memory, instead of
// copying it into every entity that refers to it (design guide §5,
// [join in the client]).
//
// Denormalising (package
// [github.com/tablekit/tablekit/patterns/denormalize]) makes each read one
// point query and each change of the copied data a fan-out to every copy.
// For data that a great many entities refer to, and that changes rarely,
// the cache is cheaper: the entities keep only the key (an employee's
// department id), and a lookup is a map read.
//
//	depts, err := lookup.New(table, lookup.Config{Query: entity.Query{Filter: filter.PK("departments")}, TTL: time.Minute})
//	d, err := depts.Get(ctx, "departments", e.Department) // loads once, then from memory
//	snap, err := depts.Snapshot(ctx)                        // one version for a join of many rows
//	for e := range employees { d, _ := snap.Get("departments", e.Department); … }
//	err = depts.Refresh(ctx)                                 // after a change you must see now
//
// It is its own package, not part of denormalize, because it is the
// other answer to the same question: it writes nothing and keeps no
// copy in storage, and its guarantee is a bound on staleness, not
// agreement between entities.
//
// # Guarantee
//
//   - A lookup returns the data as a load read it, never older than TTL
//     plus the load's own duration: a lookup that finds the snapshot older
//     than TTL waits for a revalidation (one at a time; concurrent lookups
//     share it). Refresh and Reload return after a load that started after
//     they were called: a change written before the call is served after
//     it, also one written while an earlier load was reading its pages,
//     and whatever this process's clock says (TestClientClockSkew,
//     TestLoadStraddledByChangesWithClockAhead).
//   - Snapshots are immutable and replaced whole (an atomic pointer), so a
//     reader never sees a torn value or a half-applied revalidation, and a
//     reader holding a Snapshot sees one version of all the data. Lookups
//     take no lock.
//   - One row that does not decode as the cache's type fails alone: the
//     rest of the data loads and is served, and a lookup of that row
//     returns its *RowError (errors.Is(err, entity.ErrDecode)), never a
//     value — also when a revalidation finds a row it held changed into
//     one that does not decode; Snapshot.Failed lists such rows
//     (TestOneUndecodableRowAmongMany). Whoever can write one row cannot
//     stop the cache from serving the others.
//   - Deletions are seen at full loads only (Reload, and every FullEvery'th
//     load): a query of what changed cannot see an entity that is gone.
//     Mark lookup data retired rather than deleting it, or Reload after a
//     delete, when that matters.
//
// # Steps
//
//  1. First lookup: one query of Config.Query (a page per 1,000 entities:
//     a single transaction for small data).
//  2. Lookups within TTL: no request.
//  3. Revalidation (the first lookup after TTL, or Refresh): one query of
//     Config.Query and "Timestamp ge mark - Margin", where mark is the
//     earlier of the newest Timestamp held and the time the last load
//     started; the entities it returns replace their cached versions in a
//     new snapshot. Every FullEvery'th load is a full load instead.
//
// # Failure and recovery
//
// A load that fails (a request, not a row) leaves the last snapshot in place (Cached returns it)
// and returns a *LoadError to the lookups that waited for it; the next
// lookup tries again. A load runs under Config.Timeout, not under the
// context of the lookup that started it, so one impatient caller does not
// fail the others.
//
// # Clocks
//
// An entity's Timestamp is stamped by the server of its partition when the
// change is applied; servers' clocks differ a little, and a change becomes
// visible slightly after it is stamped. The revalidation therefore asks
// for changes since Margin before its mark (1 minute by default: for
// rarely changing data, that re-reads the few entities changed in the
// minute before the newest change). The mark is the service's newest
// Timestamp or, when earlier, the load's start, which bounds a multi-page
// load that a concurrent change may straddle. The start is taken on the
// service's clock too: the Date of the load's last answer less the time
// since its first request left. So a client clock ahead of or behind the
// service's moves no mark; as the Date has whole seconds, a revalidation
// may re-read the changes of the second before the last load. Only a
// client built without entity.ClientOptions, whose answers are not dated,
// falls back to Config.Now: a clock of it ahead by more than Margin may
// then miss a change that straddled a load. Azurite stamps every entity
// with its one process's clock, in milliseconds, and
// compares DateTime filters to the millisecond.
//
// # Encrypted tables
//
// Over an encrypted table (package crypt's Table.Entity) a load reads the
// rows as stored and decrypts each through the table (a row that does not
// authenticate fails alone, as one that does not decode); Config.Query's
// filter is checked as the table checks filters. The snapshots hold the
// decrypted values in memory.
//
// # Azurite and Cosmos DB
//
// Both evaluate the Timestamp filter; on the Cosmos DB Table API a query by
// Timestamp is a scan of the query's partition (it is on the service too:
// Timestamp is not indexed), which is why the data must be small. Under the
// Cosmos DB profile of package integration/cosmos (TABLEKIT_PROFILE=cosmos:
// opaque ETags without a time, query pages in no key order, RowKeys of at
// most 255 bytes, reserved property names) the whole suite passes.
//
// [join in the client]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-modeling#join-in-the-client
package lookup
