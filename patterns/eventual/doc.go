// Package eventual runs work that spans partitions, tables, accounts or
// table and blob storage as eventually consistent transactions driven by a
// queue: the design guide's §6.3, the [eventually consistent transactions
// pattern], and the engine under its §6.2 (secondary
// index in another partition), §6.4 (index entities elsewhere), §6.5
// (denormalised copies) and §6.11 (large entities in blobs).
//
// An entity group transaction covers one partition of one table. Work that
// must change several partitions, tables or a blob is instead described by
// a message; a worker receives it, runs idempotent steps, and deletes the
// message only when every step is done. If the worker dies anywhere, the
// message reappears and the steps run again until they all succeed.
//
//	p, err := eventual.New(eventual.QueuesOf(queueService, "archive-0", "archive-1"), blobs, eventual.Config{})
//	archive := eventual.NewKind[ArchiveEmployee]("ArchiveEmployee.v1")
//	err = eventual.Handle(p, archive, func(ctx context.Context, m ArchiveEmployee) error {
//		return eventual.Move(ctx, current, archived, m.Department, m.ID, nil)
//	}, eventual.HandleOptions{})
//	msg, err := archive.Message(ArchiveEmployee{Department: "Sales", ID: "000123"})
//	err = p.Enqueue(ctx, msg)
//	err = p.Run(ctx) // the workers: until ctx ends
//
// # Guarantee
//
//   - At least once: every step of an enqueued message runs to success at
//     least once, whatever crashes, lost replies and duplicate deliveries
//     happen, unless the message is poisoned (below).
//   - Convergence: once the queues have drained, the state is that of every
//     message having run exactly once — provided the steps are idempotent.
//     The steps of this package are: Upsert, Insert and Delete (a repeat
//     finds its work done), [Move], [PutBlob], [PutBlobIfAbsent], [DeleteBlob], and
//     Once, which applies a change that is not idempotent (an increment)
//     exactly once per message by writing a marker entity in the same entity
//     group transaction.
//   - No isolation: a reader may see any intermediate state — the guide's
//     archived employee may be in Current and Archive at once, or a counter
//     not yet incremented. Design readers for it.
//   - No order: messages may run in any order, concurrently, and twice.
//
// # Steps of a message
//
//  1. Enqueue: one Put Message per message (base64 JSON envelope: kind, id,
//     created, payload). A payload that does not fit a queue message (64
//     KiB, less a 2 KiB reserve for the poison record) is written to a blob
//     first and the message carries its name (claim check).
//  2. Receive: up to 32 messages per Get Messages request (BatchSize), each
//     invisible to other workers for VisibilityTimeout, renewed halfway
//     through with Update Message while it waits or runs; each renewal's new
//     pop receipt is kept for the delete.
//  3. Run the kind's handler: its steps, each one storage request where the
//     service allows (Move: read, InsertOrReplace, delete on the read's
//     ETag).
//  4. Delete the message (and its claim-check blob).
//
// The guide's archive example costs enqueue + receive/32 + read + upsert +
// delete + delete-message: 5.03 storage transactions per employee
// (BenchmarkArchive).
//
// # Failure and recovery
//
//   - A crash before step 4 leaves the message in the queue; it reappears
//     after its visibility timeout and runs again from step 3. Each step
//     finds what an earlier run did (a re-insert's conflict, a re-delete's
//     404, Once's marker) and counts it as done. A crash after the handler
//     and before the delete runs the whole handler again: harmless.
//   - A lost reply: azcore resends the request. A resent Put Message leaves a
//     second copy of the message (same id: handled twice, applied once); a
//     resent delete finds nothing (done); a resent transaction fails at
//     operation 0 (Once reads its marker back to report the truth).
//   - A handler error: the message becomes visible again after RetryDelay,
//     doubling per delivery. After MaxDeliveries deliveries (5, as in Azure
//     Functions) it is moved to the poison queue "<queue>-poison" with a
//     [PoisonRecord] — the reason, the handler's last error, the dequeue count
//     — and deleted from its queue. A message that cannot succeed (its text
//     is not an envelope, its kind has no handler, its payload does not
//     decode) goes there after its first delivery: it is never redelivered
//     forever. Replay moves poison messages back, byte for byte, once the
//     cause is fixed; [ParsePoison] reads them for tools.
//   - Shutdown (Run's context ends): no new receive; messages waiting in hand
//     are made visible at once; running handlers get ShutdownGrace, then
//     their context is cancelled and their messages released.
//
// # Direct enqueue or outbox
//
// The guide's example changes an entity and then enqueues the message: a
// crash between the two leaves the change without its follow-up, forever.
// Enqueue first and the message may run before the change exists. Pick by
// what a lost message costs:
//
//   - [Processor.Enqueue]: at-least-once from the moment Enqueue returns nil.
//     Enqueue before the change when the handler copes with running first
//     (it may find nothing to do yet), or accept the window.
//   - [Outbox.Submit]: the change and the intent (an entity in the same
//     partition) in ONE entity group transaction, then enqueue and delete the
//     intent. Either both are committed or neither; a committed intent is
//     sent by Submit or, after a crash, by Relay (which scans for intents
//     older than [OutboxConfig].Grace). Relay may send a message twice; Once
//     is keyed by the message id, so it counts once.
//
// # Azure Functions, WebJobs and other languages
//
// Messages are base64-encoded JSON by default, what Functions' queue
// triggers expect (PlainText matches "messageEncoding": "none"), poison
// queues are named and counted as theirs, so a step's worker may be a
// Function in another language, and their tooling shows the poison queue.
// Queues are chosen by keys.Bucket(Message.Key, number of queues), a hash
// other languages can reproduce.
//
// # Azurite and Cosmos DB
//
// Azurite answers a delete or update with a stale pop receipt with 400
// PopReceiptMismatch, the service with 404 MessageNotFound; both mean "no
// longer ours" and count as done. Azurite checks message size as this
// package does, by the UTF-8 bytes of the text. The Cosmos DB Table API
// has no queues: run the queues on a storage account and the tables on
// Cosmos DB; entity group transactions (Once, Outbox) work on both.
//
// [eventually consistent transactions pattern]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#eventually-consistent-transactions-pattern
package eventual
