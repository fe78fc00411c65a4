// Package examples holds tablekit's example programs: each a main package
// to copy whole into a service, and a tour that runs them all.
//
// Every example program has the same shape. Its main builds the storage
// account from the environment with package account —
// TABLEKIT_CONNECTION_STRING (a connection string, or
// UseDevelopmentStorage=true for Azurite on its default ports), else
// TABLEKIT_ACCOUNT_URL with azidentity's default credential — and calls
//
//	run(ctx, acct, names, os.Stdout)
//
// which creates the tables, queues and containers named in names if they do
// not exist, tells its story with the pattern's public API, and leaves what
// it wrote for you to look at. A failure is printed to standard error and
// the program exits with status 1. The stories write fixed keys into tables
// they expect empty: bloblog, bucket, compound, dataseries, eventual,
// logtail, lookup and quickstart run again on the same account, the others
// stop at their first insert with EntityAlreadyExists (restart Azurite, which
// keeps nothing, or delete their tables). Its test (main_test.go, TestMain =
// integration.Main) runs the same run on Azurite, with names of its own,
// and checks what it prints and what the account holds afterwards.
//
//	go run github.com/tablekit/tablekit/integration/azurite/devserver &  # Azurite on 10000-10002
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true'
//	go run ./examples/logtail
//
// The programs: quickstart (the README's), keys (key builders, no service),
// one per pattern package — backup, bloblog, bucket, compound, dataseries,
// denormalize, eventual, indexentity, large, logtail, lookup, rotation,
// secondaryindex, wide — resolver (several entity types in one table), sas
// (shared access signatures for a key range), encryption (client-side
// encryption), orders (patterns combined in one service) and observability
// (a module of its own, so that OpenTelemetry is not tablekit's dependency:
// logging, tracing, retries and the cost meter).
//
// examples/tour is `make demo`: it starts a private Azurite, tells the
// basics of package entity itself and runs every other program (but
// observability) with go build and the Azurite in its environment. The tour
// imports no example; no example imports the tour, another example, an
// internal package or integration, and none links package testing
// (TestExamplesStandAlone).
package examples
