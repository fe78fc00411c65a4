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
// Clients are built with [Env.ClientOptions]: at most two retries, 50 ms to 500 ms
// apart, instead of azcore's default, which retries a 500 with delays of
// seconds. A test that expects an error should use a client with
// [Env.NoRetryClientOptions] (see [Env.TableWith] and [Env.NewTableService]).
//
// [Start] and [Env.Close] are there for programs and benchmarks that manage the
// environment themselves.
//
// # Finding Azurite
//
// Start runs the first of:
//
//  1. the executable named by TABLEKIT_AZURITE;
//  2. integration/node_modules/.bin/azurite in the tablekit source tree this
//     package was compiled from (a clone, or a checkout used through a
//     replace directive), as `make azurite` installs it;
//  3. azurite on PATH (`npm install -g azurite@3.37.0`);
//  4. Azurite 3.37.0 installed by Start itself with `npm ci --no-audit
//     --no-fund` from the package.json and package-lock.json embedded in this
//     package, into the user cache directory (os.UserCacheDir()/tablekit),
//     once for all test binaries. This needs Node.js and npm on
//     PATH, and is what happens in a module that depends on tablekit through
//     `go get`. Azurite 3.37.0 declares Node.js 22 or later; it runs on
//     Node.js 20 (npm prints an EBADENGINE warning), but not with npm's
//     engine-strict set. The install prints to standard error where it
//     installs, that it takes about 365 MB and 20 to 60 seconds, a line
//     every ten seconds while npm runs, and how long it took.
//
// Start waits at most 60 seconds for a started Azurite to answer (it
// usually takes one or two); TABLEKIT_AZURITE_TIMEOUT (such as 90s) changes
// that on a slow machine. Errors are one line; Main prints the end of
// Azurite's output after one.
//
// Azurite runs in a process group of its own: Close kills the group and
// waits until no process of it is left. On Linux the process is also killed
// by the kernel when the test binary dies without reaching Close (a panic,
// a -timeout), so no Azurite outlives the tests.
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
