// Package snippets holds the README's code fragments as compiled tests that
// run on Azurite, so that the README cannot show code that does not build
// or does not do what it says (package internal/readme compares each
// README block with its region here).
package snippets
