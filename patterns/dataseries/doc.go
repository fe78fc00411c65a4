// Package dataseries is the design guide's [data series pattern] (§6.9): a
// series of counters kept in one entity, so that reading all of it is one
// point query.
//
// The problem: an application counts, say, the messages each employee
// sends per hour and draws the last 24 hours. One entity per hour makes the
// chart a 24-entity range read. The guide's fix stores the 24 counters as
// 24 properties of one entity, updated by merge and read with one request.
//
// A [Series] keeps such series in a table of [entity.DynamicEntity]: the
// series (PartitionKey, RowKey) has Config.Slots counters (24 by default),
// slot i in the Int64 property Prefix+i ("C00" … "C23"). [Series.Add] and
// [Series.AddMany] increment, [Series.Get] reads.
//
// # Guarantee
//
// Every increment reported done is counted exactly once, whatever the
// number of concurrent writers and whatever replies are lost: an increment
// is an ETag-guarded merge ([entity.Table.Modify]) that starts again from a
// fresh read when another writer got in between, so no increment overwrites
// another, and the Series writes through [entity.Table.WithWriteTokens], so
// that when azcore resends a merge whose reply was lost, the 412 of the
// resend is told apart from another writer's: an applied increment is
// reported done and never applied again (TestConcurrentWriters: 16
// writers on one entity; TestLostReplies: a tenth of the replies lost
// among racing writers). The slots of one entity change together, so a
// reader never sees half of an AddMany on one entity
// (TestCrashAtEveryRequest).
//
// Add returns the value its own increment produced: the slot right after
// it, as its write stored it. When another writer's increment lands
// between this one's lost reply and azcore's resend, this one still
// returns its own value and the other the next: a counter used for
// sequence numbers never hands one out twice (TestAddReturnsItsOwnValue,
// TestLostReplySeams). When that value cannot be proved (below), Add
// returns entity.ErrOutcomeUnknown, never another writer's value.
//
// An increment that fails (entity.ErrContention after Config.Retry's rounds,
// TestContentionChangesNothing, also when another program keeps deleting
// the series entity it creates: TestAddCreatesAgainAfterADelete;
// ErrOverflow, ErrStoredType: TestAddManyOneBadSlotWritesNothing) changed
// nothing. One whose outcome could not
// be proved (entity.ErrOutcomeUnknown: the write token chain was cut, for
// example by more than 16 other writes before the re-read) may have been
// applied; it is reported as such, never as done or failed
// (TestLostReplySeams, TestLostReplies).
//
// # Steps
//
//  1. Add: read the entity (one point query), add, merge the changed slots
//     back with If-Match (one request); on 412, again from 1.
//  2. The first increment of a series finds no entity: it inserts the
//     entity holding the increment (one request; Modify with
//     entity.ModifyOptions.Create). When a concurrent writer inserted it
//     first, the insert fails (409) and step 1 starts again on theirs; the
//     write token settles a resent insert's 409 as it does a resent
//     merge's 412. An entity that another program deletes between a read
//     and the write is created again, within Config.Retry's rounds, then
//     entity.ErrContention (TestAddCreatesAgainAfterADelete).
//  3. Get: one point query; for a series of several entities, one range
//     query over them. Add with a delta of 0 is one point query.
//  4. AddMany over several entities first reads them (one range query)
//     and refuses, before writing anything, a slot that cannot take its
//     delta (ErrStoredType, ErrOverflow); then step 1 for each entity.
//
// # Longer series
//
// An entity holds at most 252 properties, one of which the write token
// (TkWrite) takes. A series longer than Config.SlotsPerEntity (240 by
// default, leaving room for the application's own properties; at most 251)
// rolls over to further entities of the same partition, the
// wide-entity layout of §6.10: chunk c of series rk is the entity with
// RowKey keys.Compound(rk, c), holding slots c·SlotsPerEntity onwards. They
// sort next to each other, so Get still reads the series with one query
// (up to 1,000 entities, 240,000 slots). An AddMany that spans entities
// changes them one after another; each entity's part is atomic, the whole is
// not. The guide's alternative for series too large for a table, a blob, is
// not this package's.
//
// # Failure and recovery
//
// A crash between the steps leaves the entity with or without the
// increment, or no entity (it reads as zeros): the service applies a
// merge or an insert entirely or not at all. A crash in the middle
// of an AddMany over several entities leaves the first entities (in slot
// order) incremented and the later ones not (TestCrashAtEveryRequest).
// A process that failed with an error learns from the *Error which entity
// was not changed, and repeats only that one and those after it; a fresh
// process after a crash cannot tell from the counters alone whether its
// predecessor's increments landed — a caller that needs exactly-once
// across crashes keeps its own record of what it has counted.
//
// One slot that cannot take its delta fails the whole AddMany before
// anything is written, naming its entity (TestAddManyOneBadSlotWritesNothing),
// unless another program changes that slot between the check and the
// write: then the entities before it keep their increments, as after any
// failure mid-way.
//
// # Contention
//
// The guide warns that many clients updating one entity contend. Every
// round of a lost race costs two transactions and a backoff (Config.Retry);
// 16 writers hammering one entity on Azurite settle within a few rounds.
// Beyond that, split the counters over more entities (per writer, or per
// shard, summed on read).
//
// # Ownership
//
// A Series owns the slot properties (Config.Prefix and the slot's number:
// [Series.Property]) and the write token TkWrite of its series entities —
// (pk, rk) and, for a longer series, its chunks keys.Compound(rk, c). The
// other properties of those entities are the caller's and are kept
// (TestIncrementKeepsOtherProperties). There is no Check: a counter has no
// source to be compared with. What another writer of the slots leaves
// (TestPlainWrites):
//
//   - a slot merged by hand sets the counter: the increments before it
//     are gone, and Add goes on from the value written;
//   - the entity replaced without its slots resets them to 0;
//   - a slot written as anything but an Int32 or Int64 makes Get and Add
//     fail with ErrStoredType, until it is written as an integer again;
//   - a write between an Add's lost reply and azcore's resend: the Add
//     returns its own value or entity.ErrOutcomeUnknown, never another
//     writer's, and the stored counter is what the last writer wrote
//     (TestLostReplySeams).
//
// With package eventual: Add is not idempotent, so a handler that adds
// counts a message delivered twice twice. To count a message once, a
// handler increments through eventual.Once in the series' table and
// partition: the Once marker and a merge of the slot conditional on the
// entity's ETag, in one transaction (TestOncePerMessage).
//
// # Encrypted tables
//
// Over an encrypted table (package crypt's Table.Entity, whose
// Config.Encrypt chooses the properties of a series entity to encrypt), an
// increment writes the entity whole — a replace under the ETag it read,
// as ETag-guarded as the merge, so nothing another writer wrote is undone —
// since an encrypted entity cannot be merged
// (TestNoPlaintextLeaves in integration/canary).
//
// # Azurite and Cosmos DB
//
// Azurite honours If-Match as the service does; all tests run on it. The
// Cosmos DB Table API supports ETags and merge too: under the Cosmos DB
// profile of package integration/cosmos (TABLEKIT_PROFILE=cosmos: opaque
// ETags without a time, query pages in no key order, RowKeys of at most 255
// bytes, reserved property names) the whole suite passes — a series is read
// by its keys, not by the order rows come in, and no step reads a time from
// an ETag.
//
// # Usage
//
//	series, err := dataseries.New(stats, dataseries.Config{Prefix: "H"}) // stats is an *entity.Table[entity.DynamicEntity]
//	_, err = series.Add(ctx, "alice", "2024-05-01", time.Now().UTC().Hour(), 1)
//	day, err := series.Get(ctx, "alice", "2024-05-01") // 24 counters, one point query
//
// [data series pattern]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#data-series-pattern
package dataseries
