// Package examples holds tablekit's runnable programs, each a main package
// started with go run from the repository root:
//
//   - examples/quickstart: README's quick start, a typed table created,
//     written, read, updated with an ETag, queried and cleaned up, on the
//     account in TABLEKIT_CONNECTION_STRING or Azurite on its default ports.
//   - examples/tour: every topic below in order, with the JSON on the wire
//     (make demo).
//   - examples/keys: the key builders of package keys, without a service.
//   - One program per pattern package, running that pattern's step of the
//     tour: backup, bloblog, bucket, compound, dataseries, denormalize,
//     eventual, indexentity, large, logtail, lookup, rotation,
//     secondaryindex and wide; and one each for resolver (several entity
//     types in one table), sas (shared access signatures for a key range)
//     and encryption (client-side encryption).
//   - examples/orders: patterns combined in one service — orders by
//     customer, newest first; table-wide lookups by order number and by
//     status (secondaryindex); archiving through a queue with the index
//     entries (eventual, Set.MoveTo); an audit log (logtail) — every change
//     committing its messages in its own transaction.
//   - examples/observability, a module of its own so that OpenTelemetry is
//     not tablekit's dependency: azcore logging, OpenTelemetry tracing, retry
//     settings and the storage-cost meter, given once to package account.
//
// Every program's main but quickstart's and keys' is one line, demo.Main with its
// tour: examples/demo builds the clients with package account from
// TABLEKIT_CONNECTION_STRING (UseDevelopmentStorage=true included) or
// TABLEKIT_ACCOUNT_URL, as a production main would, and starts a private
// Azurite when neither is set. No example imports an internal package or
// links package testing, so each can be copied out of tablekit's tree.
//
// Each program has a test that runs it as main does, on the test account
// named by its explicit connection string, and checks its output, so none
// can drift from the API it shows.
package examples
