// Package indexset is what tablekit's two index patterns share:
// patterns/secondaryindex (entries per value, design guide §6.1 and §6.2)
// and patterns/indexentity (lists per value, §6.4) declare their indexes,
// tell a primary's RowKey from an index's, and report failures the same
// way, so the code doing it is here once.
//
// The error types are generic over a [Package], a zero-size type of each
// pattern package that names it and its ErrInvalidConfig sentinel: each
// package exports them under its own names as aliases
// (type DeclarationError = indexset.DeclarationError[pkg]), so its errors
// read "secondaryindex: …" or "indexentity: …", match that package's
// sentinels with errors.Is, and stay distinct types for errors.As.
//
// # Layer
//
// indexset imports entity and patterns/drift, so it lives under
// patterns/internal/, where only the pattern packages can import it, not
// in internal/, the floor under entity (package internal describes the
// layers).
package indexset
