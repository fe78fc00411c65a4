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
//	managers, err := denormalize.New(departments, employees, nil, denormalize.Config{},
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
// again from a fresh read. A reader never sees a copy that disagrees,
// whichever entities of the partition it reads in one query.
//
// OtherPartition (targets in other partitions or another table: a
// directory of departments, or a department's cost center copied into
// each of its employees): eventually consistent. The source's change and
// its fan-out messages are one transaction (outbox intents of package
// [github.com/tablekit/tablekit/patterns/eventual]), so no change loses its
// fan-out; each message runs at least once, reads the source as it is
// then, and writes the copy into every target it names that refers to
// it, ETag guarded. A message names at most 40 KiB of targets, so that
// it fits any queue message once enveloped and base64-encoded, without a
// blob; a change whose targets need more is fanned out by several, up to
// 48, committed with it (TestLargeFanOut), and one that needs more than
// its transaction holds is refused before anything is written
// (ErrFanOutTooLarge): a change is never committed with a message that
// cannot be sent. Once the queue has drained and no write is under way,
// every target holds its source's copy — except a target that a poisoned
// fan-out message names as failed (it does not decode, or could not be
// written), and one whose InsertTarget or ModifyTarget returned
// ErrCopyUnverified, until Refresh (or Rebuild) copies again. Meanwhile a
// copy may be behind its source; it is never a copy of another source
// than the one the target refers to.
//
// Lost replies: every write carries entity's write token
// (entity.Table.WithWriteTokens), and the outbox its attempt id, so a
// transaction whose reply was lost and that azcore resent is reported as
// applied, refused, or entity.ErrOutcomeUnknown, never guessed; Modify
// functions apply their change at most once.
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
//     messages (one per 40 KiB of target keys and ranges).
//     A 412 starts again at step 1. An insert also fences every target it
//     read, so that a target made to refer to it meanwhile is not missed.
//     Copies and fences count against the 99 operations the transaction
//     has besides the source's: more is a *CopiesError (ErrTooManyCopies),
//     before anything is written (TestInsertSourceCountsFences).
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
// was left alone), copy; one transaction with the target's write and the
// fences of its SamePartition sources. An OtherPartition source is read
// again after the write: if it changed meanwhile, its fan-out may have
// read the target before it referred to the source, so the copy is
// refreshed.
//
// # Failure and recovery
//
//   - Crash before the transaction of step 3: nothing changed.
//   - Crash between steps 3 and 4: the intent is committed with the
//     change; [Copies.Relay] (run it now and then) sends it.
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
// # Azurite and Cosmos DB
//
// Azurite applies a transaction's operations one after another and rolls
// them back on failure; TestConcurrentWriters reads the partition hundreds
// of times while transactions run and finds none half-done, as the
// service guarantees.
// The Cosmos DB Table API supports entity group transactions but has no
// queues: OtherPartition relations need a storage account's queues.
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
