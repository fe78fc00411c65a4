// Package azurite starts a private Azurite — Microsoft's storage emulator,
// the version tablekit is tested with — for tests, demos and development,
// and installs it on first use. It links no package testing: package
// integration builds its test environments on it, tablekit's example
// programs start one when no account is named, and the devserver command
// runs one on the ports that "UseDevelopmentStorage=true" stands for.
//
//	srv, err := azurite.Start(ctx, nil) // free loopback ports, in memory
//	if err != nil {
//		return err
//	}
//	defer srv.Close()
//	acct, err := account.NewFromConnectionString(srv.ConnectionString, nil)
//
// # Finding Azurite
//
// [Start] runs the first of:
//
//  1. the executable named by TABLEKIT_AZURITE;
//  2. integration/node_modules/.bin/azurite in the tablekit source tree this
//     package was compiled from (a clone, or a checkout used through a
//     replace directive), as `make azurite` installs it;
//  3. azurite on PATH (`npm install -g azurite@3.37.0`);
//  4. Azurite 3.37.0 installed by [Install] with `npm ci --no-audit
//     --no-fund` from the package.json and package-lock.json embedded in this
//     package, into the user cache directory (os.UserCacheDir()/tablekit),
//     once for all programs and test binaries. This needs Node.js and npm on
//     PATH, and is what happens in a module that depends on tablekit through
//     `go get`. Azurite 3.37.0 declares Node.js 22 or later; it runs on
//     Node.js 20 (npm prints an EBADENGINE warning), but not with npm's
//     engine-strict set.
//
// # The first installation
//
// Installing takes about a minute and 365 MB. [Install] says where it
// installs, a line every ten seconds while npm runs, and how long it took —
// on the terminal as well as standard error, because `go test ./...` shows
// a passing package's output to nobody. To make it a step of its own, run
// [InstallCommand] once:
//
//	go run github.com/tablekit/tablekit/integration/azurite/devserver -install
//
// When npm is missing, the error names the commands that install Azurite.
//
// # Running
//
// Azurite runs in memory (--inMemoryPersistence), on 127.0.0.1, with
// --skipApiVersionCheck and --disableTelemetry, serving the development
// account ([AccountName], [AccountKey]). Start waits at most 60 seconds for
// it to answer (it usually takes one or two); TABLEKIT_AZURITE_TIMEOUT (such
// as 90s) changes that on a slow machine. It runs in a process group of its
// own: [Server.Close] kills the group and waits until no process of it is
// left. On Linux the process is also killed by the kernel when the program
// dies without reaching Close (a panic, a test's -timeout), so no Azurite
// outlives it.
package azurite
