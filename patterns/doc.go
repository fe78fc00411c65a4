// Package patterns is the parent of one package per pattern of the Azure Table
// design guide (§6). Each sub-package states its consistency guarantee in its
// own doc.go and proves it in tests against Azurite.
package patterns
