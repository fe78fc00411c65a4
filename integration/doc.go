// Package integration gives any test suite a real Azure Storage account in
// one call: a private Azurite (the storage emulator) with the table, queue
// and blob services, started on free loopback ports, in memory, and stopped
// when the tests end — or a real account named by the environment.
//
// # Use
//
// Start the environment once per test binary from TestMain with [Main], then ask it for
// tables, queues and containers that are created with unique names and
// deleted when the test that asked ends:
//
//	package mypkg_test
//
//	import (
//		"testing"
//
//		"github.com/tablekit/tablekit/integration"
//	)
//
//	var env *integration.Env
//
//	func TestMain(m *testing.M) { integration.Main(m, &env) }
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//		table := env.Table(t)           // *aztables.Client, table created, deleted at the end
//		queue := env.Queue(t)           // *azqueue.QueueClient
//		blobs := env.Container(t)       // *container.Client
//		_, _, _ = table, queue, blobs
//		_ = env.ConnectionString        // for code that builds its own clients
//	}
//
// [Main] exits with status 1 and says why when the environment cannot be
// started: an integration test never passes by being skipped. [Env]'s methods
// are safe for parallel tests; names come from a counter in the Env and
// random digits, so parallel test binaries sharing a live account do not
// collide either.
//
// Clients are built by package account, the production wiring, from the
// environment's connection string (or endpoint and credential), with
// [Env.ClientOptions]: at most two retries, 50 ms to 500 ms apart, instead
// of azcore's default, which retries a 500 with delays of seconds, and
// tablekit's pipeline policies, so that tests run the product's paths. A
// test that expects an error should use a client with
// [Env.NoRetryClientOptions] (see [Env.TableWith] and [Env.NewTableService]).
// [Env.Account] is that account, for code under test that takes an
// *account.Account.
//
// [Start] and [Env.Close] are there for benchmarks that manage the
// environment themselves. A program's main should not call them: this
// package links package testing. Programs build their clients with package
// account, and start a private Azurite, when they want one, with package
// azurite (which integration uses too).
//
// # Azurite
//
// Start runs Azurite as package azurite finds it: TABLEKIT_AZURITE, the
// tablekit clone's integration/node_modules (`make azurite`), azurite on
// PATH, or else the pinned version installed with npm into the user cache
// directory on first use. That first installation takes about a minute;
// its progress is written to the terminal, which `go test ./...` does not
// capture, as well as to standard error. To take that step on its own,
// before any test, run
//
//	go run github.com/tablekit/tablekit/integration/azurite/devserver -install
//
// Start waits at most 60 seconds for a started Azurite to answer (it
// usually takes one or two); TABLEKIT_AZURITE_TIMEOUT (such as 90s) changes
// that on a slow machine. Errors are one line; Main prints the end of
// Azurite's output after one. Close kills Azurite's process group and waits
// until no process of it is left; on Linux the kernel also kills it when
// the test binary dies without reaching Close (a panic, a -timeout).
//
// A `go test ./...` of many packages starts one Azurite per test binary.
// Run it under sharedrun instead, and the binaries share a few ([EnvShared],
// [Env.Shared]); each still gets its own uniquely named tables, queues and
// containers, as on a shared live account:
//
//	go run github.com/tablekit/tablekit/integration/azurite/sharedrun -n 3 -- go test ./...
//
// Where Azurite 3.37 differs from the service, beyond what package filter
// lists for queries (DateTime to the millisecond, numbers compared across
// types, an Int32 property against an Int64 literal answered 500): it
// accepts more than 15 comparisons in a $filter (entity refuses them
// first); it lets a SAS limited to one key range read another; it refuses,
// 400 PropertyValueTooLarge, an insert of a string of exactly 32,768 UTF-16
// units that are not all ASCII, which the service and a replace on Azurite
// take; and it misreads a $batch delete whose RowKey holds U+2028 or U+2029
// (a JavaScript line break): it deletes another row of the partition, or
// answers 400 InvalidDuplicateRow. Single-entity deletes, and batch inserts,
// merges and replaces, of such keys are right.
//
// # Service profiles
//
// TABLEKIT_PROFILE=cosmos ([EnvProfile], [ProfileCosmos]) makes every table
// client of the Env — its TableService, the Account's, and those of
// [Env.Table], [Env.TableWith], [Env.NewTableService] and views made by
// [Env.With] — apply the Cosmos DB for Table profile of package
// integration/cosmos, so that a package's whole suite runs as if against
// Cosmos DB:
//
//	TABLEKIT_PROFILE=cosmos go test -count=1 ./patterns/wide/
//
// The profile goes last among a client's per-retry policies, nearest the
// service, so that a view's fault injector or meter sees what Cosmos DB
// would send; one profile serves the Env and its views, so that an ETag
// one client got is understood by all. Queue and blob requests are left
// alone (a Cosmos DB account has neither). [Env.Cosmos] tells a test
// whose claim does not hold there; TestProfileOfThisRun fails a run whose
// clients do not apply the profile the variable names, and an unknown
// profile fails Start.
//
// # Live accounts
//
// Two environment variables make [Start] use a real account instead
// ([Env].Live is then true and nothing is started):
//
//   - TABLEKIT_CONNECTION_STRING: a storage account connection string, such
//     as the portal's "Access keys" one.
//   - TABLEKIT_ACCOUNT_URL: the table endpoint, such as
//     https://myaccount.table.core.windows.net/, used with
//     azidentity.NewDefaultAzureCredential (az login, environment variables,
//     workload or managed identity). The queue and blob endpoints are derived
//     by replacing ".table." with ".queue." and ".blob.". The identity needs
//     the Storage Table, Queue and Blob Data Contributor roles.
//
// The connection string wins when both are set. Start checks that the table
// service answers; queues and blobs are only used by the tests that ask for
// them (a Cosmos DB Table API account has neither). Tables, queues and
// containers created through Env are deleted by the tests' cleanups; their
// names start with "tk".
package integration
