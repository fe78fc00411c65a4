// Package secondaryindex keeps copies of entities under other keys, so that
// values other than PartitionKey and RowKey are found by a point or range
// query: the design guide's [intra-partition secondary index] (§6.1) and
// [inter-partition secondary index] (§6.2).
//
// The Table service indexes PartitionKey and RowKey only. To find an
// employee by email, the guide stores the employee a second time with
// RowKey "email_jonesj@contoso.com"; each such copy is an entry of an index.
// An index is declared once per entity type, as an Index: a name ("email"),
// a key function of the entity (its lower-cased email), unique or not (a
// non-unique entry's RowKey also holds the primary's RowKey, so values may
// repeat), the properties an entry copies (all, or a subset), and its
// placement:
//
//   - [SamePartition] (§6.1): entries in the primary's partition, written in
//     the primary's entity group transaction;
//   - OtherPartition (§6.2): entries in partition Name_PartitionKey
//     ("email_Sales") of the primary's table or of Config.Entries, written
//     after the primary by a queue-driven worker of package
//     [github.com/tablekit/tablekit/patterns/eventual];
//   - [TableWide]: entries in partition Name_Bucket ("email_14"), the
//     bucket derived from the VALUE (keys.Bucket(value, Index.Buckets)),
//     of the primary's table or of Config.Entries, kept as OtherPartition
//     entries are: a lookup needs no PartitionKey (see Placement below).
//
// Uniqueness: a unique value is one primary's at most, per partition of
// entries — for TableWide, in the whole table. Two writers claiming it
// concurrently: exactly one wins, the other gets a *UniqueError
// (errors.Is(err, [ErrDuplicate])) naming the holder (TestUniqueRace,
// TestTableWideUniqueRace: eight writers in eight partitions).
//
//	set, err := secondaryindex.New(employees, secondaryindex.Config{Processor: processor, PrimaryPrefix: "empid_"},
//		secondaryindex.Index[Employee]{Name: "email", Unique: true,
//			Key: func(e *Employee) (string, bool) { return strings.ToLower(e.Email), e.Email != "" }},
//		secondaryindex.Index[Employee]{Name: "name", Properties: []string{"FirstName", "LastName"},
//			Key: func(e *Employee) (string, bool) { return e.LastName, true }},
//	)
//	err = set.Provision(ctx)                                    // its tables and queues, where missing
//	err = set.Insert(ctx, &e)                                   // one transaction: e and its two entries
//	e, err = set.Modify(ctx, "Sales", "empid_000123", func(e *Employee) error { e.Email = "j@contoso.com"; return nil },
//		entity.ModifyOptions{}) // Mode 0 means Replace: the primary is written whole
//	e, err = set.Lookup(ctx, "email", "Sales", "j@contoso.com", secondaryindex.LookupOptions{})
//	for e, err := range set.LookupPrefix(ctx, "name", "Sales", "Jo", secondaryindex.LookupOptions{}) { … }
//	for f, err := range set.Check(ctx, secondaryindex.CheckOptions{}) { … } // drift.Finding
//	sum, err := set.Rebuild(ctx, secondaryindex.CheckOptions{})
//
// # Placement
//
// Which placement for which query:
//
//   - SamePartition: the lookup knows the partition (an employee's email
//     within a department). Always exact; the entries share the
//     partition's ~2,000 entities/s with the primaries. Write: the
//     primary's transaction (1 storage transaction for an insert, 2 for a
//     Modify: read and transaction). Lookup: 1 point query (unique) or 1
//     range query.
//   - OtherPartition: the same lookups, entries in their own partitions
//     (another table, or keeping the primaries' partition small).
//   - TableWide: the lookup does not know the partition ("order 12345,
//     whatever its customer"; "all pending orders"). LookupValue of a
//     unique value is one point query (plus one per entry with Verify;
//     0.90–1.16 of a raw point get's speed, paired in one run, since
//     the entry is read by entity's own GET and decoded once:
//     BenchmarkTableWideLookup);
//     LookupValueAll of a non-unique value one range query in one
//     partition (the value's bucket), paged with LookupOptions.After
//     and Limit (TestLookupPages); LookupValuePrefix one range query
//     per bucket — Index.Buckets queries, their first pages read
//     Config.Concurrency at once, merged in value order, exact and
//     ordered. Throughput ceiling: the entries of
//     one value all live in one bucket, so one value takes at most ~2,000
//     entity writes/s (the service's target per partition), and the index
//     as a whole about Index.Buckets × 2,000/s (16 buckets, the default:
//     ~32,000/s, above the account's ~20,000/s target), with values spread evenly by the hash; a value with very
//     many primaries (a status) makes its bucket hot: use
//     patterns/indexentity, or put more of the key in the value. Writes
//     cost what an OtherPartition write costs: a unique value's
//     reservation (2 requests), the primary's transaction with the
//     message's intent, the enqueue and intent delete (2), and the
//     worker's reads and writes. Measured from the cost meter
//     (BenchmarkTableWideIndexedInsert, queue receives apart): an insert
//     with one non-unique TableWide index is 7 storage transactions
//     (writer 3, worker 4), with one unique index 10 (writer 5, worker
//     5), against 5 for a hand-written outbox and worker that trusts its
//     message and never reads the primary; end to end, insert until the
//     lookup finds it with workers polling every 10 ms, 16–68 ms against
//     16–30 ms on Azurite on a loaded 2-core machine (0.76–0.90 of the
//     hand-written speed, paired in the same run), while a unique
//     TableWide value answers as soon as Insert returns: its entry is the
//     reservation written before the primary.
//   - TableWide (or OtherPartition) without a worker: give the Set an
//     inline processor (eventual.NewInline). The writer runs the index's
//     handler itself after its transaction: Insert, Modify and Delete
//     return with the entries written, and no queue, worker or poison
//     queue exists (TestInlineTableWideWithoutAWorker). A handler that
//     fails, or a process that dies between the commit and the handler,
//     leaves the write's outbox intent — the write still succeeds; the
//     failure goes to the processor's Hooks.Error — and Set.Relay
//     finishes it: run it at startup and every Config.Outbox.Grace
//     (TestInlineTableWideCutAfterCommit, TestInlineTableWideCrashAtEveryStep,
//     TestInlineTableWideLostReplies). After the processor's
//     MaxDeliveries failed runs the intent is set aside, as a queued
//     message is poisoned (eventual's "Inline processor"): its entries
//     stay behind their primary, which Check reports; Set.Unsendable
//     lists the intent, and Set.Revive and a Relay bring the entries up
//     once the cause is gone (TestInlineTableWidePoisonedAndRevived), as
//     Rebuild would. Uniqueness holds as queued
//     (TestInlineTableWideConcurrentUnique); a failed insert's reservation
//     goes to the value's next claimant after Grace
//     (TestInlineTableWideFailedInsertFreesAfterGrace). A unique insert
//     costs 8 storage transactions, all in the write's path (queued: 10
//     plus the worker's receives), and its entry is final 1.85–2.35×
//     sooner (BenchmarkTableWideInlineInsert); the writer waits for the
//     handler.
//
// Lookups take a PartitionKey for SamePartition and OtherPartition indexes
// (Lookup, LookupAll, LookupPrefix) and none for TableWide ones
// (LookupValue, LookupValueAll, LookupValuePrefix); each refuses the other
// placement's indexes with an error matching [ErrPlacement].
//
// # Ownership
//
// The Set owns every write to its primaries: Insert, Update, Modify,
// Delete and MoveTo keep the entries with the primary, nothing else can.
// A write through a plain entity.Table (or eventual.Move, whose delete is
// plain) beside the Set leaves the entries as they were, and Check reports
// exactly that (TestPlainWriteBesideSet): a plainly changed indexed value
// leaves the old value's entry an Orphan and the new value's Missing; a
// changed copied property leaves the entries that copy it Stale; a plain
// delete leaves every entry of the primary an Orphan; a plain insert's
// entries are Missing. Rebuild repairs all of it (and the index's
// messages then catch up), but between the write and the Rebuild, lookups
// without Verify return what the entries say. To move or archive a
// primary, use MoveTo (from an eventual handler too: it is an idempotent
// step; its copy is conditional on the destination's ETag, read before
// the primary, so two moves of one primary with a write between them
// leave the newer version there, TestMoveToBesideAMoveOfANewerVersion; a delete of it whose reply was lost while another writer wrote
// the primary again is settled by reading again and moving the version
// there, TestMoveLostDeleteBesideWriter); each Set write can be such a step (Modify with a change that
// sets values, Delete, whose ErrNotFound on a repeat means done; Insert's
// entity.ErrAlreadyExists, likewise).
//
// The caller's own messages of package eventual commit with any write, in
// its transaction (WriteOptions.Messages): the change, its index intent
// and the caller's intents commit together, or none, and the messages are
// sent exactly when the change committed (TestUserMessageCrash,
// TestUserMessages).
//
// # Guarantee
//
// SamePartition: the primary and its entries change in ONE entity group
// transaction, conditional on the primary's ETag. A reader never sees an
// entry for a value the primary no longer has, nor a primary without its
// entries: a change of an indexed value deletes the old entry and inserts
// the new one in the same transaction as the primary's replace. A lookup
// returns exactly the primaries holding the value (TestConcurrentWriters:
// 16 writers on the same 50 employees with 5% of replies lost).
//
// OtherPartition and TableWide: eventually consistent. The primary's
// change and the message that updates its entries are one transaction (an outbox intent,
// eventual.Outbox), so no change loses its message; the message runs at
// least once and its steps are idempotent, so once the queue has drained
// every entry agrees with its primary. Meanwhile an entry may be behind
// its primary, or ahead of it (a unique entry is written, as a
// reservation, before the primary): a lookup with [LookupOptions].Verify
// reads each primary and returns only those that hold the value — never
// an entity whose indexed value differs (TestOtherPartition,
// TestTableWide). After the queue drained, TableWide lookups are exact:
// 16 writers in 40 partitions, 20 orders each (50 with TABLEKIT_FULL=1),
// a tenth of their replies lost and the worker killed twice
// (TestTableWideLoad).
//
// LookupValuePrefix reads its buckets Config.Concurrency at once, and a
// verifying lookup its primaries likewise: never more reads in flight
// than that (TestTableWidePrefixConcurrency). A bucket whose first page
// fails, after azcore's retries, ends the lookup before any entity with
// a *StepError naming the index and the partition of the first failing
// bucket in bucket order, unwrapping to the service's error; the reads
// of the buckets after it are cancelled and none after it is started;
// LookupValueAll of a value whose bucket fails yields the same kind of
// error (TestTableWidePrefixBucketFails). A cancelled context starts no more
// reads and ends the lookup with an error matching context.Canceled, and
// a caller that stops ranging ends the reads under way: none is left
// running when the lookup returns (TestTableWidePrefixCancel). The merge
// follows the service's key order (keys.Compare: UTF-16 code units,
// whatever the keys — empty, ' ' and '!', quotes, characters beyond the
// BMP); a verifying lookup yields a primary once even when a stray copy
// of its entry sits in another bucket, which a lookup without Verify
// yields as the entries say (TestTableWidePrefixAwkwardKeys), and once
// when its value changes, between two values in the range, while the
// lookup verifies its old entry and then its new one
// (TestTableWidePrefixValueChangeDuringLookup).
//
// Lost replies: a transaction whose reply was lost and that azcore resent
// is refused at operation 0 (409 or 412) although it was applied. Every
// write goes through entity's write tokens (entity.Table.WithWriteTokens),
// which settles that case by reading the primary back: the outcome is
// reported as applied, refused, or entity.ErrOutcomeUnknown, never
// guessed, and Modify is exactly-once (TestLostReplies). A resend refused
// at an entry's operation passed the primary's conditional operation, so
// the first try was not applied: the Set reads the refusal as the
// transaction's answer, and a unique value another primary holds is a
// *UniqueError, not ErrOutcomeUnknown (TestTakenValueLostReply). With
// another writer inserting, replacing, changing or deleting the same
// primary inside azcore's retry window, an applied write is never
// reported refused nor a refused one done (TestLostReplyBesideWriter),
// with two exceptions azcore's resend makes: an Insert applied and then,
// inside the window, deleted by another process is inserted again by the
// resend and reports success (the delete is undone); and if, besides,
// a third process gave its unique value to another primary before the
// resend, the Insert reports a *UniqueError although it was applied and
// undone meanwhile.
//
// # Steps
//
// Insert, Update, Modify, Delete of a primary (Update, Modify and Delete
// first read it, one request, to learn its current entries):
//
//  1. For each unique OtherPartition or TableWide index whose value
//     changes: reserve the new value (read the entry, then insert it, or
//     replace it on its ETag, with the new copy and a claim: the ETag the
//     primary's write is conditional on, or [ClaimInsert]). Two requests
//     per value.
//  2. One entity group transaction in the primary's partition: the
//     primary's insert, replace (If-Match its ETag) or delete; per
//     SamePartition index, the old entry's delete and the new entry's
//     insert (unique) or insert-or-replace (non-unique), or one
//     insert-or-replace when only the copied properties changed; and, when
//     an OtherPartition or TableWide entry changes, the outbox intent of
//     its message; and the intents of the caller's messages
//     (WriteOptions).
//  3. With an intent: enqueue the message and delete the intent (two
//     requests).
//  4. The message's handler, for each OtherPartition and TableWide index:
//     reads the primary; writes the entry of the value it holds
//     (non-unique: one insert-or-replace; unique: read, then write if it
//     differs); removes the entries of the message's other values the
//     primary no longer holds; reads the primary again and starts over if
//     it changed.
//
// A SamePartition write with two indexes is one storage transaction
// (Insert) or two (Modify: read and transaction).
//
// # Uniqueness
//
// SamePartition: the new entry is inserted in the primary's transaction;
// an entry held by another primary fails the transaction (409), which
// becomes a *UniqueError. An entry left by no primary (see Check) is
// replaced, on its ETag, in the next round of the same write.
//
// OtherPartition and TableWide: the entry of a unique value is its
// reservation entity (for TableWide, one per value in the whole table:
// its partition derives from the value).
// A writer inserts it before writing the primary (step 1); a second writer
// finds it and reads its owner: an owner holding the value, or whose claim
// may still be written, makes the second writer fail ([UniqueError].Pending
// for the latter). A claim is dead when no write can apply it any more:
// the owner's ETag differs from the claim (the write was conditional on
// it), the owner is gone (for an update), or Config.Grace has passed (for
// an insert: the writer does not send its transaction after Grace/2 —
// which holds as long as no request spends more than Grace/2 in transit,
// see Config.Grace; for
// an update whose owner still has the claimed ETag, the taker first
// fences the owner — a write conditional on that ETag that changes it — so
// that the claimed write can never apply). Grace is counted on the
// service's clock: the Date of the answer that returned the entry less its
// Timestamp, so a process whose clock runs ahead or behind frees a
// reservation neither early nor late (TestReservationAgeIgnoresClockSkew).
// Every removal or takeover of an entry is conditional on the entry's
// ETag, and a writer refreshes its own reservation (changing that ETag)
// before each attempt, so a value is never freed under a write that is
// about to take it.
//
// # Drift: Check, Repair, Rebuild
//
// Check scans primaries and entries and yields a
// [github.com/tablekit/tablekit/patterns/drift].Finding per disagreement:
// Missing, Stale (the copy or the named primary differs), Orphan, or
// Duplicate. It is
// resumable: each finding carries the token of its partition (Resume), and
// [CheckOptions].Checkpoint receives a token after each partition. Repair
// fixes one finding as things are now (idempotent; a SamePartition repair
// is one transaction with a fence on the primary's ETag, so it never
// writes a copy of a version that changed meanwhile; drift.ErrRaced when
// a writer got there first). Rebuild checks and repairs as it goes and
// returns a drift.Summary whose Next resumes it. The package
// patterns/indexentity speaks the same vocabulary:
//
//	Check(ctx, CheckOptions{Partitions, Resume, Checkpoint}) iter.Seq2[drift.Finding, error]
//	Repair(ctx, drift.Finding) error
//	Rebuild(ctx, CheckOptions) (drift.Summary, error)
//
// A whole-table check is one scan of the table plus, per partition with
// primaries, one range query per OtherPartition index. A TableWide index
// costs one point query per primary (its entry: Missing, Stale, and a
// unique value's other holder, Duplicate, one more point query) and,
// after the primaries, a scan of its partitions (one range query over
// every partition Name_…, paged, whatever its bucket id) with one point
// query per entry (its primary: Orphan); the checkpoints of that phase
// name the index and the page, so a check resumes there. With
// Config.Entries, a whole-table check also scans that table once, for
// entries whose layout puts them elsewhere. A check of opts.Partitions reads the TableWide
// entries those primaries expect, but finds no TableWide orphans (their
// partitions are the values', not the primaries'): check the whole table
// for those.
//
// Changing an index's layout — Buckets, Placement, Unique, Properties —
// leaves entries where the new layout puts none: in partitions of bucket
// ids of another width or count, in the primaries' partitions or
// Name_PartitionKey ones of another placement, in the primaries' table
// when Config.Entries now holds the entries, or in Config.Entries when
// they are now SamePartition. Check reports each as an Orphan (its Entry
// names the table it is in) and Repair deletes it, on its ETag, while the
// new layout's entries are Missing and Repair writes them: one Rebuild
// after the change converges — Check then finds nothing, a second Rebuild
// repairs nothing, lookups return exactly the primaries holding each
// value, and the tables hold what the new layout writes from scratch,
// nothing of the old one (TestLayoutChange: Buckets 1→2, 4→16, 16→4,
// 16→20, 1→100, every placement to every other, into Config.Entries,
// Unique on and off, Properties changed). Pointing Config.Entries at
// another table leaves the old table's entries, which the Set no longer
// reads: drop that table.
//
// A unique value held by two primaries (only a write around the Set can
// do that) keeps one entry, by a fixed rule: the primary the stored entry
// names keeps it while it holds the value; otherwise (no entry, or one
// naming a primary that does not hold it) the holder with the lowest
// RowKey gets it. Each other holder is a drift.Duplicate finding naming
// the holders; Repair refuses it (ErrDuplicate) and Rebuild counts it
// without repairing it, since only a change of the primaries ends it. So
// Rebuild never moves the entry between the holders, and a second Rebuild
// right after the first repairs nothing (TestDuplicateUniqueValue). A
// SamePartition write through the Set of a holder without the entry
// whose copied properties change rewrites the entry as its own (it
// upserts the entry of its unchanged value without reading it); an
// OtherPartition one leaves it with its holder.
//
// # Failure and recovery
//
//   - Crash before step 2: nothing of the primary changed. A reservation
//     may be left: it names a claim no write will apply. The writer's
//     retry reuses it; otherwise the value's next claimant takes it over
//     (at once if the primary changed since, after Grace otherwise), and
//     Check reports it as an orphan for Rebuild.
//   - Crash between steps 2 and 3: the intent is committed with the change;
//     Relay (run it now and then) sends it.
//   - Crash in step 4: the message reappears and runs again; each of its
//     steps finds its work done.
//   - A write that fails after reserving (a unique value taken, too many
//     concurrent writers, ErrOutcomeUnknown) enqueues a message that frees
//     its reservations.
//
// A slow account — throttled, far away, or reached from a loaded machine
// — can make an insert of a unique OtherPartition or TableWide value miss
// its deadline: its transaction is sent within Config.Grace/2 of its
// first reservation, or not at all. An insert whose transaction could not
// leave in time fails with a *StepError naming that step, unwrapping to
// context.DeadlineExceeded and not matching entity.ErrOutcomeUnknown:
// nothing was applied. One cut in flight matches
// entity.ErrOutcomeUnknown: it may have landed, and a repeated
// Insert then answers entity.ErrAlreadyExists. Neither is ever a double:
// the value stays the insert's until Grace has passed, no other writer
// can take it meanwhile, and the message the failed write sends frees it
// once no write can apply the claim (TestSlowInsert). Config.Grace is by
// default two thirds of the processor's redelivery window, and New
// refuses one that is not shorter than the window (TestGraceChecked):
// for a slow account raise the window (eventual.Config's RetryDelay or
// MaxDeliveries), and with it the default Grace; see
// eventual.Processor.DefaultGrace.
//
// A write whose entry could never be written — an OtherPartition or
// TableWide entry the service would refuse, since it adds its primary's
// keys and a longer RowKey to a copy of a primary near the limits (252
// properties, 1 MiB), or whose keys are too long — is refused before
// anything is stored, with a *StepError or *KeyError matching
// entity.ErrInvalid: the worker would fail on it at every delivery, and
// the entry stay Missing (TestUnwritable; a SamePartition entry is
// refused with its transaction). A step of the worker whose outcome is
// unknown (entity.ErrOutcomeUnknown: a reply lost, or every try of a
// delete failed before reaching the service) is settled — the delete
// repeated, a conditional write read back — or fails, so that the message
// is delivered again; none is taken for done (TestReleaseUnknown).
//
// A process killed before or after any request of a write, whose call is
// never repeated, leaves nothing a fresh process cannot finish: its Relay,
// a worker draining the queue, and a Rebuild once Config.Grace has passed
// (for a reservation of an insert that never landed) leave no drift
// (TestCrashAtEveryStep, which repeats the call, and
// TestCrashThenFreshProcess, which does not).
//
// One bad row does not hold back the others: a primary that does not
// decode as T (or whose value makes no key), or an entry that does not,
// is reported with its keys while Check, Rebuild, lookups and the
// index's messages go on with the rest (TestOneBadRow); see Check and
// Rebuild.
//
// # Encrypted tables
//
// A Set takes an encrypted table (crypt.Table.Entity) as its primary
// table, its writes encrypting and its reads decrypting through it. An
// index whose Key returns an encrypted property's value (or a function
// of it) declares it in [Index].Encrypted: its entries are keyed by the
// value's beacon (entity.Table.Beacon, crypt's keyed HMAC-SHA256 of the
// value, 16 bytes in lower-case hex) instead of the value, and the
// index's messages, reservations and errors ([UniqueError].Value) carry
// the beacon too. The property must be tagged encrypt and listed in
// crypt's Config.Beacons, which reveals which entities share a value.
// Key cannot be seen into, so declare Encrypted for every index of an
// encrypted value; as a safety net, a write whose value in an index not
// declared Encrypted holds (without case) an encrypted property's value of
// 6 bytes or more is refused with a *KeyError naming the property, before
// any request (TestEncryptedUndeclared).
//
//   - No entry holds the plaintext of an encrypted property: entries copy
//     only the properties the table stores in clear (never one it may
//     encrypt, nor crypt's own), and New refuses Properties naming one,
//     with a *DeclarationError before any request. A raw scan of every row
//     of the table — primaries, entries, reservations, outbox intents —
//     finds no email in clear, hex or base64, in each placement
//     (TestEncryptedIndexes), after lost replies (TestEncryptedLostReplies),
//     and after a crash at any storage request of a change of a unique
//     TableWide value, once recovered as on a plain table
//     (TestEncryptedCrashAtEveryStep);
//     integration/canary's TestNoPlaintextLeaves scans the whole account,
//     the errors and azcore's log for a Set's values too.
//   - A lookup never returns an entity that does not hold the value looked
//     up: every lookup of a Set over an encrypted table verifies
//     (LookupOptions.Verify is implied: the primary is read and
//     decrypted), and of an Encrypted index compares the primary's Key
//     with the value itself, so two values of one beacon never answer for
//     each other (TestEncryptedBeaconCollisions cuts the beacons to one
//     byte, so that they collide). A lookup costs the entry's read and the
//     primary's.
//   - A unique Encrypted index never admits two entities of one value
//     (TestEncryptedUniqueRace: concurrent writers of one value, one
//     wins). A reservation is judged by the beacons: it is taken over only
//     when its holder no longer holds the beacon, never because the holder
//     holds another value of the same beacon. The price is that two
//     distinct values whose beacons collide cannot both be held: the
//     second is refused as a duplicate (TestEncryptedBeaconCollisions).
//     With 128-bit beacons that takes a collision of HMAC-SHA256 cut to
//     16 bytes, of probability about n²/2¹²⁹ among n distinct values
//     (below 10⁻¹⁸ for a billion values).
//   - A beacon answers equality only: LookupPrefix and LookupValuePrefix
//     of an Encrypted index are refused with ErrEncrypted, before any
//     request.
//   - New refuses, with a *DeclarationError (Field "Encrypted") matching
//     entity.ErrInvalid before any request, an Encrypted property the
//     table stores in clear, one crypt's Config.Encrypt encrypts for some
//     entities only, one without a beacon, and Encrypted over a table that
//     is not encrypted (TestEncryptedRefusals,
//     integration/canary's TestEncryptedTableRefusals). MoveTo an
//     unencrypted table is refused.
//
// Config.Entries may be plain or encrypted: the entries hold beacons and
// properties in clear only, and are written as they are
// (TestEncryptedEntriesTable). An index of a
// property the table stores in clear is kept as on a plain table. An
// insert with an Encrypted index costs the same storage transactions as
// in clear, 1.07 to 1.16 times its client CPU and, on Azurite, 0.86 to
// 1.23 times its time (paired runs: the encryption is within the noise of
// the HTTP request); a lookup 2 transactions (the entry, then the
// primary), 0.97 to 1.10 times the client CPU and 1.02 to 1.30 times the
// time of a verified lookup in clear, where one in clear without Verify
// costs 1 (2.2 to 2.3 times less CPU) (BenchmarkEncryptedInsert,
// BenchmarkEncryptedLookup; their /paired reports cpu-vs-…).
//
// # Wire format
//
// What a Set stores, for readers in other languages and tools. A primary
// is stored as entity stores T, plus TkWrite (Edm.String), entity's write
// token chain (package entity's lost-reply detection: a random token per
// write and those before it). An entry is one entity:
//
//   - PartitionKey: the primary's (SamePartition), or the index's Name,
//     "_" and the primary's ("email_Sales", OtherPartition), or the
//     index's Name, "_" and the value's bucket ("email_14", TableWide:
//     keys.Bucket(value, Index.Buckets), whose hash the keys package
//     documents, written in decimal zero-padded to the width of
//     Buckets-1), in the primary's table or Config.Entries;
//   - RowKey: the Name, "_" and the value ("email_jonesj@contoso.com")
//     for a unique index; for another, the Name, "_" and
//     keys.Compound(value, the primary's RowKey): the two joined by a
//     space, a space or '!' inside either written "! " or "!!"
//     ("name_Jones empid_000123"); for a non-unique TableWide index,
//     keys.Compound(value, the primary's PartitionKey, its RowKey)
//     ("name_Jones Sales empid_000123"), so that one range query of the
//     value's bucket finds all its primaries, in key order;
//   - TkPrimaryPK and TkPrimaryRK (Edm.String): the primary's keys;
//   - the copied properties (Index.Properties, or all), as the primary
//     stores them;
//   - TkClaim (Edm.String), on the entry of a unique OtherPartition or
//     TableWide index
//     only while it is a reservation: the ETag the primary's write is
//     conditional on, or "insert" for an insert. The worker's write of the
//     entry for the primary that holds the value removes it; an entry
//     without it names a primary that held the value when it was written;
//   - TkWrite, on entries written with a write token (the unique ones).
//
// RowKeys starting with "tablekit." in the primaries' partitions are
// package eventual's (outbox intents, Once markers). The message that
// keeps OtherPartition entries is of kind Config.Kind
// ("secondaryindex.<table>.v1"), its payload the primary's keys and the
// values, by index, whose entries it looks at.
//
// For example, employee Sales/empid_000123 (FirstName John, LastName
// Jones, Email jonesj@contoso.com, Age 30) with a unique index "email" of
// the email and an index "name" of the last name copying FirstName and
// LastName, both SamePartition, is three entities of partition Sales, as
// the service returns them (annotations of types JSON cannot tell kept,
// other metadata and TkWrite's value left out), in key order:
//
//	{"PartitionKey":"Sales","RowKey":"email_jonesj@contoso.com","Age":30,"Email":"jonesj@contoso.com","FirstName":"John","LastName":"Jones","TkPrimaryPK":"Sales","TkPrimaryRK":"empid_000123"}
//	{"PartitionKey":"Sales","RowKey":"empid_000123","Age":30,"Email":"jonesj@contoso.com","FirstName":"John","LastName":"Jones"}
//	{"PartitionKey":"Sales","RowKey":"name_Jones empid_000123","FirstName":"John","LastName":"Jones","TkPrimaryPK":"Sales","TkPrimaryRK":"empid_000123"}
//
// With both indexes OtherPartition, Insert leaves the reservation of the
// email, and the message's payload:
//
//	{"PartitionKey":"email_Sales","RowKey":"email_jonesj@contoso.com","Age":30,"Email":"jonesj@contoso.com","FirstName":"John","LastName":"Jones","TkClaim":"insert","TkPrimaryPK":"Sales","TkPrimaryRK":"empid_000123"}
//	{"pk":"Sales","rk":"empid_000123","values":{"email":["jonesj@contoso.com"],"name":["Jones"]}}
//
// and once the worker ran, the entries are:
//
//	{"PartitionKey":"email_Sales","RowKey":"email_jonesj@contoso.com","Age":30,"Email":"jonesj@contoso.com","FirstName":"John","LastName":"Jones","TkPrimaryPK":"Sales","TkPrimaryRK":"empid_000123"}
//	{"PartitionKey":"name_Sales","RowKey":"name_Jones empid_000123","FirstName":"John","LastName":"Jones","TkPrimaryPK":"Sales","TkPrimaryRK":"empid_000123"}
//
// With both indexes TableWide (16 buckets: keys.Bucket gives "14" for
// "jonesj@contoso.com" and "01" for "Jones"), once the worker ran:
//
//	{"PartitionKey":"email_14","RowKey":"email_jonesj@contoso.com","Age":30,"Email":"jonesj@contoso.com","FirstName":"John","LastName":"Jones","TkPrimaryPK":"Sales","TkPrimaryRK":"empid_000123"}
//	{"PartitionKey":"name_01","RowKey":"name_Jones Sales empid_000123","FirstName":"John","LastName":"Jones","TkPrimaryPK":"Sales","TkPrimaryRK":"empid_000123"}
//
// TestWireFormat checks these examples against what a Set writes.
//
// # Azurite and Cosmos DB
//
// Azurite handles an entity group transaction more slowly than a single
// insert (about 1.8 times as long for three entities), while the service
// bills and times it as one request: BenchmarkWrite compares both. The
// Cosmos DB Table API supports entity group transactions but has no
// queues: OtherPartition and TableWide indexes need a storage account's
// queues; and it
// returns query results unsorted, so lookups of several entries come in
// no particular order there. Measured under the Cosmos DB profile of
// package integration/cosmos (TABLEKIT_PROFILE=cosmos: opaque ETags without
// a time, query pages in no key order, RowKeys of at most 255 bytes,
// reserved property names): LookupAll, LookupPrefix, LookupValueAll,
// Check's findings and a raw listing of the entries come back in the
// service's order, not key order; LookupValuePrefix still yields every
// matching entry once, but its merge of the buckets relies on each
// bucket's key order, so its results come in no order either, and with
// LookupOptions.Limit they are n of the matches, not necessarily the
// first n. Resuming does not hold there: a Check or Rebuild resumed from
// a Checkpoint token, a finding's Resume or Summary.Next starts after the
// partition or key it names, and in no key order the rows before it that
// were not scanned yet are skipped (TestRebuildResumes: 8 repaired, then
// 0, of 18) — run Check and Rebuild from the start on Cosmos DB. The
// tests assert key order where the service keeps it and the same
// contents under the profile (TABLEKIT_PROFILE=cosmos go test
// ./patterns/secondaryindex/, which make test-cosmos runs).
//
// [intra-partition secondary index]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#intra-partition-secondary-index-pattern
// [inter-partition secondary index]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#inter-partition-secondary-index-pattern
package secondaryindex
