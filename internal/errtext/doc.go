// Package errtext holds the test that the errors of every package of
// tablekit read alike: one line that starts with the package's name, which
// a wrapping error does not repeat, and errors.Is still finds the
// sentinel. It has no code of its own.
package errtext
