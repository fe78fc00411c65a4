// Package wtoken is the write token: how a write whose reply was lost
// recognises, by reading the entity back, whether it was applied (design
// guide §3, [design for data modification]: optimistic concurrency, made exact under lost replies).
//
// # The problem
//
// azcore resends a request whose reply was lost. When the first try was
// executed, the resend of a conditional update fails with 412 and the
// resend of an insert with 409, although the change was applied; when the
// first try had failed for a real conflict, the resend fails the same way.
// A read-modify-write loop that takes the 412 for another writer's change
// and applies its change again counts twice.
//
// # The token
//
// A write that opts in stores a reserved String property, [Property]
// (TkWrite), holding a chain: a fresh random token for this write (48
// bits, 8 characters) followed by the tokens of the writes before it,
// newest first, at most [MaxTokens], and a root: a hash of the ETag the
// oldest token's write was conditional on, when that version had no
// chain. A conditional write extends the chain it read; an insert starts
// one.
//
// After an ambiguous answer the writer reads the entity and [Judge] decides:
//
//   - its token is in the stored chain: the write was applied;
//   - the token that was on top when it read (p) is followed in the stored
//     chain by another token: that write won the version this one was
//     conditional on, so this one was not applied; p still on top means
//     only writes without a token came since, and this one was not
//     applied either (it would be on top);
//   - the version read had no chain, and the stored chain's root is that
//     version's ETag: the oldest token won it, so this one was not applied;
//   - otherwise (the chain was cut by a replace without a token, or more
//     than MaxTokens writes came since) the outcome is unknown.
//
// Every conclusion rests on positive evidence that only the writes of
// this scheme produce. Writes without a token must not store TkWrite:
// tablekit strips it from every body it sends without a token, so a
// property bag read and written back cannot restore an old chain.
//
// # Cost
//
// One String property: 8 + 2·7 bytes for the name and 2 bytes per
// character of the value, at most 6 + 8·MaxTokens = 134 characters, so at
// most 290 bytes of the entity's 1 MiB, and one of its 252 properties.
// A read is only added when a reply was lost; a read-modify-write loop
// reads again after a 412 anyway.
//
// [design for data modification]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-for-modification
package wtoken
