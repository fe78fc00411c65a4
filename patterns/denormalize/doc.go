// Package denormalize keeps copies of related data in the entity that is
// read, so that one point query returns everything: the design guide's
// [denormalization pattern] (§6.5), with §5's [one-to-many relationships].
//
// Normalised, a department and its manager are two entities, and showing a
// department costs two point queries: the department, then the employee it
// names as manager. Denormalised, the department also holds a copy of the
// manager's name and phone, and one point query suffices; the price is
// that every change of the manager's name or phone must reach the copy.
// This package makes that reliable. A [Relation] declares which properties
// a target (the department) copies from which source (the manager):
//
//	managers, err := denormalize.New(departments, employees, denormalize.Config{},
//		denormalize.Relation[Department, Employee]{
//			Name:   "manager",
//			Fields: []denormalize.Field{{From: "Name", To: "ManagerName"}, {From: "Phone", To: "ManagerPhone"}},
//			Source: func(d *Department) (denormalize.Key, bool) {
//				return denormalize.Key{PartitionKey: d.PartitionKey, RowKey: d.ManagerID}, d.ManagerID != ""
//			},
//			Targets: func(e *Employee) denormalize.Targets { // where departments that may name e are
//				return denormalize.Targets{Keys: []denormalize.Key{{PartitionKey: e.PartitionKey, RowKey: "department"}}}
//			},
//		})
//	e, err := managers.ModifySource(ctx, "Sales", "empid 000123", func(e *Employee) error { e.Phone = "425-555-0199"; return nil },
//		entity.ModifyOptions{}) // Mode 0 means Replace: sources and targets are written whole
//	d, err := managers.ModifyTarget(ctx, "Sales", "department", func(d *Department) error { d.ManagerID = "empid 000124"; return nil },
//		entity.ModifyOptions{})
//	d, err = departments.Get(ctx, "Sales", "department") // one point query: the manager's name and phone included
//
// Sources and targets are written through the [Copies] (InsertSource,
// ModifySource, DeleteSource; InsertTarget, ModifyTarget); reads need
// nothing from it. A target copies from the source its Relation.Source
// names; a target that names none, or a source that does not exist, holds
// no copy (the properties are removed, not zeroed).
//
// # Ownership
//
// The Copies owns every write to its sources and targets: write them
// through it, and through nothing else. Other writers are seen by
// [Copies.Check], which scans the targets and compares each copy with
// the source its target refers to, and repaired by [Copies.Rebuild] (or
// Refresh a target, Push a source); a second Rebuild then finds nothing.
// What a write that bypasses the Copies leaves (a plain
// [github.com/tablekit/tablekit/entity.Table], another program):
//
//   - a source's property that no relation copies (an employee's title):
//     nothing, no drift (TestOwnership);
//   - a source's copied property (the manager's phone): every target
//     that refers to it keeps the old copy, reported Stale
//     (TestOwnership; OtherPartition, where no fan-out message is sent:
//     TestOwnershipOtherPartition);
//   - an inserted source that targets already refer to: they hold no
//     copy, reported Missing (TestOwnership);
//   - a deleted source: its targets keep the copy, reported Orphan; a
//     target's copy written by hand: Stale, or Orphan for a target that
//     refers to no source; a target written without its copied
//     properties: Missing (TestDrift);
//   - a target made to refer to a key no entity can have (a RowKey with
//     '/'): a source that does not exist — its copy is an Orphan, the scan
//     goes on, and Refresh removes the copy (ModifyTarget refuses such a
//     reference with entity.ErrInvalid, before anything is written:
//     TestCheckTargetReferringToAnImpossibleKey).
//
// Only the copied properties are checked: properties of a source or
// target that no Field names are the caller's, and a write through the
// Copies keeps those its Go type does not model (another program's), as
// it replaces the entity whole (TestWritesKeepPropertiesTheTypeDoesNotModel). The To properties are the
// package's: whatever a change function, or another writer, puts there is
// overwritten by the next write through the Copies.
//
// To compose with other patterns, use the Copies' writes as the steps,
// and its hook: WriteOptions.Messages commits the caller's own messages
// of package [github.com/tablekit/tablekit/patterns/eventual] in the
// write's transaction (an audit record, a follow-up in another table),
// sent exactly when the write commits (see Guarantee). A handler that
// writes sources or targets calls the Copies; these run again harmlessly
// when a message is delivered twice (TestHandlerSteps): DeleteSource (a
// missing source counts as deleted), Push and Refresh (they write only
// what differs), and ModifySource or ModifyTarget with a change that sets
// values rather than increments them. InsertSource and InsertTarget
// report entity.ErrAlreadyExists when run again: a handler counts that as
// done, as eventual.Insert does. eventual.Move of a source or a target
// bypasses the Copies (its delete is a plain write): instead, insert the
// copy where it goes and DeleteSource (its copies removed) in the
// handler's steps.
//
// # Guarantee
//
// [SamePartition] (the guide's case: the department entity and its
// employees in the department's partition): at every instant, every
// target holds exactly the copied properties of the source it refers to.
// A change of a source and the changes of its copies are one entity group
// transaction, conditional on the ETags of the source and of every target
// written; a write of a target that makes it refer to a source, or
// changes its copy, carries a write conditional on the source's version
// (a fence), so that a concurrent change of that source fails and starts
// again from a fresh read (TestConcurrentWriters: copy changes and
// reassignments racing). A reader never sees a copy that disagrees,
// whichever entities of the partition it reads in one query — also when
// a write is killed after any of its requests (TestCrashMatrixSamePartition).
// One race escapes the fences, as neither transaction can be conditional
// on an entity that does not exist yet: an InsertTarget that reads its
// source missing while that source's InsertSource reads the new target
// missing commits the target without the copy, and it stays so until
// Refresh (Check reports it Missing; TestInsertTargetBesideItsSourcesInsert).
// Insert a source before the targets that refer to it, or Refresh such
// targets after inserting it.
//
// OtherPartition (targets in other partitions or another table: a
// directory of departments, or a department's cost center copied into
// each of its employees): eventually consistent. The source's change and
// its fan-out messages are one transaction (outbox intents of package
// [github.com/tablekit/tablekit/patterns/eventual]), so no change loses its
// fan-out, whichever request its writer or worker is killed after
// (TestCrashMatrix); each message runs at least once, reads the source as it is
// then, and writes the copy into every target it names that refers to
// it, ETag guarded. A message names at most 40 KiB of targets, so that
// it fits any queue message once enveloped and base64-encoded, without a
// blob; a change whose targets need more is fanned out by several, up to
// 48, committed with it (TestLargeFanOut), and one that needs more than
// its transaction holds is refused before anything is written
// (ErrFanOutTooLarge), as is one whose targets include a key no entity
// can have (entity.ErrInvalid, naming it: TestInvalidTargetKeyRefused): a
// change is never committed with a message that cannot be sent or that
// the worker would refuse whole. Once the queue has drained and no write is under way,
// every target holds its source's copy — except a target that a poisoned
// fan-out message names as failed (it does not decode, or could not be
// written), and one whose InsertTarget or ModifyTarget returned
// ErrCopyUnverified, until Refresh (or Rebuild) copies again. Meanwhile a
// copy may be behind its source; it is never a copy of another source
// than the one the target refers to (TestDirectory,
// TestLostReplyMatrixOtherPartition).
//
// The caller's messages (WriteOptions.Messages, with Config.Processor
// set): the write's transaction commits them as outbox intents beside
// the change and its fan-out intents, so they are sent exactly when the
// change committed and never when it did not: killed after any request
// of a ModifySource, before sending or once executed, and recovered by a
// fresh Copies (Relay) and processor, a message is delivered exactly when
// its change is stored (TestUserMessageCrashMatrix); with its
// transaction's reply lost and another writer's replace, merge or
// delete in between, it is delivered once, as is the other writer's
// (TestUserMessageLostReply). Every message is checked before any
// request — a valid message whose envelope fits one queue message once
// base64-encoded, without a blob — and one that cannot be sent refuses
// the write with a *MessageError, writing nothing
// (TestUserMessageRefused). Delivery is at least once, as for any
// message of package eventual: a handler's Once steps, keyed by the
// message's ID, count it once.
//
// Lost replies: every write carries entity's write token
// (entity.Table.WithWriteTokens), and the outbox its attempt id, so a
// transaction whose reply was lost and that azcore resent is reported as
// applied, refused, or entity.ErrOutcomeUnknown, never guessed; Modify
// functions apply their change at most once (TestLostReplyMatrix,
// TestLostReplies, TestModifySuite; a DeleteSource applied never deletes
// a source inserted again before azcore's resend:
// TestDeleteSourceLostReplyBesideAnInsert).
//
// # Steps
//
// ModifySource (InsertSource and DeleteSource alike):
//
//  1. Read the source (not for an insert).
//  2. If a SamePartition copy changes: read the targets that Relation.Targets
//     names (a point query each, a range query per Range), before and after
//     the change, and keep those that refer to the source.
//  3. One entity group transaction: the source's write (If-Match its ETag),
//     each target whose copy changes (If-Match its ETag) and, if an
//     OtherPartition copy changes, the outbox intents of the fan-out
//     messages (one per 40 KiB of target keys and ranges), and those of
//     the caller's WriteOptions.Messages.
//     A 412 starts again at step 1. An insert also fences every target it
//     read, whichever source that target refers to, so that a target made
//     to refer to it meanwhile is not missed: a ModifyTarget that read the
//     source missing then fails its condition and copies on its next
//     round (TestInsertSourceFencesTargetsOfOtherSources).
//     Copies and fences count against the 99 operations the transaction
//     has besides the source's and its messages': more is a *CopiesError
//     (ErrTooManyCopies), before anything is written — also when none of
//     the targets refers to the new source, so Relation.Targets should
//     name no more than may (TestInsertSourceCountsFences); messages of
//     the caller's that do not fit beside the change are a *MessageError.
//  4. With intents: enqueue the messages and delete the intents.
//  5. The fan-out (a worker of the processor): read the source; read the
//     targets the message names and, for a change that fits one message,
//     those Relation.Targets names for the source as read; replace each that
//     refers to the source and does not hold its copy, If-Match its ETag
//     (a 412 reads it again); read the source again and start over if it
//     changed meanwhile.
//
// A change that leaves every copied property alone skips steps 2, 4 and 5:
// a read and a transaction of one operation. The guide's manager change is
// three storage transactions (BenchmarkWrite), where the normalised write
// is two; the department's read is one where the normalised read is two
// (BenchmarkRead).
//
// ModifyTarget: read the target; after the change, read each source it
// now refers to (unless it refers to the same one as before and the copy
// was left alone), copy; one transaction with the target's write, the
// fences of its SamePartition sources and the intents of the caller's
// messages (in the targets' table's outbox). An OtherPartition source is read
// again after the write: if it changed meanwhile, its fan-out may have
// read the target before it referred to the source, so the copy is
// refreshed.
//
// # Failure and recovery
//
//   - Crash before the transaction of step 3: nothing changed.
//   - Crash between steps 3 and 4: the intents (the fan-out's and the
//     caller's messages) are committed with the change; [Copies.Relay]
//     (run it now and then) sends them (TestUserMessageCrashMatrix), those
//     of each table even when the other's cannot be read
//     (TestRelayGoesOnPastTheSourcesTable).
//   - Crash in step 5: the message reappears and runs again; each target
//     that holds the copy already is skipped (TestCrashAtEveryStep,
//     TestCrashMatrix: every write killed after each request, recovered by
//     a fresh Copies and processor).
//   - One target that fails in step 5 (it does not decode, as another
//     program wrote it; its write fails) fails alone: every other target
//     is written, and the message runs again, then goes to the poison queue
//     with an error naming the targets that failed (TestBadTargetFanOut).
//     Check names such a target by its keys and goes on past it; Rebuild
//     repairs the others and reports it (TestBadTargetCheck).
//   - A SamePartition change whose step 2 reads a target that does not
//     decode is refused before anything is written, with an error naming
//     it: its transaction cannot tell whether that target refers to the
//     source, so it fails closed (TestBadTargetSamePartition). Fix the
//     target, or narrow Relation.Targets.
//   - A reply lost to a transaction that was executed, with another writer
//     changing the same entity before azcore's resend: the write is
//     reported applied or entity.ErrOutcomeUnknown, never refused, and its
//     change is applied at most once (TestLostReplyMatrix,
//     TestLostReplyMatrixOtherPartition).
//   - A target written without this package (or a copy found wrong):
//     Refresh copies again what its sources hold; a source written without
//     it: Push writes its copies wherever they differ. An entity that is
//     the target of one Copies and the source of another (a directory
//     entry that copies its manager and whose cost center its employees
//     copy) is written through one of them and Pushed or Refreshed through
//     the other.
//
// # Encrypted tables
//
// Sources and targets may be encrypted tables (package crypt's
// Table.Entity): a source is read decrypted and its copies are encrypted
// as the targets' table encrypts them, each entity of a transaction under
// its own table's protection. New refuses a relation that copies a
// property the sources' table may encrypt into one the targets' table
// does not always encrypt, and sources and targets in one table whose
// crypt Tables protect a property differently (each must name the other's
// type in crypt.Config.Types) (TestEncryptedTableRefusals,
// TestNoPlaintextLeaves and TestRotationAcrossPatterns in
// integration/canary).
//
// # Azurite and Cosmos DB
//
// Azurite applies a transaction's operations one after another and rolls
// them back on failure; TestConcurrentWriters reads the partition hundreds
// of times while transactions run and finds none half-done, as the service
// guarantees. The Cosmos DB Table API supports entity group transactions
// but has no queues: OtherPartition relations need a storage account's
// queues. Under the Cosmos DB profile of package integration/cosmos
// (TABLEKIT_PROFILE=cosmos: opaque ETags without a time, query pages in no
// key order, RowKeys of at most 255 bytes, reserved property names) the
// whole suite passes; Check yields its findings and errors in the order the
// service returns the rows, which there is not key order.
//
// # Choosing
//
// Denormalise data that is read far more often than it changes. For small
// lookup data that many entities would copy (departments, product
// categories), joining in the client from a cache is cheaper: see package
// [github.com/tablekit/tablekit/patterns/lookup]. For one-to-many data
// found by one point query or one range, see compound keys in package
// [github.com/tablekit/tablekit/patterns/compound].
//
// [denormalization pattern]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#denormalization-pattern
// [one-to-many relationships]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-modeling#one-to-many-relationships
package denormalize
