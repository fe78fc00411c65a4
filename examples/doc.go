// Package examples holds tablekit's runnable programs, each a main package
// started with go run from the repository root:
//
//   - examples/quickstart: README's quick start, a typed table created,
//     written, read, updated with an ETag, queried and cleaned up, on the
//     account in TABLEKIT_CONNECTION_STRING or Azurite on its default ports.
//   - examples/tour: every topic below in order, with the JSON on the wire,
//     against a private Azurite it starts or the account in the environment
//     (make demo).
//   - examples/keys: the key builders of package keys, without a service.
//   - One program per pattern package, running that pattern's step of the
//     tour on a private Azurite: bloblog, bucket, compound, dataseries,
//     denormalize, eventual, indexentity, large, logtail, lookup, rotation,
//     secondaryindex and wide; and one each for resolver (several entity
//     types in one table), sas (shared access signatures for a key range)
//     and encryption (client-side encryption).
//   - examples/observability, a module of its own so that OpenTelemetry is
//     not tablekit's dependency: azcore logging, OpenTelemetry tracing, retry
//     settings and the storage-cost meter on a typed table.
//
// Each program has a test that runs it and checks its output, so none can
// drift from the API it shows.
package examples
