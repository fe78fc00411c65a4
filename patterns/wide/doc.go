// Package wide stores logical entities with more properties than one entity
// of the Table service may hold, the [wide entities pattern] (design guide
// §6.10): one typed struct — any number of fields, or an `extra` map — is
// kept as several entities of one partition, written and deleted together
// by one entity group transaction and read by one range query.
//
// The service caps an entity at 252 user properties and 1 MiB. A Table
// splits a logical entity's properties over rows of properties with RowKeys
// keys.Compound(id, "01"), keys.Compound(id, "02"), … (at most [MaxRows]), each
// within both limits, plus a head row keys.Compound(id, "00") that holds the
// bookkeeping and no property. Property name goes to row 1 +
// keys.Bucket(name, n), for the smallest n at which every row fits, so the
// assignment depends on the names and sizes alone: the same entity always
// gets the same rows, and a change of a few values touches only the rows
// that hold them. (An entity so wide that hashing would need more than
// twice the rows its properties fill is packed in name order instead.)
//
// # Guarantee
//
// A reader never sees a torn entity: Get returns one committed version,
// whole, or an error. Every row carries the version of the write that last
// wrote it, and the head lists the version each row must have; a read that
// finds anything else (a writer committed between two pages of the query)
// reads again, at most Config.ReadAttempts times, then fails with [ErrTorn]
// (TestReadBetweenPagesReadsAgain, TestReadThatNeverSettlesFailsTorn).
// Writers are serialised by optimistic concurrency on the logical entity:
// every write changes the head, on condition of the head's ETag, in the same
// transaction, so of two writers of one version exactly one commits; the
// other gets entity.ErrPreconditionFailed (Modify and Upsert read again and
// retry; TestStaleETagChangesNothing, TestConcurrentWritersAndReader). A
// write that shrinks the entity deletes the rows it no longer needs in the
// same transaction: no stale row outlives a commit
// (TestGrowAndShrinkLeaveNoStaleRows).
//
// # Steps
//
// Every operation is a single storage call, apart from the reads that
// Modify and Upsert make before writing:
//
//  1. Get: one range query, PartitionKey eq pk and RowKey from
//     Compound(id, "00") to past Compound(id, "99") (one storage
//     transaction for up to 1,000 rows, the service's page; Config.PageSize
//     makes pages smaller).
//  2. Insert: one transaction inserting the head and upserting the rows.
//  3. Replace: one transaction merging the head on condition of the ETag
//     Get returned, upserting every row, deleting the rows beyond the new
//     number.
//  4. Modify: Get, then one transaction with the head and only the rows
//     whose content changed, plus deletes of rows no longer needed.
//  5. Delete: one transaction deleting the head, on condition of its ETag,
//     and every row.
//
// A transaction holds at most 100 operations and 4 MiB, so a logical entity
// is at most MaxRows rows of properties and about 4 MiB as JSON; beyond,
// writes fail with a *TooLargeError before any request.
//
// # Failure and recovery
//
// A transaction is all or nothing, so a crash at any point leaves either
// the old version or the new one, never a mix, and needs no recovery: a
// fresh Table reads one whole version and writes over it
// (TestCrashAtEveryRequest).
//
// A lost reply is the one doubt. azcore resends a transaction whose reply
// was lost, and the resent one fails at its first operation (the head's
// condition, or its insert) although the first was applied. Each write
// stores a random version token in the head, which remembers the tokens of
// its last 16 versions; a write refused at the head, or left without a
// certain answer, reads the head and reports success exactly when its
// token is there (if another writer has replaced that version meanwhile,
// the ETag stored into the caller's value is empty: read before a
// conditional write). A refusal the service gave this transaction itself
// stands: entity.ErrPreconditionFailed, entity.ErrAlreadyExists, or
// entity.ErrNotFound for an entity deleted before the write was sent, each
// alone (TestWriteAfterAnotherDeleteIsNotFound). Without a certain answer
// the write is reported refused (entity.ErrPreconditionFailed) only when
// the head proves that another write took the version it was conditional
// on; when the head is as the write found it (the transaction may yet
// arrive), when 16 other versions were committed in between, or when the
// entity was deleted since, perhaps inserted again (the write may have
// been applied before the delete, and its trace went with it), the error
// is entity.ErrOutcomeUnknown — except for Upsert, which then writes again
// over what is there, and Delete (below). So an applied write is never
// reported refused, and Modify never applies a change twice
// (TestLostReplySeams, TestLostRepliesReportTheTruth, TestNoReplyAtAll,
// TestLostReplyThenSixteenWrites).
// A context that ends before a request is sent stops the operation there
// with the context's error — certain, nothing sent, not
// entity.ErrOutcomeUnknown (TestCancelledBeforeSendingSendsNothing); one
// that ends while a transaction is on its way leaves it in doubt:
// entity.ErrOutcomeUnknown.
//
// Delete is idempotent: an entity already gone, which is also what a
// resent delete finds, is not an error; nor is an entity that another
// writer inserted again after the targeted version was deleted, which the
// resend then meets (TestDeleteLostReplyThenAnotherInsert): that entity
// is left alone. Lives of an entity are told apart by their sequence
// numbers, which start at a random 52-bit number at each insert. A Delete
// without a certain answer that finds its version still there is
// entity.ErrOutcomeUnknown (it may yet arrive); one that finds a later
// version of the same life was refused (entity.ErrPreconditionFailed).
//
// The certainty of a refusal comes from package entity: a client built
// with entity.ClientOptions (as tablekit's constructors build them) tells
// an answer to a resent transaction from one to the first try. A client
// built without reports a resend's refusal as the service gave it; the
// head's history still turns a refused write found applied into success,
// but a write applied and then overtaken by a delete is reported refused.
//
// # Ownership
//
// A Table owns every row of a wide entity: the head, RowKey
// keys.Compound(id, "00"), and the rows of properties,
// keys.Compound(id, "01") onwards. Write them through it only; there is no
// Check, and a row written otherwise shows at the next read, as follows
// (TestPlainWrites):
//
//   - a changed value merged into a row of properties by another writer
//     (a plain entity.Table, aztables) is not seen by the version's
//     bookkeeping: every read returns it inside the version, without
//     error — a mix of the committed version and the foreign value — and
//     the entity's ETag does not change, so a Replace conditional on an
//     ETag read before the merge overwrites it without a conflict;
//   - a row replaced without its WideVersion property makes every read
//     fail with ErrCorrupt;
//   - a row deleted makes every read fail with ErrTorn, after
//     Config.ReadAttempts reads;
//   - either way, the operations that read first — Upsert, Modify and
//     Delete with AnyETag — fail as the read does and write nothing
//     (TestPlainWrites), so only a Replace with an ETag read before the
//     damage repairs it: it rewrites every row, and the entity reads
//     whole again (without such an ETag, delete the rows with a plain
//     client);
//   - an entity written with the logical entity's own keys (PartitionKey,
//     id) is another entity, outside the wide entity's rows: Get never
//     reads it, Delete leaves it.
//
// With package eventual, whose handlers may run twice: Upsert, Delete
// with AnyETag, and Modify with a change that sets values leave the same
// state when run again, and Insert's second run is
// entity.ErrAlreadyExists, which a handler counts as done, as
// eventual.Insert does (TestRepeatedSteps). Delete with an ETag succeeds
// again (the entity is gone), but Replace with an ETag is refused the
// second time, entity.ErrPreconditionFailed: the first run changed the
// version (TestStaleETagChangesNothing).
//
// # Wire format
//
// What another language needs to read and write these entities. The
// logical entity id of partition pk is the entities of pk whose RowKeys are
// keys.Compound(id, "00") to keys.Compound(id, "99") (see "Compound keys"
// in package keys: each part escaped, parts joined by a space, so the rows
// of one id sort together and apart from every other id's).
//
// Row 00, the head, holds no user property, only:
//   - WideVersion (String): the token of the write that last wrote it, a
//     random UUID unique to that write;
//   - WideSeq (Int64): the number of the current version; each write adds
//     one;
//   - WideBorn (Int64): the number the entity was inserted with, random
//     below 2^52 (so the versions of an entity deleted and inserted again
//     do not repeat those of its earlier life);
//   - WideRows (Int32): n, the number of rows of properties;
//   - WideManifest (String): the tokens rows 01 to n must carry,
//     space-separated, row 01 first;
//   - WideH00 to WideH15 (String): the token of version s in WideH<s mod
//     16>, the last 16 versions, by which a writer whose reply was lost
//     tells whether its write was applied.
//
// Rows 01 to n hold the user properties, stored as entity's codec stores
// them, and WideVersion, the token of the write that last wrote the row.
// A reader reads the range in one query and takes it only when every
// row's WideVersion is the manifest's token for it (else a writer committed
// between two pages: it reads again). A writer sends one entity group
// transaction: the head, inserted or merged on condition of its ETag, with
// a new token in WideVersion and WideH<seq mod 16>, WideSeq plus one and
// the new manifest; every row it changes, upserted with the new token; and
// deletes of the rows past the new n. Which row holds a property is the
// writer's choice (see above); readers must not assume it.
//
// For example, Insert of Bag{PartitionKey: "Sales", RowKey: "emp1",
// Props: {"Name": "Jones", "Age": int32(41)}} stores these two entities
// (the service's JSON, less Timestamp and odata.etag; <t> is the write's
// token, <s> its version number):
//
//	{"PartitionKey":"Sales","RowKey":"emp1 00","WideBorn":"<s>","WideBorn@odata.type":"Edm.Int64","WideH<s mod 16>":"<t>","WideManifest":"<t>","WideRows":1,"WideSeq":"<s>","WideSeq@odata.type":"Edm.Int64","WideVersion":"<t>"}
//	{"Age":41,"Name":"Jones","PartitionKey":"Sales","RowKey":"emp1 01","WideVersion":"<t>"}
//
// # Encrypted tables
//
// Over an encrypted table (package crypt's Table.Entity) a logical entity
// is sealed as a whole before its properties are spread over rows
// (entity.Table.Seal: ciphertexts bound to the logical entity's keys, one
// metadata property among them) and opened once its rows are assembled,
// so no row holds a plaintext and a row moved to another entity does not
// decrypt there (TestNoPlaintextLeaves, TestRotationAcrossPatterns in
// integration/canary).
//
// # Azurite and Cosmos DB
//
// Azurite enforces none of the limits this package splits by (252
// properties, 1 MiB, 4 MiB per transaction); they are checked on the
// client, and proven by unit tests. Azurite answers a query of up to 1,000
// entities in one page, so torn reads show only when tests make the pages
// small. The Cosmos DB Table API has limits of its own (entities up to 2
// MB, RowKeys up to 255 bytes); the ones checked here are the Storage
// service's, and the service keeps the last word, refusing a transaction
// whole. Under the Cosmos DB profile of package integration/cosmos
// (TABLEKIT_PROFILE=cosmos: opaque ETags without a time, query pages in no
// key order, RowKeys of at most 255 bytes, reserved property names) the
// whole suite passes: the reader places rows by their RowKeys, not by the
// order they come in, and the composite ETag does not read times from the
// rows' ETags. Only Insert's written-back Timestamp differs: an ETag
// without a time gives none, and Get fills it
// (TestThousandPropertiesRoundTrip).
//
// # Usage
//
//	type Employee struct {
//		Dept   string         `table:"PartitionKey,pk"`
//		ID     string         `table:"RowKey,rk"`
//		ETag   string         `table:",etag"`
//		Name   string
//		Skills map[string]any `table:",extra"` // 1,000 ratings: "Go": int32(5), …
//	}
//	tbl, _ := entity.NewTable[Employee](client)
//	emps, _ := wide.New(tbl, wide.Config{})
//	err := emps.Insert(ctx, &e)                    // one transaction, e.ETag set
//	e, err = emps.Get(ctx, "Sales", "000123")      // one range query, never torn
//	e.Skills["Rust"] = int32(4)
//	err = emps.Replace(ctx, &e)                    // ErrPreconditionFailed if changed since
//	e, err = emps.Modify(ctx, "Sales", "000123", func(e *Employee) error { … }, entity.ModifyOptions{})
//	err = emps.Delete(ctx, "Sales", "000123", e.ETag)
//
// [wide entities pattern]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#wide-entities-pattern
package wide
