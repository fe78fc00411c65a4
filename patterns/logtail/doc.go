// Package logtail is the design guide's [log tail pattern] (§6.7): an
// append-only log per partition whose newest n entries are one request
// away.
//
// The problem: a query returns entities in RowKey order and $top takes the
// first n, so "the ten most recent expense claims" needs RowKeys that sort
// newest first. The guide's fix is inverted ticks,
// (DateTime.MaxValue.Ticks - t.Ticks).ToString("D19"), so the newest entry
// is always first in its partition:
//
//	https://myaccount.table.core.windows.net/EmployeeExpense(PartitionKey='empid')?$top=10
//
// A [Log] writes any entity type T that way (keys from [keys.InvertedTicks]
// and [keys.Sequencer]) and reads it back: [Log.Tail] is that one $top
// query, [Log.Since] and [Log.Between] are RowKey ranges, [Log.Page] pages
// toward older entries with a token a user interface can keep, and
// [Log.Trim] deletes entries older than an instant in transactions of up to
// 100.
//
// # Keys
//
// A RowKey is the guide's 19 digits, then "_", a sequence number (10 digits,
// inverted) and "_" the writer id:
//
//	2519954711999999999_4294967295_3fa2c1d09e4b
//
// The first 19 characters are exactly the C# formula for the entry's
// instant; [ParseKey] reads all three parts back, and also reads the plain
// 19-digit keys of other writers. The sequence number, from a
// [keys.Sequencer], keeps entries of one Log that fall in the same 100 ns
// tick distinct and in order; the writer id keeps the entries of different
// Logs (processes) distinct. [Config.PlainKeys] writes the bare 19 digits
// instead, for logs read by .NET code that parses RowKeys as ticks, at the
// price of one writer per partition.
//
// # Guarantee
//
// Every entry Append reports written is stored exactly once, under a key
// no other writer makes, and a lost reply retried by azcore cannot store it
// twice (the write is an upsert of that unique key; with PlainKeys an
// insert, whose refused resend is settled by reading the entry back):
// Append never reports an entry it wrote as refused, only as written or
// of unknown outcome (TestAppendLostReplySeams). Tail(n) returns the n
// entries with the smallest keys — the newest by their writers' clocks, ties
// in one tick broken by sequence then writer id — newest first. A reader
// sees each append (up to 100 entries in one transaction) entirely or not at
// all, and the transactions of one Append land oldest first, so a crash
// leaves the newest part of it missing, never a hole (TestAppendCrash).
// A Trim in progress, or crashed, has removed the oldest entries first: a
// reader sees a log whose oldest part is missing, never a hole in the
// middle (TestTrimCrashLeavesNoHole).
//
// Those orders hold for entries whose writers' clocks move forward. An
// entry appended with an instant before the cut of a Trim running at the
// same time (a clock behind) may be kept, or, when the Trim deletes it
// between its lost reply and azcore's resend, written again by the resend
// (an upsert): keep Trim's cut behind every clock that still appends.
//
// Order between writers is only as good as their clocks: two machines whose
// clocks disagree by a second interleave their entries by what each clock
// said.
//
// # Steps
//
//  1. Append: one upsert (one entry), or transactions of up to 100 upserts
//     through [entity.Table.BulkWrite] (several entries).
//  2. Tail: one range query in the partition with $top=n.
//  3. Since, Between, Page: one range query, one request per page.
//  4. Trim: key-only range queries, one per 1,000 entries (for more than
//     1,000, each page but the oldest is listed again when its turn
//     comes), and one delete transaction per 100, oldest first.
//
// # Failure and recovery
//
// A crash during Append leaves every transaction of it written or not, the
// oldest first; appending again writes new entries (new keys), so a caller
// that must not duplicate a retried append stores its own id in the entry.
// An entry the service refuses (a PlainKeys key another writer took) fails
// alone: the others are written, and the *AppendError in the error lists
// every entry not written with its error (TestAppendReportsEntriesNotWritten).
// Bad input — an invalid entry, an instant Config.Now gives outside .NET
// DateTime's range (years 1 to 9999, which the keys cannot hold) — is an
// *ArgError before anything is sent; a Config or table New cannot use is a
// *ConfigError. Both match ErrInvalid and entity.ErrInvalid.
//
// A crash during Trim leaves the oldest part deleted; calling Trim again, in
// a fresh process, finishes. A delete transaction that meets an entry
// deleted meanwhile (a concurrent Trim, or its own retried, already applied
// attempt), or written again meanwhile, re-reads what is left of its
// entries and deletes those; every entry is counted once
// (TestTrimLostReplySeams).
//
// # Ownership
//
// A Log owns the entries of each partition it appends to: the entities
// whose RowKeys start with 19 digits — its own keys, and the guide's plain
// keys of other writers, which it reads as entries (TestSharedPartition);
// the partition's other entities are the caller's, never read or trimmed.
// Entries are immutable by convention, not enforced; there is no Check.
// What another writer does to them (TestPlainWrites):
//
//   - an entry merged or replaced changes in place: Tail, Since and Page
//     return the new content at the entry's place in time;
//   - an entry deleted leaves a hole in the middle of the log — the shape
//     the Guarantee says Trim and crashes never leave — which readers and
//     Trim step over (Trim counts only what it deletes);
//   - an entry inserted with the guide's 19-digit key is an entry of the
//     instant its key says (TestSharedPartition).
//
// With package eventual: Append is not idempotent — each call writes new
// keys — so a handler that appends writes a message delivered twice
// twice. To append once per message, a handler upserts the entry
// (eventual.Upsert on the Log's table) under a key made from the
// message: keys.InvertedTicksSeq(Delivery.Created, 0), "_", and a writer
// id made from the message's ID (1 to 32 ASCII letters, digits and '-': a
// hash of it, say), which Tail, ParseKey and Trim treat as any entry
// (TestOncePerMessage). Trim can run again: a crashed one is finished by
// the next (TestTrimCrashLeavesNoHole).
//
// # Azurite and Cosmos DB
//
// Azurite sorts as the service does, and every test of this package runs on
// it. The Cosmos DB Table API does not sort query results, so a $top query
// returns n entries, not the n newest. Set [Config.Unsorted] there: Tail,
// Since and Between then read all matching entries of the partition and sort
// on the client, which is the per-partition alternative the guide points to —
// keep each partition small by putting the period in the PartitionKey (one
// partition per user and day, say), so that the newest partition is the
// only one read. Page needs the service's order and is refused with
// [ErrUnsorted]. Trim lists the keys it deletes and sorts them, still
// oldest first (TestCosmosTrimUnsorted, under the Cosmos DB profile of
// package integration/cosmos).
//
// Measured under that profile (TABLEKIT_PROFILE=cosmos) with the default,
// sorted Config: Tail, Since, Between and pages return the right number of
// entries but not the newest ones in order, and Trim removes only part of
// what it should — the suite's order checks fail there, which is what
// Config.Unsorted is for. Every failure measured there is one of order
// (the lost-reply, crash and once-per-message tests read the log back in
// key order); none depends on ETag times.
//
// The guide's other warning holds everywhere: one partition takes all of one
// log's writes, at most about 2,000 entities per second on Azure Storage.
// Spread a busy log over partitions (package bucket does that, at the price
// of a fan-out read).
//
// # Usage
//
//	log, err := logtail.New(attempts, logtail.Config{}) // attempts is an *entity.Table[Attempt]
//	err = log.Append(ctx, "alice", &Attempt{IP: "10.1.2.3", OK: false})
//	last10, err := log.Tail(ctx, "alice", 10) // newest first, one request
//	for a, err := range log.Since(ctx, "alice", time.Now().Add(-time.Hour)) {
//		…
//	}
//	page, err := log.Page(ctx, "alice", 20, token) // page.Next: the "older" link
//	removed, err := log.Trim(ctx, "alice", time.Now().AddDate(0, 0, -60))
//
// [log tail pattern]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#log-tail-pattern
package logtail
