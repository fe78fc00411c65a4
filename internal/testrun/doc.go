// Command testrun reads the stream of `go test -json` on standard input,
// prints it the way `go test` does (the output of failed tests, an ok or
// FAIL line per package, build errors), and ends with a line
//
//	N passed, N failed, N skipped
//
// alone. Tests and subtests are counted alike; a package that fails without
// a failing test (a build failure, a TestMain that exits non-zero, a panic or
// a race report outside tests) counts as one failure, and so does a test
// that never finished (a -timeout).
//
// It exits with status 1 when a test or package failed, when the stream
// holds no test at all, or, with CI=true or TABLEKIT_NO_SKIP=1 in the
// environment, when any test was skipped: in CI an integration test that
// skips is a failure. The Makefile's test target uses it:
//
//	go test -race -count=1 -json ./... 2>&1 | go run ./internal/testrun
package main
