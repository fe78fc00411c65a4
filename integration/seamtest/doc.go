// Package seamtest is the seam harness of tablekit's tests: the failures
// found between mechanisms rather than inside them.
//
//   - [EveryReply] loses the reply of each request of an operation in turn
//     and runs a second writer — insert, replace, merge, delete of the same
//     keys, through healthy clients — inside azcore's retry window, after
//     the lost request was executed and before its resend; [Truthful] then
//     checks the operation's answer against the final state read with raw
//     clients: an applied change is never reported refused, a refused one
//     never reported applied. The runs wait on the service more than they
//     compute: Race.Parallel runs that many at once, whatever go test's
//     -parallel (TestEveryReplyRunsParallelAtOnce).
//   - Crashes at every request, before sending and after the service
//     executed it, with recovery by a fresh instance, are package crashtest's
//     EveryStep; one bad item among many is each package's own table test.
//
// The registry (registry_test.go, registry_data_test.go) lists every
// exported function and method, of an exported type, whose first parameter
// is a context.Context in entity, entity/crypt, entity/sas, resolver,
// backup, account, throttle and every pattern package, and says whether
// it writes. For each write it names, per seam — crash (at request k,
// before sending and after the service executed it, recovered by a fresh
// instance), race (a lost reply with a second writer inside the retry
// window), bad (one bad item among many) — the test that injects it
// ("TestX" in the operation's package, "dir:TestX" elsewhere), why the
// seam does not apply ("n/a: …"), or that no test injects it yet
// ("missing: …"). TestRegistryCoversEveryOperation parses the packages'
// sources and test files: it fails when an exported operation is not
// listed, or an entry names an operation or a test that does not exist, so
// a new write without seam tests fails `go test`. TestSeamMatrix logs the
// counts per package and every seam still missing
// (go test -run SeamMatrix -v ./integration/seamtest).
//
// # Use from your own tests
//
// seamtest is public: EveryReply and Truthful check an operation of your
// own, built on tablekit, against a second writer in the retry window of
// each of its requests, on the Azurite of package integration.
//
// # Layer
//
// seamtest imports entity (its sentinels), integration and
// integration/faults, so it cannot sit in internal/, the floor under
// entity; it is integration's public test kit (package internal describes
// the layers).
package seamtest
