// Package demo is the runner of tablekit's example programs: it connects to
// the storage account the environment names, or starts a private Azurite when
// it names none, runs a tour on it, and gives the tour what a demo needs
// beyond production wiring (tables, queues and containers with unique names,
// deleted afterwards, and a simulated crash). It imports no internal
// package and links no package testing, so an example can be copied out of
// tablekit's tree with it.
//
// Every example's main is one line:
//
//	func main() { demo.Main("bucket example", tour.Tour) }
//
// # Which account
//
// [Run] (and [Main]) reads, in order:
//
//   - TABLEKIT_CONNECTION_STRING: a storage connection string, the portal's
//     "Access keys" one, or "UseDevelopmentStorage=true" for an Azurite you
//     run on its default ports (go run
//     github.com/tablekit/tablekit/integration/azurite/devserver);
//   - TABLEKIT_ACCOUNT_URL: a service URL such as
//     https://myaccount.table.core.windows.net/, with
//     azidentity.NewDefaultAzureCredential;
//   - neither: a private Azurite, started in memory on free ports and
//     stopped at the end (package azurite).
//
// The account's clients are built by package account, as a production main
// builds them; [Connect] is the few lines to copy:
//
//	acct, err := account.NewFromConnectionString(os.Getenv("TABLEKIT_CONNECTION_STRING"), nil)
//
// # Tours
//
// A [Tour] takes an [*Env]: the account, its service clients, and scratch
// resources. A test runs a tour on its own test account with [New]:
//
//	err := tour.Tour(ctx, demo.New(env.Account(), env.ConnectionString), &out)
package demo
