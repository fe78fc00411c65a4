// Package errwalk holds the error walk: a test that finds every exported
// error type of tablekit's packages by parsing the module, builds one of
// each, and checks its text (one package prefix, the operation, the keys)
// and the sentinel it matches. It has no code of its own.
package errwalk
