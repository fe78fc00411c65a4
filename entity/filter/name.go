package filter

import "github.com/tablekit/tablekit/internal/ident"

// MaxPropertyNameLength is the longest property name the service accepts, in
// UTF-16 code units (the service counts .NET characters).
const MaxPropertyNameLength = ident.MaxLength

// checkName validates a property name for use in a filter and returns the
// reason it is refused, or "". Every name the service stores is a valid
// name (internal/ident.Check, the rule the entity codec applies); a filter
// also cannot reference the OData keywords (and, eq, true, null, INF, …, in
// any case) nor names with formatting characters: the grammar would read
// them as operators or literals and has no way to quote a name. The error
// says so, so that a caller knows to filter such a property on the client.
func checkName(name string) string { return ident.CheckFilter(name) }
