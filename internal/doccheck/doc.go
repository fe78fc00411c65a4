// Package doccheck holds the repository's checks of package documentation:
// every package has a doc comment that go doc and pkg.go.dev show, starting
// "Package <name>" (or "Command <name>" for a program).
package doccheck
