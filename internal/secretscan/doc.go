// Package secretscan holds the test that no error of tablekit repeats a
// credential: it feeds account keys, SAS signatures, SAS URLs, passwords
// in URLs and connection strings malformed in many ways through every
// constructor and parser of the module that takes one (package account,
// entity's connection-string and credential constructors, entity/sas,
// integration's and the examples' environment reading) and scans each
// error's text — Error(), %+v, %#v, and %#v of every error it wraps — for
// the secret, any 12 characters of it, and its escaped, base64 and hex
// forms. It has no code of its own.
package secretscan
