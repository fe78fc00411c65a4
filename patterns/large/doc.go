// Package large stores entities with values too large for an entity of
// the Table service, the [large entities pattern] (design guide §6.11): an
// employee's photo, a scanned contract, a video. The service caps an
// entity at 1 MiB, and a String or Binary property at 64 KiB; blob
// storage holds up to terabytes. A Table keeps the typed struct whole for
// its user: the fields tagged `table:",blob"` — a []byte, a string or a
// Stream — are stored as blobs of a container, and the entity keeps, for
// each, a reference: the blob's name, its size and its checksum — a
// SHA-256 by default, or a CRC-32C (Config.Checksum; see Ref).
// The other fields are stored as entity's codec stores them. A blob field
// without a value — a nil or empty []byte, "", a zero Stream or one whose
// reader yields nothing — has no reference and no blob, and reads back as
// nil, "" or the zero Stream: an empty []byte comes back nil
// (TestEmptyValuesAreNoValue).
//
// # Guarantee
//
// An entity never references a missing blob, and a read never returns a
// value other than the one written: each blob is checked against the
// size and checksum its entity recorded — with the default SHA-256 also
// a blob changed on purpose; with CRC-32C (Config.Checksum), a blob
// corrupted, truncated or mixed up, not one made to match its CRC-32C
// (TestChecksums). A blob is deleted — by the
// processor's workers or by Sweep — only when its entity, read just
// before, does not reference it, and only once it is older than
// Config.Grace, unless it was uploaded by a write that has ended without
// referencing it; and a write sends no request for its entity later than
// Grace/2 after its uploads began. So neither a write whose reply was lost
// and that azcore resends after another process deleted the entity and
// asked for its blobs' deletion (TestLostReplyBesideAnotherWriter,
// TestDisposalWaitsUntilBlobsAreOld, TestDisposalRacingAResentInsert),
// nor a write held up on the way while Sweep runs
// (TestSlowEntityWriteBesideSweep), nor a crash at any request of a
// write, a worker or Sweep, recovered by a fresh instance (TestCrashInsert,
// TestCrashReplace, TestCrashUpsert, TestCrashDelete, TestCrashDisposal,
// TestCrashSweep) leaves an entity referencing a deleted blob — provided
// that a request the client
// sent reaches the service and is executed within Grace/2, as the Table
// service executes an entity write within its 30 s server timeout (see
// Failure and recovery), that the clock of the process running Sweep or
// the workers runs ahead of the storage service's by less than Grace/2
// less that time (a blob's age is the service's creation time read with
// Config.Now: a clock ahead by d makes every blob look d older; one
// behind only defers deletions), and that Grace is positive (a negative
// Grace is for maintenance while no writer runs). Get returns one
// committed version of the entity with every blob value of that version,
// or an error — a *BlobError matching [ErrBlobCorrupt] or
// [ErrBlobMissing] for a blob that storage lost or someone changed, never
// wrong or partial data.
//
// Writes are serialised by optimistic concurrency on the entity's ETag,
// as for any entity: Replace and Delete of a version that changed fail
// with entity.ErrPreconditionFailed (TestStaleETagIsRefused); Upsert and
// the entity.AnyETag forms read again and retry, at most
// Config.Retry.Attempts rounds, then fail with entity.ErrContention, their
// uploads disposed of (TestUpsertThatAlwaysLosesGivesUp). A write whose reply was lost while another
// process wrote the same entity is never reported refused when it was
// applied: it succeeds or fails with an error matching
// entity.ErrOutcomeUnknown (TestLostReplyBesideAnotherWriter). One value
// that cannot be read (a Stream whose reader fails) fails its write
// alone, and nothing of it stays (TestOneFailingValueAmongSeveral); one
// bad blob or unreadable partition does not stop Sweep
// (TestSweepGoesPastABadBlob), and a blob whose reference was tampered
// with is kept (TestSweepKeepsTheBlobOfAnUnreadableReference).
//
// Once the processor's queue has drained and Sweep has run (past the
// grace period), every blob under the table's prefix is referenced by its
// entity: crashes, lost replies and failed writes leave no garbage for
// good. Meanwhile a reader may see either version of an entity being
// replaced, whole; the processor's workers keep the blobs of a replaced
// or deleted version for Config.DeleteDelay, so that a reader of that
// version can still read them, and until they are Config.Grace old (an
// hour by default). Sweep keeps no DeleteDelay — it cannot tell a
// replaced version's blob from a crash's orphan — and deletes such a blob
// once it is older than Grace; a Get that meets it gone reads the entity
// again (Config.ReadAttempts), a Stream opened later fails with
// ErrBlobMissing.
//
// The processor (Config.Processor) is optional. Without one the writes
// send no message (Replace with a new photo costs 3 storage
// transactions, Delete 2), nothing is kept for DeleteDelay, and every
// blob that falls out of use — a replaced or deleted version's, a failed
// write's — stays until a Sweep finds it older than Grace: the
// guarantees above hold, with Sweep alone collecting the garbage
// (TestWithoutProcessor).
//
// # Steps
//
// Every blob has a name of its own — the table's prefix, then the
// partition, row, property and a random version, joined by slashes — and
// is never overwritten: a new value is a new blob.
//
//  1. Insert: one Put Blob per blob field with a value (a Stream larger
//     than Config.BlockSize: a Put Block per block and a Put Block List),
//     then the entity's insert with the references.
//  2. Replace (and Upsert): a point read of the stored version; a Put Blob
//     per value that changed (a value with the same size and SHA-256
//     keeps its blob, as does a Stream read by Get; with CRC-32C every
//     []byte or string value is uploaded again, since two values with one
//     CRC-32C are easily made); the entity's replace
//     on condition of the ETag read; one Put Message asking the
//     processor's workers to delete the blobs the new version no longer
//     references, after Config.DeleteDelay: a worker reads the entity's
//     references (one query), then deletes each blob it no longer
//     references with a Delete Blob on condition that the blob is older
//     than Config.Grace (If-Unmodified-Since) — but for a blob of a
//     property whose reference does not parse, told by the blob's
//     metadata (a Get Blob Properties), which is kept
//     (TestDisposalGoesByMetadata); one that is younger goes
//     into a new message (a Get Blob Properties and a Put Message),
//     delayed until it is old enough, which does the same again.
//  3. Get: a point read of the entity, then one Get Blob per []byte or
//     string field with a value, all at once, each read into a buffer of
//     the size recorded and checksummed as it streams in; a Stream
//     field's blob is read when it is opened. For an entity the
//     Table read or wrote recently the Get Blobs start with the point
//     read, on the names it saw then (Config.Hints), and are used when the
//     entity still holds those names; the others are cancelled, and have
//     ended when Get returns (TestGetLeavesNoReadRunning).
//  4. Delete: a point read (the blobs' names), the entity's delete on
//     condition of the ETag read, one Put Message for the blobs (handled
//     as in step 2).
//  5. Sweep, now and then: List Blobs with their metadata (the keys and
//     property each belongs to), one query per partition of a page of
//     blobs for the references, a Delete Blob per orphan older than
//     Config.Grace.
//
// Storage transactions for an employee with a 5 MiB photo: Insert 2
// (Put Blob, insert); Get 2 (point read, Get Blob); Replace with a new
// photo 4 on the caller's path (read, Put Blob, replace, Put Message)
// and about 3 in the worker (the references' read, Delete Blob, Delete
// Message, a share of a Get Messages) — about 8 when the old photo was
// younger than Config.Grace (the read, a refused Delete Blob, Get Blob
// Properties, Put Message and Delete Message, then the delayed message's
// read, Delete Blob and Delete Message); Replace of other fields only 2
// (read, replace); Delete 3 and as many in the worker.
//
// Speed: a read checks each value against its checksum as the bytes
// arrive, on a second goroutine, into one buffer of the recorded size (no
// growth, no copy but the one from the connection; a string field costs
// one more copy, the conversion from bytes). What the check costs is its
// CPU time, which BenchmarkChecksum measures in memory for 5 MiB
// (cpu-µs/op on the two shared cores here, SHA extensions present):
// SHA-256 3,450, CRC-32C 365, CRC-64 with azblob's polynomial 3,620 and
// MD5 7,863 — so CRC-64 (what a check of the service's x-ms-content-crc64
// would cost the client; Go computes it with tables) saves nothing over
// SHA-256, MD5 (the service's Content-MD5) costs twice as much, and only
// CRC-32C, computed by the CPU's CRC32 instruction, is cheap: it is the
// one Config.Checksum offers beside SHA-256. Receiving the bytes costs
// about as much CPU as their SHA-256, so BenchmarkRead's cpu-µs/op, from
// one run (-count 3 -cpu 1 -benchtime 30x, means, a loaded machine):
// raw download 4,967; tablekit (SHA-256) 9,875 = 2.0× raw, and 1.03× raw
// followed by the SHA-256 of its bytes (9,611: the floor of any check of a
// SHA-256); tablekit-cold 10,338 = 2.1×; tablekit-crc32c 5,586 = 1.12×.
// Choose CRC-32C where the CPU of reads matters and the threat is
// corruption, not tampering. Where the transfer sets the pace — a storage
// account serves one blob at up to 60 MiB/s — a read runs at 97% of a
// plain download of the same blob with SHA-256
// (BenchmarkReadThrottled).
//
// # Failure and recovery
//
// The blob is written before the entity that references it, and deleted
// only after the entity stopped referencing it, so a crash between any
// two steps leaves the entity referencing blobs that exist:
//
//   - before the entity's write: blobs no entity references. Sweep deletes
//     them once they are older than Config.Grace.
//   - after the entity's write, before the Put Message: the old version's
//     blobs are unreferenced; Sweep deletes them.
//   - after the Put Message: the processor's workers delete them; the
//     message survives any crash of a worker (patterns/eventual).
//
// A request under way when a process dies may still be executed after it:
// a Put Blob the client had cut off is stored, perhaps after a recovery's
// Sweep listed the blobs. No entity references it; a later Sweep deletes
// it once it is older than Config.Grace (the crash tests, which sweep
// once with no grace, wait for every request they let through to be
// answered).
//
// A write that fails for certain (a lost race, a refused value, a
// cancelled ctx) has the blobs it uploaded deleted through the processor,
// at once: no request of that write can still reference them. That
// includes the blob of an upload that failed, which the service may have
// stored all the same — its reply lost, or cut off by the caller's ctx
// (TestCancelledWriteLeavesNoBlob). A lost reply is settled: blob
// uploads and deletes are repeated harmlessly (every name is written by
// one write only), and the entity's write carries a write token
// (entity.Table.WithWriteTokens: a String property TkWrite of at most 290
// bytes) that proves, by reading the entity back, whether a resent write
// was applied; when nothing can tell, the error matches
// entity.ErrOutcomeUnknown, no blob is deleted, and Sweep settles the
// blobs later, whichever version won. A write that replaces a version
// carries that version's chain of write tokens on, so a write whose reply
// was lost is still recognised as applied after another writer replaced
// its version.
//
// A write whose reply was lost is resent by azcore; the resend of an
// insert (Insert, or Upsert of a missing entity) is not conditional, so
// it stores the entity again if another process deleted it meanwhile —
// and that process asked for the blobs' deletion. That is why a worker
// deletes a blob only once it is older than Config.Grace and its entity,
// read just before, does not reference it (a younger one is deferred to a
// new message, delayed until it is old enough): by then no request of the
// write that uploaded it can arrive.
//
// The grace period is what makes Sweep and the workers safe beside
// running writers. A write sends its entity's request under a deadline,
// Grace/2 after the first upload it references began, so that no try —
// neither a slow first one nor one of azcore's resends — leaves the
// client later: a write that reaches the deadline before sending fails
// with [ErrUploadExpired] (nothing written, its blobs deleted), one that
// may have sent a try fails with an error matching
// entity.ErrOutcomeUnknown (its blobs left to Sweep). A blob older than
// Grace can then gain a reference only from a request sent before the
// deadline and executed more than Grace/2 later. The client cannot rule
// that out — the Table service takes no deadline with a write, and a
// request cut off by the client's deadline may already be on its way —
// so it is an assumption: the service gives up on an insert, update or
// delete it has not finished within its server timeout (30 s, also the
// most a request may ask for); keep Grace/2 well above that plus the
// longest time a request may travel and the clocks' skew (the default
// Grace is one hour).
//
// # Ownership
//
// A Table owns the entities of its table and the blobs under its prefix:
// write them through it only. There is no Check; another writer's changes
// show as follows (TestPlainWriteBesideTable, TestMissingBlobAndBadReference,
// TestSweepKeepsTheBlobOfAnUnreadableReference):
//
//   - a merge of other properties (a plain entity.Table of the same type
//     leaves the blob fields out, so its Merge keeps the references) is
//     read back with them: harmless;
//   - a replace or a delete by another writer (a plain entity.Table's
//     Replace drops the references, as its codec leaves the blob fields
//     out) sends no disposal: the entity reads without those values, and
//     their blobs are orphans that Sweep deletes once older than Grace;
//   - a reference copied to another entity (a raw copy of the entity)
//     shares the blob, which is disposed of by what the entity whose keys
//     its metadata holds references: once that entity drops it, the copy's
//     Get fails with a *BlobError matching ErrBlobMissing (after
//     Config.ReadAttempts reads); copy an entity by a Get and an Insert of
//     this Table, which writes blobs of its own;
//   - a reference property set to something else makes Get fail with
//     ErrBadReference; Sweep and the workers keep that property's blobs
//     (SweepResult.Unreadable) until a write of this Table replaces it.
//
// To move or archive a large entity (patterns/eventual steps), read it
// with Get and write it with another Table's Insert, then Delete it here.
//
// # Wire format
//
// What another language needs to read these entities, write them, and
// clean up after them.
//
// The entity: each blob field with a value is a String property named as
// the field is stored (its `table` tag's name, else its Go name), whose
// value is a JSON object with the members "blob", "size" and one
// checksum, in that order: the blob's name in the container, the value's
// size in bytes (positive), and either "sha256", its SHA-256 in 64
// lower-case hex digits, or "crc32c", its CRC-32C (Castagnoli,
// as Go's hash/crc32 computes it) in 8 lower-case hex digits of the
// 32-bit value (Config.Checksum). A reader checks the value by the member
// present (by "sha256" when both are); one with neither is refused
// (ErrBadReference). Entities written before "crc32c" existed all hold
// "sha256" and read as before; a reader that predates it refuses a
// "crc32c" reference as a bad reference rather than read it unchecked.
// Readers ignore members they do not know. A field without a value has no property. The
// other fields are stored as entity's codec stores them, and the entity
// carries entity's write token, TkWrite (see
// entity.Table.WithWriteTokens), which every writer should keep.
//
// The blob: a block blob holding the value's bytes, never overwritten,
// named <prefix><partition>/<row>/<property>/<version>. The prefix is
// Config.Prefix, by default the table's name and "/". Each key is
// escaped: ASCII letters, digits, '-', '_', and '.' but as its first or
// last byte stay; any other byte is written '~' and two upper-case hex
// digits; the empty key is "~"; an escaped key longer than 200 bytes is
// cut to at most 183 (never inside an escape) and ends with '~' and the
// first 16 hex digits of the key's SHA-256. The version is a random UUID.
// Readers go by the metadata, not the name: tablekitpk, tablekitrk and
// tablekitprop hold the keys and the property's name (their UTF-8 in
// unpadded base64url; "" for an empty key), and tablekitsha256 or
// tablekitcrc32c the value's checksum as the reference holds it.
//
// The disposal message, sent to the processor's queues as a
// patterns/eventual envelope, is of kind
// tablekit.large.v1.<container>.<hash>, where <hash> is the first 8 hex
// digits of the SHA-256 of the container's URL (as the container client
// given to New has it), "\n" and the prefix. Its payload names the entity
// ("entity", with "pk" and "rk") and the blobs to delete once the entity
// does not reference them: in "blobs", those of a version of the entity,
// deleted only once older than Config.Grace; in "own", those the sending
// write uploaded and does not reference. A payload without "entity" (as
// older versions sent) is read as "blobs" of the entities their metadata
// names.
//
// For example, with Config.Prefix "employees/", the Usage example's
// Employee{Dept: "Sales", ID: "Ü'1", Name: "Jones", Photo: []byte("hello")}
// is stored so, every property a String, and its Delete sends the
// message shown (TestWireFormat checks that this, and the CRC-32C form
// below, is exactly what is written; the version, the write token and
// the container vary):
//
//	entity    PartitionKey: Sales
//	          RowKey: Ü'1
//	          Name: Jones
//	          Photo: {"blob":"employees/Sales/~C3~9C~271/Photo/<version>","size":5,"sha256":"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}
//	          TkWrite: <write token>
//	blob      employees/Sales/~C3~9C~271/Photo/<version>
//	          content: hello
//	          tablekitpk: U2FsZXM
//	          tablekitrk: w5wnMQ
//	          tablekitprop: UGhvdG8
//	          tablekitsha256: 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
//	message   kind: tablekit.large.v1.<container>.<hash>
//	          payload: {"blobs":["employees/Sales/~C3~9C~271/Photo/<version>"],"entity":{"pk":"Sales","rk":"Ü'1"}}
//
// With Config.Checksum ChecksumCRC32C the same employee is stored so:
//
//	entity    PartitionKey: Sales
//	          RowKey: Ü'1
//	          Name: Jones
//	          Photo: {"blob":"employees/Sales/~C3~9C~271/Photo/<version>","size":5,"crc32c":"9a71bb4c"}
//	          TkWrite: <write token>
//	blob      employees/Sales/~C3~9C~271/Photo/<version>
//	          content: hello
//	          tablekitpk: U2FsZXM
//	          tablekitrk: w5wnMQ
//	          tablekitprop: UGhvdG8
//	          tablekitcrc32c: 9a71bb4c
//	message   kind: tablekit.large.v1.<container>.<hash>
//	          payload: {"blobs":["employees/Sales/~C3~9C~271/Photo/<version>"],"entity":{"pk":"Sales","rk":"Ü'1"}}
//
// # Encrypted tables
//
// Over an encrypted table (package crypt's Table.Entity) the entity's
// fields are encrypted as crypt's Table encrypts them; blob values are
// stored in clear, so New refuses a table whose Config.Encrypt may choose
// a blob field's property (list the others in Config.Encryptable), and a
// blob field cannot be tagged encrypt (TestEncryptedTableRefusals,
// TestNoPlaintextLeaves in integration/canary).
//
// # Azurite and Cosmos DB differences
//
// Azurite stores blobs in memory (with --inMemoryPersistence) and reports
// their creation time, which Sweep uses; the tests run there. The Cosmos
// DB Table API has no blob storage: keep the entities on Cosmos DB and the
// blobs and queues on a storage account — references are plain names,
// valid in any container the Table is given. Entities there may be up to
// 2 MB, which does not change the design.
//
// # Usage
//
//	type Employee struct {
//		Dept  string `table:"PartitionKey,pk"`
//		ID    string `table:"RowKey,rk"`
//		ETag  string `table:",etag"`
//		Name  string
//		Photo []byte `table:",blob"` // 5 MiB: in a blob, referenced by the entity
//	}
//	tbl, _ := entity.NewTable[Employee](client)
//	p, _ := eventual.New(eventual.QueuesOf(queues, "employee-blobs"), nil, eventual.Config{})
//	emps, _ := large.New(tbl, photos, large.Config{Processor: p}) // p optional
//	err := emps.Insert(ctx, &e)                    // Put Blob, then the entity
//	e, err = emps.Get(ctx, "Sales", "000123")      // the entity, then its photo, SHA-256 checked
//	err = emps.Replace(ctx, &e)                    // ErrPreconditionFailed if changed since
//	err = emps.Delete(ctx, "Sales", "000123", e.ETag)
//	go p.Run(ctx)                                  // deletes the blobs no longer needed
//	res, err := emps.Sweep(ctx)                    // now and then: orphans left by crashes
//
// [large entities pattern]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#large-entities-pattern
package large
