// Package bucket spreads time-ordered writes over several partitions, the
// remedy the design guide gives for the [prepend/append anti-pattern]
// (§6.12), and reads them back as if they were one partition.
//
// The problem: keys that grow with time — a PartitionKey of today's date, a
// log whose every entry goes to one partition — send every insert to one
// partition, served by one node, so the whole load meets one partition's
// limit (about 2,000 entities per second on Azure Storage) however large the
// account. The fix spreads the inserts over N partitions ("buckets") and
// pays for it on reads, which must ask every bucket and merge.
//
// A [Spread] does both halves. [Spread.Write] puts each entity of a named
// partition into bucket keys.Bucket(RowKey, N): PartitionKey
// keys.Compound(name, bucket), for example "login-2024-05-01 07". The
// RowKey is the caller's (inverted ticks for newest first, keys.TicksKey for
// oldest first). [Spread.Query] and [Spread.Tail] run one query per bucket
// at once and merge the results by RowKey ([entity.Table.QueryPartitions]
// with [entity.FanOutOptions] ByRowKey), so the caller sees one partition's
// order; [Spread.Get] is still one point query, since the bucket follows
// from the RowKey.
//
// # The trade
//
// Writes spread: N partitions take the load, each a share. Reads fan out:
// a Tail(n) costs N queries instead of one (N storage transactions, and N
// times the entities read, of which n are kept), a range read N range
// queries. Batching suffers too: k entries written in one call make up to
// min(k, N) transactions instead of k/100, since a transaction holds one
// partition. Choose N from the write rate: with a target of 2,000 entities/s
// per partition and 20,000 per account, N = ceil(peak rate / 2,000) with
// headroom — 4 for a 5,000/s log, 16 covers anything one account can take —
// and no larger, since every read pays for each bucket. Azurite has no
// per-partition throttling, so it shows the cost of the fan-out but not the
// gain; the gain is the service's arithmetic above.
//
// # Guarantee
//
// Each entity lives in exactly one bucket, fixed by its RowKey and N, so a
// point read needs no lookup and rewriting an entity (the default upsert
// mode, or a retry after a lost reply) lands on the same entity: nothing is
// duplicated. A merged read returns exactly the entities one partition
// holding them would return, in the same order (RowKey, ties between equal
// RowKeys of different buckets by bucket). A read is not a snapshot: the
// buckets are read at slightly different moments, so a write that lands
// during a read may be seen in one bucket and a later write missed in
// another.
//
// # Steps
//
//  1. Write: one request for one entity; for several, transactions of up to
//     100 per bucket, Config.Concurrency buckets at a time.
//  2. Tail(n): one query with $top=n per bucket, Config.Concurrency at a
//     time, merged; n is kept.
//  3. Query: one query per bucket, pages fetched as the merge needs them.
//
// # Failure and recovery
//
// A crash during a Write of several entities leaves every transaction of
// it written or not, per bucket; writing the same entities again (the default
// mode is an upsert) completes it — in Insert mode the second Write names
// exactly the entries the first had stored as already existing
// (TestWriteSurvivesACrashAtEveryRequest, killed at every request before
// and after the service executed it). With a reply lost and another
// writer's insert, replace, merge or delete of the same entities before
// azcore's resend, what Write reports of each entry is what the table
// holds (TestWriteBesideAnotherWriter). An entry that cannot be stored is
// refused with the others before anything is sent; one the service
// refuses fails alone (TestWriteOneBadEntryAmongMany). Reads have no state
// to recover.
//
// # Ownership
//
// A Spread owns no entity: it places each entry by its RowKey, and reads
// the N partitions of a name, keys.Compound(name, bucket). Entries written
// there otherwise (a plain entity.Table, another program, a load job) are
// entries like the Spread's, as far as they follow the layout; where they
// do not, there is no Check, and this is what the reads see
// (TestPlainWrites):
//
//   - an entity in the bucket its RowKey gives: an entry like any other;
//   - an entity in another bucket of the name: Query and Tail return it,
//     Get does not (it reads only the RowKey's own bucket); when its RowKey
//     is also an entry's in the right bucket, the merged reads return both;
//   - an entity under the bare name, or in a bucket of another count
//     (Config.Buckets is part of the layout): no read of the Spread returns
//     it.
//
// With package eventual, whose handlers may run twice: Write in its default
// mode (an upsert) leaves the same state when run again; in Insert mode the
// second run names the entries already stored (entity.ErrAlreadyExists),
// which a handler counts as done (TestWriteSurvivesACrashAtEveryRequest).
//
// # Encrypted tables
//
// Over an encrypted table (package crypt's Table.Entity) Config.Mode
// upsert-merge is refused by New: encrypted entities are written whole.
//
// # Azurite and Cosmos DB
//
// Azurite sorts within a partition as the service does and accepts the same
// keys; all tests run on it. The Cosmos DB Table API does not return
// entities in key order, so the merge, which relies on each bucket's order,
// does not hold there; Cosmos DB partitions and scales on its own, and the
// anti-pattern this package answers is Azure Storage's. Measured under the
// Cosmos DB profile of package integration/cosmos (TABLEKIT_PROFILE=cosmos:
// opaque ETags without a time, query pages in no key order, RowKeys of at
// most 255 bytes, reserved property names): a merged Tail differs from the
// Tail of one partition (TestMergedTailEqualsSinglePartition fails there),
// and nothing else of the suite does.
//
// # Usage
//
//	spread, err := bucket.New(events, bucket.Config{Buckets: 16}) // events is an *entity.Table[Event]
//	e := &Event{RowKey: keys.InvertedTicksSeq(seq.Next(time.Now()))}
//	err = spread.Write(ctx, "2024-05-01", e) // e.PartitionKey is now "2024-05-01 07"
//	newest, err := spread.Tail(ctx, "2024-05-01", 20) // 16 queries, merged
//	for e, err := range spread.Query(ctx, "2024-05-01", entity.Query{Filter: filter.RowKeyRange(from, to)}) {
//		…
//	}
//
// [prepend/append anti-pattern]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#prepend-append-anti-pattern
package bucket
