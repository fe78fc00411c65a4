// Package indexentity finds all the entities that share a non-unique
// value — "all employees named Jones" — through index entities: the
// design guide's [index entities pattern] (§6.4).
//
// The Table service indexes PartitionKey and RowKey only. Finding the
// employees of a department by last name is a partition scan that reads
// every employee of the department. The guide's answer is a list per
// value of the keys of the entities holding it, kept up to date with the
// entities, read in one request and followed by one point query per
// entity. It gives three places for the lists, and a [Set] offers all
// three behind one API, chosen per [Index] by its [Placement], and a
// fourth for lookups across partitions:
//
//   - [SamePartition] (option 2): an index entity in the entities'
//     partition (PartitionKey "Sales", RowKey "lastname_Jones", the
//     employee ids in its [PropMembers] property, the guide's
//     EmployeeIDs), written in the entity's entity group transaction on
//     condition of its ETag;
//   - [OtherPartition] (option 3): the same index entities in partition
//     "lastname_Sales" of another table or the same one, kept by
//     patterns/eventual;
//   - [Blob] (option 1): a block blob per value,
//     "lastname/Sales Jones.keys", one key per line, kept by
//     patterns/eventual, written on condition of its ETag;
//   - [TableWide]: one list per value for the whole table, "all orders
//     with status pending, whatever the customer", its members the
//     primaries' PartitionKey and RowKey, spread over Index.Buckets lists
//     by a stable hash of the member, each in a partition of its own
//     ("status_pending 07"), kept by patterns/eventual as OtherPartition
//     lists are, and looked up with [Set.LookupValueAll] without a
//     PartitionKey.
//
// An entity holds at most one value per index ([Index.Value]). The list
// of the first three placements names the entities of one partition: the
// guide's "Jones in Sales", and a lookup across departments is one lookup
// per department — or one LookupValueAll of a TableWide index.
//
//	emps, _ := entity.NewTableFromService[Employee](svc, "Employees")
//	byName, err := indexentity.New(emps, indexentity.Config{},
//		indexentity.Index[Employee]{Name: "lastname", Value: func(e *Employee) (string, bool) {
//			return e.LastName, e.LastName != ""
//		}})
//	err = byName.Provision(ctx) // its tables, queues and container, where missing
//	err = byName.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000152", LastName: "Jones"})
//	e, err := byName.Modify(ctx, "Sales", "000152", func(e *Employee) error { e.LastName = "Smith"; return nil },
//		entity.ModifyOptions{}) // Mode 0 means Replace: the primary is written whole
//	for e, err := range byName.LookupAll(ctx, "lastname", "Sales", "Jones", indexentity.LookupOptions{}) { … }
//	// with Index{Name: "city", Placement: indexentity.TableWide, Buckets: 16, …}:
//	for e, err := range byName.LookupValueAll(ctx, "city", "Paris", indexentity.LookupOptions{Limit: 100}) { … }
//	for f, err := range byName.Check(ctx, indexentity.CheckOptions{}) { … } // drift.Finding
//	sum, err := byName.Rebuild(ctx, indexentity.CheckOptions{})
//
// # Guarantee
//
//   - SamePartition: a list always names exactly the entities of its
//     partition that hold its value. The entity and every list it
//     enters or leaves change in one entity group transaction,
//     conditional on the entity's ETag and on the ETag of each index
//     entity it changes: a concurrent writer of any of them makes the
//     transaction fail, and the write starts again from the reads
//     (entity.RetryPolicy.Retry, Config.Retry): TestRenameUnderConcurrentWriter
//     changes both lists between a rename's reads and its transaction,
//     TestLocalLoad has 16 writers with 5% of replies lost.
//   - OtherPartition, Blob and TableWide: the lists catch up. The entity's write and
//     the intent of the message that updates the lists are one
//     transaction (eventual.Outbox), so no change is ever left out; once
//     the queues have drained the lists are exact. Until then a list may
//     miss an entity that holds its value (a lookup does not find it yet)
//     or name one that does not (a lookup skips it). TestRemoteLoadUnderFaults
//     (10% of requests failed or their replies lost, workers killed) and
//     TestRemoteCrashAtEveryStep prove it.
//   - Lookups never yield an entity that does not hold the value looked
//     up, whatever the placement: each point read is checked
//     (TestRemoteCrashAtEveryStep and TestRemoteLoadUnderFaults look up
//     while the lists are behind; TestTableWideLookupWhileMoving while
//     writers move employees between two values of a TableWide index,
//     whole and in pages, each employee yielded once).
//   - TableWide lists are exact once the queues drained, whatever the
//     writers' partitions, with 10% of requests failed or their replies
//     lost and the worker killed twice (TestTableWideUnderFaults), and
//     after a crash at any request of an insert with the caller's
//     message or of a MoveTo (TestTableWideCrashAtEveryStep).
//   - TableWide lookups (LookupValueAll, ValueMembers) never have more
//     reads in flight than Config.Concurrency, bucket range queries and
//     point reads alike (TestTableWideConcurrency). A bucket whose range
//     query fails, after azcore's retries, fails the lookup, which yields
//     no entity: the error is a *StepError naming the index and the
//     partition of the first failing bucket in bucket order, and
//     unwrapping to the service's error; the reads of the buckets after
//     it are cancelled, none after it is started, and those before it
//     finish (TestTableWideBucketFails). A cancelled context starts no
//     more reads and ends the lookup with an error matching
//     context.Canceled; a caller that stops ranging cancels the point
//     reads under way; either way every read has ended when the lookup
//     returns (TestTableWideCancel). A TableWide lookup yields each
//     member once, even one listed in two buckets (as a change of
//     Index.Buckets leaves it), in the service's key order (PartitionKey,
//     then RowKey, by UTF-16 code units as keys.Compare), and pages of it
//     (Limit, After with HasAfter) of a stable index join into the same
//     sequence, none skipped or repeated, whatever the keys: empty, the
//     compound separator ' ' and escape '!', quotes, characters beyond
//     the BMP (TestTableWideAwkwardKeys).
//   - Lost replies: entity's write tokens (entity.Table.WithWriteTokens)
//     let a transaction whose reply was lost, and whose resend the
//     service refused, be recognised as applied by reading an index
//     entity back: Insert, Update, Modify and Delete report what
//     happened, and Modify applies its change exactly once; when the
//     read-back cannot tell, the error matches entity.ErrOutcomeUnknown.
//     With another writer inserting, replacing, changing or deleting the
//     same entity inside azcore's retry window, an applied write is never
//     reported refused nor a refused one done (TestLostReplyBesideWriter,
//     TestLostReplyRenameBesideRename); an Insert applied and then deleted
//     by another process inside the window is inserted again by azcore's
//     resend and reports success (the delete is undone). The steps of the
//     other placements add or remove one member, which repeats
//     harmlessly, and read again after any failure.
//   - A process killed before or after any request of a write, whose call
//     is never repeated, leaves nothing a fresh process's Relay and worker
//     do not finish (TestRemoteCrashAtEveryStep,
//     TestCrashThenFreshProcess).
//   - One bad row does not hold back the others: a primary that does not
//     decode as T is reported with its keys while Check, Rebuild and
//     lookups go on (TestOneBadRow), and a list that cannot be written
//     does not keep a message from the entity's other lists
//     (TestSyncPastBadList).
//   - The 1 MiB entity limit: a list that would make its index entity
//     larger than Config.MaxEntityBytes (256 KiB by default) spills to
//     continuation entities instead of failing. The first entity then
//     holds a directory ([PropChunks]: number and first member of each
//     continuation) and each continuation the members of one key range;
//     a change reads the directory, the one continuation whose range
//     holds the member, and the directory again — changed, the round
//     starts again — and writes that continuation on condition of its
//     ETag (a split also rewrites the directory, on condition of its
//     own). An entity's range only shrinks when it is split, which
//     rewrites it and the directory: the directory unchanged across the
//     continuation's read gives the range the continuation had, and the
//     continuation's ETag guards it until the write: an insert and a
//     delete whose continuation is split between their reads of the
//     directory and of it start again, and the list stays exact
//     (TestSpillBesideSplits; two writers racing through splits and
//     emptying: TestSpill). TestLargeValue
//     builds one value held by 4,000 employees with 40-character keys
//     (the list's bytes of 20,000 keys of 7) in bulk (BulkWrite, then
//     Rebuild); for the full 100,000 run
//     `go test ./patterns/indexentity -run TestLargeValue -args -long`.
//     Blob lists have no such limit.
//
// # Steps
//
// A write of an entity (Insert, Update, Modify, Delete):
//
//  1. read the entity (not for Insert): its values before the write;
//  2. for each SamePartition index whose value changes: read the old
//     value's first index entity (and, for a spilled list, the
//     continuation holding the entity and the first entity again), and
//     the new value's;
//  3. one entity group transaction: the index entities changed, each on
//     condition of its ETag (the guide's rename touches three: the
//     entity, the old value's list and the new value's), then the
//     entity on condition of its ETag — and, when an OtherPartition or
//     Blob value changes, the outbox's intent;
//  4. the message is enqueued and the intent deleted (eventual.Outbox).
//
// With an inline processor (eventual.NewInline) there is no queue and no
// worker: at step 4 the writer runs the worker's steps below itself, so
// the lists are exact when the write returns (TestInline), and a write
// cut short between its transaction and those steps leaves its intent for
// Set.Relay to finish, as in package secondaryindex, whose inline tests
// inject it.
//
// A worker handling the message, for each OtherPartition or Blob index:
//
//  1. read the entity;
//  2. for each value the message names and the value the entity holds:
//     read the list (index entity, or blob), add or remove the entity,
//     write it on condition of the ETag read, again from the read when it
//     lost to another writer;
//  3. read the entity again; if it changed since step 1, start over — a
//     worker that read an old version never leaves it listed;
//  4. delete the message.
//
// A lookup: one range query of the value's index entities (or one blob
// read), then one point query per member, Config.Concurrency at once,
// yielded in key order. [Set.Members] is the index read alone.
//
// A TableWide lookup (LookupValueAll): one range query per bucket (each
// in partition Name_Compound(value, bucket)), the buckets' lists merged
// into one order — by PartitionKey, then RowKey, the service's key order
// of each — then the point queries, yielded in that order.
// LookupOptions.After (the keys of the last entity of the previous page,
// with HasAfter set) and Limit page through it; [Set.ValueMembers] is the
// index read alone.
//
// # Failure and recovery
//
//   - A crash before the transaction of step 3 leaves nothing; after it,
//     everything SamePartition is done, and the outbox's intent makes
//     sure the message is sent: by the writer, or by [Set.Relay] after a
//     crash (run it now and then, as patterns/eventual says).
//   - A worker that crashes anywhere leaves the message to reappear; the
//     next delivery repeats steps that are idempotent (a member added
//     twice is listed once).
//   - Drift — lists changed by hand, restored from an old backup, written
//     by software that bypassed the Set — is found by [Set.Check] and
//     fixed by [Set.Repair] or [Set.Rebuild] while writers keep writing:
//     the repair of a SamePartition list is one transaction with an empty
//     merge of the entity on condition of the ETag read; the others are
//     the worker's steps above. Rebuild rewrites a list with many
//     findings whole (the way to build a new index over existing
//     entities), on condition of the ETags it read, then reads the
//     partition again and repairs one by one the entities that changed
//     meanwhile. A check and a rebuild resume from the token of the last
//     partition they finished (CheckOptions.Resume, Checkpoint,
//     drift.Summary.Next). A TableWide index is checked from both ends:
//     each primaries' partition reads the lists of the values and buckets
//     its primaries hold (Missing), and, on a whole-table check, each of
//     the index's list partitions is read whole and every member read
//     back, one point read each (Orphan, Stale), resumably too; Rebuild
//     repairs its findings one by one. Findings speak package drift: Missing (an
//     entity its value's list does not name), Orphan (a list naming an
//     entity that is gone or holds another value), Stale (an index entity
//     or blob whose content does not read: corrupt, a continuation its
//     directory does not name, a member no primary can be; or one where
//     the index's layout puts none).
//   - A change of an index's layout — Buckets, Placement, or Config.Entries
//     now holding the index entities — leaves lists where the new layout
//     puts none: members in the bucket of another count (Stale in that
//     list, Missing from their own: the bucket a member is read from must
//     be its own, so a member listed in the wrong one is never taken for
//     listed), index entities of another placement in the primaries'
//     partitions, in Name_… partitions or in Config.Entries, blobs of an
//     index that keeps none (Config.Blobs set), each a Stale finding that
//     Repair deletes. One Rebuild after the change converges: Check then
//     finds nothing, a second Rebuild repairs nothing, lookups return
//     exactly the primaries holding each value, and the tables and blobs
//     hold what the new layout writes from scratch, nothing of the old one
//     (TestLayoutChange: Buckets 1→2, 4→16, 16→4, 16→20, 1→100, every
//     placement to every other, Blob included, into Config.Entries).
//     Pointing Config.Entries at another table, or dropping Config.Blobs,
//     leaves the old lists where the Set no longer reads: drop them.
//   - A write whose list could never be written is refused before anything
//     is stored (a value or keys too long for the list's keys or blob name,
//     with a *KeyError matching entity.ErrInvalid); a TableWide member, a
//     primary's two keys joined, may be longer than one key and is read
//     back whole (TestUnwritable). A worker's step whose outcome is unknown
//     (entity.ErrOutcomeUnknown) is read again or repeated, never taken for
//     done (TestReleaseUnknown).
//
// # Ownership and composition
//
// The Set owns every write to its primaries: Insert, Update, Modify,
// Delete and MoveTo, and nothing else, may write them. A write through a
// plain entity.Table (or any other client) beside the Set changes a
// primary without its lists, and Check reports exactly that
// (TestPlainWriteBesideSet): a primary inserted, or renamed into a value,
// is Missing from that value's list; one renamed out of a value, or
// deleted, is an Orphan of the old value's list. Repair or Rebuild
// brings the lists back in line with the primaries as they are then
// (the plain write is kept, and indexed). The index entities and blobs
// are the Set's alone in the same way: changed by hand they are drift
// too (Stale when they no longer read).
//
// Composing with patterns/eventual:
//
//   - WriteOptions.Messages, the last argument of Insert, Update, Modify
//     and Delete, commits the caller's own messages as outbox intents in
//     the write's transaction, with the change, its SamePartition lists
//     and the intent of the Set's own message: all or none
//     (TestUserMessageCrashAtEveryStep, crash before and after every
//     request of such an insert: the message's effect is there exactly
//     when the employee is). A Set built without Config.Processor has no
//     outbox and refuses messages with a *ConfigError before any request
//     (TestUserMessageRefused); a Set of SamePartition indexes given a
//     processor keeps an outbox for them.
//   - [Set.MoveTo] archives or moves a primary to another table: a read
//     of the destination's entity, of the primary, a copy on condition of
//     the destination's ETag, then the Set's own Delete on condition of
//     the ETag copied, which takes it off its lists. Two moves of one
//     primary with a write between them leave the newer version in the
//     destination: the older copy fails its condition
//     (TestMoveToBesideAMoveOfANewerVersion). It is idempotent and
//     can be a step of an eventual handler: after a crash at any request,
//     running it again finishes the move with no orphan membership and no
//     lost primary (TestMoveCrashAtEveryStep); a delete whose reply was
//     lost while another writer wrote the primary again is settled by
//     reading again and moving the version there
//     (TestMoveLostDeleteBesideWriter). eventual.Move on a Set's
//     primaries is a plain write beside the Set: use MoveTo.
//   - Each Set write can be a step of an eventual handler, repeated on
//     redelivery: Insert of an entity already there answers
//     entity.ErrAlreadyExists and Delete of one gone entity.ErrNotFound
//     (the sign that an earlier delivery did it), and a Modify whose
//     change sets values rather than adding to them leaves the same
//     entity when repeated.
//
// # Costs and limits
//
// A write that changes one SamePartition value costs the entity's read,
// two index entity reads (six for spilled lists) and one transaction; an
// unchanged value costs nothing more than the write. An index entity is a
// hot spot: every writer of a value's entities writes it, so writers of
// one popular value queue behind each other (Config.Retry bounds how
// long). Prefer OtherPartition or Blob for values shared by thousands of
// entities written often, as the guide advises.
//
// A lookup of n members is 1 + n storage transactions. The partition scan
// it replaces is billed one transaction per page, but the service reads
// every entity of the partition to answer it, so its time and its share
// of the partition's throughput grow with the partition, not with the
// answer. BenchmarkLookup and BenchmarkMembers measure both on the same
// department; on Azurite, which scans an in-memory partition of 10,000
// entities faster than it answers 100 point queries, the index read alone
// (Members) is the win, and the lookup's point reads cost more than the
// scan: see the README for the numbers.
//
// A TableWide index spreads a value over Index.Buckets partitions, so
// its ceiling is Buckets × the service's ~2,000 entities/s per partition
// — but a list is one entity written on condition of its ETag, so the
// writers of one value's bucket queue behind each other (tens of
// writes/s per bucket entity on a storage account): choose Buckets for
// the value's write rate, not its size. A write that changes its value
// costs the primary's transaction (with the message's intent), the send
// and the intent's delete, then the worker's receive, its read of the
// primary, a read and a conditional write of each list it leaves or
// enters (two more reads for a spilled list), the read again and the
// message's delete: for an insert 3 storage transactions in the write's
// path and 9 in all, for a change of value (after Modify's read) 12. A LookupValueAll of n members costs
// Buckets range queries (one page each for lists that fit an entity) and
// n point reads: Buckets + n. BenchmarkLookupValueAll measures it against
// a table scan filtered on the value: for 100 members among 1,000
// employees in 10 departments, with 4 buckets, 104 storage transactions
// per lookup (4 for ValueMembers alone) against 1 for the scan, which on
// Azurite also answers faster; the index pays off when the table is far
// larger than the answer (the scan reads every entity of the table, a
// page per 1,000) or when the keys alone are wanted.
//
// # Encrypted tables
//
// A Set takes an encrypted table (crypt.Table.Entity) as its primary
// table, its writes encrypting and its reads decrypting through it. Lists
// hold the primaries' keys only, never a property; an index whose Value
// returns an encrypted property's value (or a function of it) declares it
// in [Index].Encrypted, and its lists are kept under the value's beacon
// (entity.Table.Beacon, crypt's keyed HMAC-SHA256 of the value, 16 bytes
// in lower-case hex) instead of the value: the index entities' keys, the
// blobs' names, the messages and the errors carry the beacon. The
// property must be tagged encrypt and listed in crypt's Config.Beacons,
// which reveals which entities share a value.
//
//   - No row or list blob holds the plaintext of an indexed encrypted
//     value: a raw scan of every row of the table, and of every list
//     blob's name and content, finds none in clear, hex or base64, in
//     every placement (TestEncryptedLists); integration/canary's TestNoPlaintextLeaves
//     scans the whole account, errors and logs, with lost replies.
//   - A lookup never yields an entity that does not hold the value looked
//     up: each member is read through the encrypted table, decrypted, and
//     compared with the value itself, so two values of one beacon, which
//     share a list, never answer for each other, and a lookup with Repair
//     does not remove the other value's holders from it
//     (TestEncryptedListCollisions cuts the beacons to one byte, so that
//     they collide). A beacon answers equality only; the package has no
//     prefix lookup.
//   - New refuses, with a *DeclarationError (Field "Encrypted") matching
//     entity.ErrInvalid before any request, an Encrypted property the
//     table stores in clear, one crypt's Config.Encrypt encrypts for some
//     entities only, one without a beacon, and Encrypted over a table that
//     is not encrypted (TestEncryptedListRefusals, integration/canary's
//     TestEncryptedTableRefusals). Value cannot be seen into, so declare
//     Encrypted for every index of an encrypted value; as a safety net, a
//     write whose value in an index not declared Encrypted holds (without
//     case) an encrypted property's value of 6 bytes or more is refused
//     with a *KeyError naming the property, before any request
//     (TestEncryptedListRefusals). MoveTo an unencrypted table is refused.
//
// # Wire format
//
// What a Set stores, for readers in other languages and tools. A primary
// is stored as entity stores T, plus TkWrite (Edm.String), entity's write
// token chain (package entity's lost-reply detection). A value's list is:
//
//   - SamePartition and OtherPartition: an index entity with PartitionKey
//     the primaries' partition ("Sales"), or the index's Name, "_" and it
//     ("lastname_Sales"), and RowKey the Name, "_" and the value written
//     as keys.Compound writes one part (a space or '!' in it written "! "
//     or "!!": "lastname_Van! Dam"). Its [PropMembers] (Edm.String) holds
//     the primaries' RowKeys in the service's key order, each followed by
//     "\n"; a list longer than one String property (32 K UTF-16 code
//     units) goes on in Members2, Members3, …, never cutting a member.
//     Once the entity would pass Config.MaxEntityBytes the list spills:
//     this first entity then holds instead [PropChunks], a directory of
//     one line per continuation entity — its number, a tab, and the lowest
//     member it may hold ("" for the first), in key order, each line followed
//     by "\n" — and [PropNextChunk] (Edm.Int64), the number the next
//     continuation gets; continuation n has RowKey keys.Compound(value,
//     n) after the Name and "_" ("lastname_Jones 2") and holds in Members
//     the members from its line's bound up to the next line's: one key
//     range per continuation entity. TkWrite is on the index entities
//     written with a write token.
//   - TableWide: the same index entities, with PartitionKey the Name,
//     "_" and keys.Compound(value, bucket) ("city_Paris 1"), RowKey as
//     above ("city_Paris"), and as members keys.Compound(PartitionKey,
//     RowKey) of each primary ("Sales 000123"); bucket is
//     keys.Bucket(member, Index.Buckets), its fixed-width decimal number.
//   - Blob: a block blob of Config.Blobs named Name, "/",
//     keys.Compound(partition, value) and ".keys" ("lastname/Sales
//     Jones.keys"), of content type text/plain; charset=utf-8: a header
//     line "tablekit.indexentity.v1", then one member per line, each line
//     ended by "\n", in key order.
//
// RowKeys starting with "tablekit." in the primaries' partitions are
// package eventual's (outbox intents, Once markers). The message that
// keeps OtherPartition and Blob lists is of kind Config.Kind
// ("indexentity.<table>.v1"), its payload the primary's keys and the
// values, by index, whose lists it looks at.
//
// For example, employees Sales/000123 and Sales/000152 named Jones and
// Sales/000140 named Smith, with a SamePartition index "lastname", make
// these index entities in partition Sales, as the service returns them
// (TkWrite and metadata but type annotations left out):
//
//	{"PartitionKey":"Sales","RowKey":"lastname_Jones","Members":"000123\n000152\n"}
//	{"PartitionKey":"Sales","RowKey":"lastname_Smith","Members":"000140\n"}
//
// OtherPartition stores the same in partition "lastname_Sales". A list of
// Sales/000001, 000002 and 000003 that passed the limit (here, a limit
// small enough for three members) spilled into two continuations:
//
//	{"PartitionKey":"Sales","RowKey":"lastname_Jones","Chunks":"1\t\n2\t000003\n","NextChunk@odata.type":"Edm.Int64","NextChunk":"3"}
//	{"PartitionKey":"Sales","RowKey":"lastname_Jones 1","Members":"000001\n000002\n"}
//	{"PartitionKey":"Sales","RowKey":"lastname_Jones 2","Members":"000003\n"}
//
// A Blob index keeps Jones's list of the first example in blob
// "lastname/Sales Jones.keys":
//
//	tablekit.indexentity.v1
//	000123
//	000152
//
// and the message of Sales/000123's insert has the payload
//
//	{"pk":"Sales","rk":"000123","values":{"lastname":["Jones"]}}
//
// A TableWide index "city" of 2 buckets with Sales/000123,
// Sales/000152 and HR/000007 in Paris keeps (bucket 0 of
// "Sales 000123", bucket 1 of the other two):
//
//	{"PartitionKey":"city_Paris 0","RowKey":"city_Paris","Members":"Sales 000123\n"}
//	{"PartitionKey":"city_Paris 1","RowKey":"city_Paris","Members":"HR 000007\nSales 000152\n"}
//
// TestWireFormat and TestWireFormatTableWide check these examples
// against what a Set writes.
//
// # Azurite and Cosmos DB
//
// Azurite does not enforce the 1 MiB entity limit or the 64 KiB String
// limit; this package keeps both on the client (Config.MaxEntityBytes,
// and entity's validation), so a list behaves the same on a storage
// account. The Cosmos DB Table API has no queues or blobs: SamePartition
// indexes work there alone (its entity group transactions are the same).
// Measured under the Cosmos DB profile of package integration/cosmos
// (TABLEKIT_PROFILE=cosmos: opaque ETags without a time, query pages in no
// key order, RowKeys of at most 255 bytes, reserved property names): lists
// come back in the service's order, and a Rebuild resumed from
// Summary.Next skips rows, since Next is the last key scanned
// (TestRebuildResumes: 0 of 9 missing entries repaired on resuming) — run
// Rebuild from the start on Cosmos DB. The rest of the suite passes there.
//
// [index entities pattern]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#index-entities-pattern
package indexentity
