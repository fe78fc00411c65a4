// Package queueproc is the worker loop of a storage queue, written once for
// every pattern that drives steps from a queue (design guide §6.3, the
// [eventually consistent transactions pattern], and the patterns built on it): receive up to 32 messages per request, keep each
// one invisible while it waits and while its handler runs (UpdateMessage,
// always with the pop receipt the last renewal returned), delete it on
// success, make it visible again after a backoff on failure, and move it to
// its poison queue once it has been delivered MaxDeliveries times or its
// handler says it can never succeed.
//
// Messages are opaque text here: the envelope, kinds and encodings are the
// caller's (package eventual). The handler decides; the loop only carries
// out the decision and reports it (Config.Observe).
//
// # What the loop relies on
//
//   - A message is deleted only after its handler returned nil, so a crash
//     anywhere (before, during or after the handler, or between the handler
//     and the delete) leaves it in the queue: it reappears when its
//     visibility timeout ends and runs again. Handlers must therefore be
//     idempotent; at-least-once is the contract.
//   - Every renewal returns a new pop receipt and invalidates the old one.
//     A renewal or delete answered with 404 MessageNotFound, or with
//     400 PopReceiptMismatch (Azurite's answer for a receipt that is no longer
//     current), means the message is no longer ours: it was deleted (a retried
//     delete whose first reply was lost) or another worker received it after
//     its visibility lapsed. Both count as done for this worker.
//   - A renewal whose reply was lost has changed the receipt without telling
//     us; azcore's retry of it then fails as above and the lease is lost.
//     The message is simply delivered again later.
//   - The dequeue count is the service's. A message already delivered more
//     than MaxDeliveries times (its earlier workers crashed) goes to the poison
//     queue without running; one whose handler fails on delivery number
//     MaxDeliveries goes there with the handler's error. Either way it is
//     copied to the poison queue first (as Config.PoisonText says: its own
//     text unless told otherwise), its record kept second (Config.KeepRecord,
//     given the copy's id) and the original deleted third: a crash between
//     leaves a second copy in the poison queue, never a lost message.
//   - Idle reports a processor that holds nothing and whose last receive
//     found the queue empty, for a caller that drains (package eventual's
//     Drain then checks the queue's message count).
//
// # Shutdown
//
// When Run's context ends the loop sends no new receive. A receive in
// flight is not cancelled (it is sent under a context detached from Run's,
// see Outlive): the service may have executed it and hidden its batch, and
// only its reply carries the pop receipts that release them. Messages
// received but not started — also those of a reply that arrives after the
// context ended — are made visible again at once (UpdateMessage with
// visibility 0); running handlers and a receive in flight get
// ShutdownGrace from the moment the context ends, after which their
// context is cancelled too (a receive cut then leaves its batch hidden
// until its visibility timeout ends). Run returns when every worker has
// returned. Nothing is lost either way: whatever was not deleted is
// delivered again.
//
// # Layer
//
// queueproc imports only internal/clock and internal/errline; it lives
// under patterns/eventual/internal/ because eventual alone uses it
// (package internal describes the layers).
//
// [eventually consistent transactions pattern]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#eventually-consistent-transactions-pattern
package queueproc
