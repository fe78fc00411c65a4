// Package rotation implements the [high volume delete pattern] of the Azure
// Table design guide (§6.8): entities that expire together live in a table
// of their own, one per period (the guide's login attempts, a table per
// day), and expiring a period deletes its table — one storage transaction,
// however many entities it holds, where deleting them costs one transaction
// per entity or per 100-entity batch, and takes minutes for millions.
//
// A [Rotation] routes each write to the table of the period its time
// ([Config].Time) falls in, creating the table when the period is first
// written; [Rotation.Query] reads a time range from the tables that overlap
// it, merged in key order as if one table held them; [Rotation.Expire]
// deletes the tables of every period that ended before a time.
//
// The guide's traps are handled:
//   - A deleted table's name cannot be used again for a while (the service
//     answers 409 TableBeingDeleted for at least 40 seconds). Each period's
//     table gets a fresh name — the rotation's name, the period
//     (20140731 for a day, 2014073118 for an hour) and a random suffix —
//     and a catalog table lists the live periods so that every reader and
//     writer finds the same table. An expired period's name is never used
//     again.
//   - A table that is gone or being deleted is never an error to a reader:
//     it has expired, and Query skips it.
//   - New tables start cold: each write that opens a period — also one
//     whose table was created ahead — creates the next Config.Ahead
//     periods' tables too, so every period's table exists before its first
//     write (TestAheadEveryPeriod); [Rotation.Prepare] creates them ahead of
//     time.
//   - Table names (3–63 ASCII letters and digits, starting with a letter)
//     are checked, with every other argument, before any request.
//
// # Guarantee
//
// Every period has at most one table, named in the catalog; all writers use
// it. Once Expire(before) returns, the tables of the periods that end at or
// before before are deleted, no write can put an entity in those periods
// again (writes fail with [ErrExpired]; the one exception, a claimer
// stalled across the Expire, is under "Failure and recovery") and no name
// of theirs is used again. The tables of the other periods are untouched. While Expire runs,
// a reader sees each expiring period whole, in part or not at all, and
// never an error for it; entities of the other periods are all returned.
//
// # Steps
//
// Writing to a period the process has not opened yet (a period it only
// created ahead of another is opened on its first write):
//  1. Read the catalog's entries for the period and the next Ahead, and the
//     rotation's meta entry (its period and expiry mark): one query.
//  2. Insert the missing entries, with a random table name each, in one
//     transaction that also merges the meta entry on condition of its ETag,
//     so that no period is claimed after Expire marked it; on a conflict
//     (another writer, or Expire) start again from 1.
//  3. Create the tables of the periods ahead, and of the period itself if
//     this writer claimed it (one that exists counts as created): a
//     claimer that crashed before creating a table ahead leaves it to the
//     next writer (TestCrashMatrix).
//  4. Read the expiry mark again; if a table it created belongs to an
//     expired period (Expire ran between 2 and 3), delete it: ErrExpired.
//  5. Write the entity; later writes to the period go straight to its table.
//
// Expiring: see [Rotation.Expire]. Reading: one catalog query, then one
// query per overlapping period's table, concurrently.
//
// # Failure and recovery
//
// A writer that crashes after step 2 leaves a period entry without a table:
// readers see an empty period, and the next write finds the table missing
// (404), reads the catalog and creates it. A lost reply to step 2 is found
// by the next round's read (the entries are there). A crash after step 3
// leaves a created table that the next Expire of its period deletes. An
// Expire that crashes after moving the mark leaves expired tables that no
// reader or writer uses, deleted by the next Expire call, with any time, of
// any Rotation: a fresh one learns the stored mark from the catalog
// (TestExpireCrashRecoveredByFreshRotation). Every step can be repeated:
// creating a table that exists, or deleting one that is gone, counts as
// done — also a resent create or delete that met what its own lost first
// try did, which entity reports as entity.ErrOutcomeUnknown: such a create
// counts as this writer's, so step 4 deletes its table if the period
// expired meanwhile (TestLostReplies, TestLostReplyMatrix's "Insert/create
// table"). TestCrashMatrix kills Insert, BulkWrite, Table and Prepare
// after each request and lets a fresh Rotation write again;
// TestLostReplyMatrix loses the reply to each kind of write while another
// process writes the same keys: each leaves exactly the tables its catalog
// names.
//
// Entities are written with entity's single-entity and batch calls on the
// period's table, whose lost-reply rules apply: an Insert whose reply was
// lost is settled by reading back (applied, or entity.ErrOutcomeUnknown),
// but when another process deletes the entity before azcore's resend, the
// resend inserts it again and Insert reports success.
//
// A write that races the expiry of its own period either lands before the
// table is deleted (and goes with it) or fails with ErrExpired — also a
// write that landed, whose reply was lost and whose resend found the table
// gone: its entity went with the table either way. One
// interleaving can create the expiring period's table again for a moment,
// on a service that allows a deleted name back at once (Azurite does): a
// writer claimed the period before Expire moved the mark, and creates the
// table after Expire deleted it; step 4 then deletes it. For that moment
// a process that had the period open writes into the table again, is told
// the write succeeded, and its entity goes when step 4 deletes the table
// — the one exception to "no write can put an entity in those periods
// again", not closed. Azure Storage refuses that creation while the name
// is being deleted (TableBeingDeleted, for about 40 seconds after the
// delete), which the writer reports as ErrExpired: there the window needs
// a writer stalled between steps 2 and 3 for longer than that.
//
// # Ownership
//
// A Rotation owns its partition of the catalog (PartitionKey Config.Name:
// the meta entry and one entry per period) and the period tables it
// names; the entities in a period's table are the caller's, written
// through the Rotation, or through the entity.Table that [Rotation.Table]
// returns for the operations it does not wrap. There is no Check. What
// other writes leave (TestPlainWrites):
//
//   - an entity written into a period's table whose time (Config.Time)
//     lies in another period stays in the table it was written to: Query,
//     which reads the tables of the periods a range overlaps and then
//     filters by time, finds it only for a range that overlaps both
//     periods, and it expires with the table that holds it, not with its
//     own period;
//   - a period's catalog entry deleted by hand: the next write to that
//     period claims it again with a new table; the old table and its
//     entities are read by no Query and deleted by no Expire (delete the
//     table by hand).
//
// With package eventual, whose handlers may run twice: Upsert and Prepare
// leave the same state when run again, and Insert's second run is
// entity.ErrAlreadyExists, which a handler counts as done, as
// eventual.Insert does (TestRepeatedSteps); a second Expire with the same
// time finds nothing to do (TestExpireKeepsTheRest). The tables
// Rotation.Table returns take eventual's steps (Insert, Upsert, Delete,
// Move) like any table, for entities of that period.
//
// # Encrypted entities
//
// A Rotation makes its period tables itself, so it cannot be given an
// encrypted table: Config.Open wraps each one instead, before any use —
// return crypt.New(t, cfg).Entity() (package entity/crypt) and every
// write, Query and Rotation.Table goes through the protection, each
// ciphertext bound to its period table's name. Read raw, no period table
// holds an encrypted value in clear, in hex or in base64; the entities
// read back decrypted across periods; an entity copied into another
// period's table does not decrypt there (crypt.ErrTampered); an Open that
// returns a table of another name is a *ConfigError on Open
// (TestEncryptedPeriods). Expire deletes whole tables and needs no key.
// Upsert with entity.Merge is refused by an encrypted table, as
// everywhere.
//
// # Azurite and Cosmos DB
//
// Azurite deletes a table at once and lets its name be created again
// immediately; Azure Storage keeps the name for at least 40 seconds and
// answers 409 TableBeingDeleted meanwhile. Both cases are handled; only the
// service's can make a reader meet a table being deleted. The Cosmos DB
// Table API provisions throughput per table or per database: prefer
// database-level throughput there, or a table per period costs a throughput
// minimum per table. Its results are not sorted, so Query's merge order
// only holds on Azure Storage and Azurite. Measured under the Cosmos DB
// profile of package integration/cosmos (TABLEKIT_PROFILE=cosmos: opaque
// ETags without a time, query pages in no key order, RowKeys of at most
// 255 bytes, reserved property names): every failure is one of order —
// Query's merge and range reads with a limit (TestQueryOrderRangeLimit,
// TestReaderDuringExpiry), and the tests that compare what they read back,
// Expire's list or the catalog's tables, with a sorted list. No step reads
// a time from an ETag.
//
// # Usage
//
//	type Attempt struct {
//		PartitionKey string    // user
//		RowKey       string    // keys.TicksKeySeq of the attempt
//		At           time.Time
//		Success      bool
//	}
//	logins, err := rotation.New(svc, catalog, rotation.Config[Attempt]{
//		Name:   "logins",
//		Period: rotation.Day,
//		Time:   func(a *Attempt) time.Time { return a.At },
//	})
//	err = logins.Insert(ctx, &Attempt{PartitionKey: "ann", RowKey: rk, At: now})
//	for a, err := range logins.Query(ctx, now.Add(-72*time.Hour), now, entity.Query{Filter: filter.PK("ann")}) { … }
//	expired, err := logins.Expire(ctx, now.Add(-30*24*time.Hour)) // a table per day, deleted whole
//
// [high volume delete pattern]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#high-volume-delete-pattern
package rotation
