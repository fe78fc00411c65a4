// Package layers holds the test that keeps tablekit's layout true to its
// layers (see package internal): a package under internal/ imports no
// tablekit package but keys and other internal/ packages; keys imports no
// tablekit package; the packages under entity/ import only entity's own
// packages, internal/ and keys. The test parses every .go file of the
// module, so a new arrow that runs back up fails `go test`.
package layers
