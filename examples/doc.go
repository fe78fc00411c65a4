// Package examples holds one runnable program per design-guide pattern and a
// tour (examples/tour) that runs them all against Azurite or a live account.
package examples
