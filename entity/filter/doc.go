// Package filter builds OData $filter strings for the Azure Table service in
// which no value ever reaches the filter unescaped, and tells which kind of
// query a filter makes.
//
// It implements two sections of the [Azure Table design guide]:
//
//   - §2 [Design for querying]: the four query kinds, best first — point
//     (PartitionKey eq and RowKey eq), range (PartitionKey eq and a RowKey
//     range), partition scan (PartitionKey eq and anything else) and table
//     scan (no PartitionKey equality). [Expr.Plan] classifies a filter by its
//     boolean structure and warns about the traps the guide names: an or over
//     RowKeys turns a range into a partition scan; an or over partitions is a
//     table scan better run as parallel queries. [RowKeyPrefix] writes the
//     prefix range of the compound-key and secondary-index patterns.
//   - §7 [Implementation considerations]: typed filters. Every value is a
//     typed, escaped literal — strings in single quotes with each quote
//     doubled, 123L, 2.0, datetime'2024-01-02T03:04:05.1234567Z', guid'…',
//     X'0aff', true — and every property name is checked to be a name the
//     service stores (a C# identifier that is also an XML name) that the
//     filter grammar reads as a name, so building a filter from user input
//     cannot change its structure. The service stores names a filter cannot
//     reference — the OData keywords (and, eq, true, null, INF, …, in any
//     case) and names with formatting characters such as U+FEFF — and Build
//     refuses those with an error that says so: such properties are filtered
//     on the client.
//
// An expression is an immutable Expr. Errors (an invalid name, NaN, a nil
// pointer) stay inside it and come out of Build, typed as *Error and matching
// [ErrInvalidFilter]; nothing panics.
//
//	f := filter.PK("Sales").And(filter.RowKeyPrefix("empid_"), filter.Ge("Age", 30))
//	s, err := f.Build()
//	// s == "PartitionKey eq 'Sales' and RowKey ge 'empid_' and RowKey lt 'empid`' and Age ge 30L"
//	plan := f.Plan() // plan.Kind == filter.Range
//
// Filter text a user typed (a command-line flag, a saved query) goes through
// [Parse], which reads the service's grammar into an Expr: what is sent is
// what the package builds from it, never the text.
//
//	f, err := filter.Parse("PartitionKey eq 'Sales' and Total ge 100.0") // *ParseError on bad text
//
// Go values map to EDM types as the entity codec stores them (see [ValueOf]):
// int and int64 are [Int64] (written with L), int32 and smaller are [Int32],
// float64 is [Double] (always with a decimal point). Pass a typed Value —
// filter.Int32(30) — to compare as another type.
//
// String comparison on the service is ordinal by UTF-16 code unit; the range
// helpers and the planner use that order, not Go's.
//
// # Azurite
//
// Every literal form above was checked against Azurite 3.37 (each matches the
// rows it should, including Int64 extremes, 1e21 and 5e-324 as Doubles, the
// empty binary, NUL and quotes inside strings, and prefix ranges across
// U+D7FF, U+FFFF and U+10FFFF). Azurite differs from the service in ways
// tests must allow for:
//   - DateTime comparisons are truncated to milliseconds (the service keeps
//     100 ns): two values 100 ns apart compare equal;
//   - Guid comparison is by the stored text, case-sensitively: a GUID stored
//     in upper case does not match guid'…' in lower case (tablekit writes
//     lower case);
//   - numbers are compared across types: Double 2.0 matches the Int32
//     literal 2, which the service, comparing typed values, does not; an
//     Int64 property does not match an Int32 literal on either, and an
//     Int32 property compared with an Int64 literal (a Go int) is answered
//     500 Internal Server Error by Azurite: compare an int32 field with an
//     int32 value or filter.Int32;
//   - its number token has no exponent and no d/f suffix (so Double never
//     writes one).
//
// [Azure Table design guide]: https://learn.microsoft.com/azure/storage/tables/table-storage-design
// [Design for querying]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-for-query
// [Implementation considerations]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#implementation-considerations
package filter
