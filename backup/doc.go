// Package backup exports a table to a portable file and imports it back:
// the backup and restore that AzCopy v10 no longer does for Table storage,
// and the typed CSV that Azure Storage Explorer exports and imports, so data
// moves between the two.
//
//	sum, err := backup.Export(ctx, tbl, file, backup.ExportOptions{
//		Checkpoint: func(c backup.Checkpoint) error { return save(c) }, // resume point
//	})
//	…
//	sum, err = backup.Import(ctx, other, gzipFile, backup.ImportOptions{Mode: backup.Upsert})
//
// tbl is an *entity.Table[entity.DynamicEntity]: every property keeps its
// EDM type (Edm.String, Int32, Int64, Double, Boolean, DateTime, Guid,
// Binary) on the way out and back in.
//
// # Wire format
//
// A backup is gzip-compressed JSON Lines, written as a series of gzip
// members (a multi-member gzip stream, which gzip and every gzip library
// read as one): one member per segment of at most
// ExportOptions.SegmentEntities entities. The first line is the header
// {"tablekit.backup":1}; each later line is one entity as the Table
// service's JSON takes it in an insert: PartitionKey, RowKey, then the
// properties in byte order of their names, every value whose type JSON
// cannot tell preceded by its "Name@odata.type" annotation (Edm.Int64 as a decimal
// string, Edm.Double always with a fraction or exponent and annotated,
// Edm.DateTime as RFC 3339 with seven fractional digits in UTC, Edm.Guid,
// Edm.Binary as standard base64). A JSON string is Edm.String, true and false
// Edm.Boolean, an integer without annotation Edm.Int32. Timestamp and ETags
// are not kept (the service sets them anew). For example:
//
//	{"tablekit.backup":1}
//	{"PartitionKey":"p","RowKey":"1","Count":7,"Name":"Ann","Total@odata.type":"Edm.Double","Total":2.0}
//
// The same entities exported twice give the same bytes, so an export, an
// import into an empty table and a second export are byte-identical
// (TestRoundTripIsByteIdentical).
//
// # Guarantee
//
// Export reads the table's ranges (ExportOptions.Ranges, in the order
// given; the whole table by default) up to ExportOptions.Parallel at a time,
// and writes them in order, each in PartitionKey then RowKey order. After
// each segment is written and flushed it calls Checkpoint with a token and
// the byte count written so far: a run that crashes is resumed by
// truncating the output to that count and passing the token as
// ExportOptions.Resume, and the result is the same bytes as a run that did
// not crash (TestExportResumesAfterACrash). [ExportBlob] keeps the token in
// the blob itself (committed blocks and metadata), so a crashed export to a
// blob is resumed by calling it again.
//
// Import writes the lines with entity's BulkWrite in segments of
// ImportOptions.SegmentEntities; Checkpoint gets the number of lines done,
// which ImportOptions.ResumeAfter skips on the next run. In Upsert mode a
// replayed segment rewrites the same values; in Insert mode an entity that
// is already stored with the same properties counts as done and one that
// differs is reported (ImportSummary.Conflicts, with keys), never
// overwritten (TestImportResumesAfterACrash). An undecodable line is reported
// with its line number and stops the import before anything after it is
// written.
//
// A backup is not a snapshot: entities changed while Export runs are read
// as they are when their range is read.
//
// # Storage Explorer CSV
//
// [WriteCSV] and [ReadCSV] speak the typed CSV of Azure Storage Explorer's
// table export and import: a header row of PartitionKey, RowKey, Timestamp,
// then for each property its column "Name" followed by "Name@type"; each
// row has a property's value and its type name (String, Int32, Int64,
// Double, Boolean, DateTime, Guid, Binary; "Edm."-prefixed names are
// accepted on reading), and empty value and type when the entity lacks it.
// DateTime is RFC 3339 in UTC, Binary is base64. Timestamp is written for
// reference and ignored on reading. [ExportCSV] reads the table twice (once
// to learn the columns); [ImportCSV] writes as Import does.
package backup
