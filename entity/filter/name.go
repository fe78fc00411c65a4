package filter

import "github.com/tablekit/tablekit/internal/ident"

// MaxPropertyNameLength is the longest property name the service accepts, in
// UTF-16 code units (the service counts .NET characters).
const MaxPropertyNameLength = ident.MaxLength

// checkName validates a property name for use in a filter and returns the
// reason it is refused, or "". The rule is the one the entity codec applies
// to the names it stores (see internal/ident): a C# identifier of at most 255
// characters, without format characters and OData keywords.
func checkName(name string) string { return ident.Check(name) }
