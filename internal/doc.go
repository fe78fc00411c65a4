// Package internal holds implementation details shared by tablekit's packages
// and not part of its public API.
package internal
