// Package seamtest is the seam harness of tablekit's tests: the failures
// found between mechanisms rather than inside them (DESIGN.md, "Seams").
//
//   - [EveryReply] loses the reply of each request of an operation in turn
//     and runs a second writer — insert, replace, merge, delete of the same
//     keys, through healthy clients — inside azcore's retry window, after
//     the lost request was executed and before its resend; [Truthful] then
//     checks the operation's answer against the final state read with raw
//     clients: an applied change is never reported refused, a refused one
//     never reported applied.
//   - Crashes at every request, before sending and after the service
//     executed it, with recovery by a fresh instance, are package crashtest's
//     EveryStep; one bad item among many is each package's own table test.
//
// The registry test (registry_test.go) lists every exported operation that
// takes a context in entity, entity/crypt, resolver and every pattern
// package, says whether it writes, and for each write names the tests that
// inject each seam into it, or why a seam does not apply. A parse of the
// packages' sources checks that the list is complete and that every named
// test exists, so a new write without seam tests fails `go test`.
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
