// Package steps holds the idempotent storage steps that queue-driven
// patterns compose (design guide §6.3, the [eventually consistent transactions pattern],
// and the patterns built on it: §6.2,
// §6.4, §6.5, §6.11). Every step may run twice — after a crash, after a
// redelivered or duplicated message, after azcore resent a request whose
// reply was lost — and leaves the same state as running once. Each is a
// single storage operation where the service allows it.
//
//   - Insert, Upsert, Delete: a re-insert's ErrAlreadyExists and a
//     re-delete's ErrNotFound count as done.
//   - [Move]: the guide's archive step (read, InsertOrReplace into the target,
//     delete from the source on condition that it did not change since the
//     read); a missing source counts as done.
//   - Once: a change that is not idempotent (an increment) applied exactly
//     once, by writing a marker entity keyed by the message in the same
//     entity group transaction as the change. A second run finds the marker
//     (the transaction fails at operation 0, the marker's insert) and skips.
//     The marker records a random attempt id, so a transaction whose reply
//     was lost and that azcore resent is still reported as applied by this
//     call. Sweep deletes expired markers.
//   - [PutBlob], [PutBlobIfAbsent], [DeleteBlob]: the same for blobs.
//
// Steps report what they did only where a lost reply cannot make that
// report wrong: Once and PutBlobIfAbsent check their attempt id; deletes
// report only that the thing is gone.
//
// [eventually consistent transactions pattern]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#eventually-consistent-transactions-pattern
package steps
