// Package readme keeps the Go code blocks of tablekit's README equal to the
// compiled files they come from, so the README runs as written.
//
// A Go block in README.md is preceded by an HTML comment that ties it to a
// file of the repository, or says why it is not compiled:
//
//	<!-- file: examples/quickstart/main.go -->
//	<!-- file: examples/quickstart/main_test.go#name -->
//	<!-- not compiled: expressions with their results as comments -->
//
// The block is the whole file, or the region of it between the lines
// "// readme:begin" and "// readme:end" ("// readme:begin name" for a named
// region), with the region's common indentation removed. Trailing white
// space and blank lines at either end are ignored; everything else must be
// equal. The check is [Check]; its test runs it on the repository's README.
//
// The package's tests also check that every relative link of README.md and
// docs/*.md names a file of the repository and, with an anchor, a heading
// (TestLinks); that the README's commands for a new module run as written,
// but for how github.com/tablekit/tablekit@latest resolves
// (TestNewModuleCommands: the quick start and the Azurite devserver build in
// a temporary module whose tablekit is this tree); and every package comment
// of the repository:
// a bracketed name that resolves to no identifier, package or link definition (a
// typo, or an identifier renamed or moved without its doc) fails.
package readme
