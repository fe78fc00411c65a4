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
// Edm.Boolean; a number without annotation is what the service and
// entity.Unmarshal make of it: Edm.Int32 for an integer in Int32 range,
// Edm.Double otherwise. A number is never stored as another than the one
// written: an integer that no Double holds exactly (9223372036854775807,
// 9007199254740993) is refused, its line failing alone with a *LineError
// — give a 64-bit integer its Edm.Int64 annotation and a decimal string —
// unless it is the shortest spelling of a Double (9223372036854776000,
// which is how JavaScript tools, Azurite among them, write 2^63)
// (TestImportUnannotatedIntegers, at both ends of Int32, 2^53 and Int64).
// Lines end in LF, or CR LF as a Windows tool leaves them
// (TestImportCRLFLines). Timestamp and ETags
// are not kept (the service sets them anew). For example (what Export
// writes for this entity: TestWireFormatExample):
//
//	{"tablekit.backup":1}
//	{"PartitionKey":"p","RowKey":"1","Count":7,"Name":"Ann","Total@odata.type":"Edm.Double","Total":2.0}
//
// The same entities exported twice give the same bytes, so an export, an
// import into an empty table and a second export are byte-identical
// (TestRoundTripIsByteIdentical).
//
// That includes a row's write token, TkWrite, which package entity stores
// on rows written through Table.WithWriteTokens and the index patterns on
// every row. entity removes it from a write without a token, so that a
// property bag read and written back never restores an old chain; Import
// writes with entity.BulkOptions.KeepWriteTokens, which stores it as the
// backup holds it, in the same request. So a table written through write
// tokens exports, imports and exports again to the same bytes, and
// importing its backup again in Insert mode finds every row already there
// (TestRoundTripKeepsWriteTokens); killed at every request and resumed from
// its last checkpoint, an import ends with the same rows, read raw
// (TestImportOfWriteTokensSurvivesACrashAtEveryRequest). Restore into a
// table no token writer is writing: a chain put back under a writer's lost
// reply can settle that reply wrongly.
//
// # Guarantee
//
// Export reads the table's ranges (ExportOptions.Ranges, in the order given;
// the whole table by default) up to ExportOptions.Parallel at a time, and
// writes them in order, each in PartitionKey then RowKey order
// (TestRoundTripIsByteIdentical exports one table whole and in four ranges
// read three at a time, to the same lines;
// TestExportReadsAtMostParallelRangesAtOnce counts the requests in flight).
// After each segment is written and flushed it calls Checkpoint with a token
// and the byte count written so far: a run that crashes is resumed by
// truncating the output to that count and passing the token as
// ExportOptions.Resume, and the result is the same bytes as a run that did
// not crash (TestExportResumesAfterACrash; at every checkpoint, with empty,
// quoted and unicode keys on the ranges' boundaries:
// TestExportResumesAtEveryCheckpointWithAwkwardKeys; killed at every read:
// TestExportSurvivesACrashAtEveryRequest; over pages of the empty
// PartitionKey, whose continuation aztables' own paging drops:
// TestExportPagesOfTheEmptyPartitionKey; an output that fails partway stops
// it with an error wrapping the writer's, and no checkpoint counts bytes the
// writer did not take: TestExportStopsWhenItsWriterFails; a cancelled
// context stops it before the next batch, with an error matching
// context.Canceled: TestCancelledRunsSayWhereTheyStopped). [ExportBlob]
// keeps the token in the blob itself (committed blocks and metadata), so a
// crashed export to a blob is resumed by calling it again
// (TestExportBlobResumesAfterACrashAtEveryRequest). Its commits are
// conditional on the blob being as it left it: another writer's change to
// the blob while it runs (or a second export to the same blob) stops it with
// ErrBlobChanged instead of being committed over
// (TestExportBlobBesideAnotherWriter, TestExportBlobTwoAtOnce), and a blob
// whose bytes no longer match its token is not resumed
// (TestExportBlobRefusesABlobChangedBySomeoneElse).
//
// Import writes the lines with entity's BulkWrite in segments of
// ImportOptions.SegmentEntities. Checkpoint gets the number of lines settled
// — written, already there, in conflict, or failed for good — which
// ImportOptions.ResumeAfter skips on the next run. An entity whose write
// failed for a reason the next run may not meet (a transport error, an
// unknown outcome, throttling, a missing table) stops the import after its
// segment with a *StoppedError, and no checkpoint counts that segment:
// resuming from the last checkpoint writes it
// (TestImportSurvivesACrashAtEveryRequest, killed at every request before
// and after the service executed it;
// TestImportStopsBeforeTheCheckpointOfAFailedSegment). So does, in Insert
// mode, an entity already stored whose stored copy could not be read back to
// tell a replay from a conflict
// (TestImportInsertStopsWhenItCannotReadAnExistingEntity). In Upsert mode a
// replayed segment rewrites the same values; in Insert mode an entity that
// is already stored with the same properties (the same encoding) counts as
// done and one that differs is reported (ImportSummary.Conflicts, with
// keys), never overwritten (TestImportResumesAfterACrash). What the summary
// says of each entity is what the table holds, also when a reply is lost and
// another writer changes the same keys before azcore's resend
// (TestImportBesideAnotherWriter).
//
// One bad entity fails alone: a line that does not decode, an entity too
// large once encoded, an invalid key or property name, or a value the
// service refuses is reported in ImportSummary.Failed with its line and
// keys, and every other entity is written (TestImportOneBadEntityAmongMany).
// A line is read more strictly than the service's replies are: one without
// its PartitionKey or RowKey member, or with null for one (which would
// otherwise be stored under the empty key), with a member twice, or with an
// annotation that names no EDM type or annotates no property does not
// decode; among many good lines each such line fails alone, every good
// entity is stored once with its values, and a resumed import ends with the
// same table (TestImportCorruptLinesAmongMany). The lines of a gzip
// member are written only after the member has been read to its end and its
// checksum verified, so Import holds one member's entities in memory (Export
// writes at most SegmentEntities per member): a stream that cannot be read
// on — not gzip, a member damaged or cut short, a last line without its end
// — stops the import with a *LineError, after the lines of the intact
// members before it are written and nothing of the damaged member is
// (TestImportWritesNothingOfADamagedMember, TestImportRefusesMalformedInput;
// a reader that fails midway: TestImportReadsAnyReader).
//
// Everything the caller gives is checked before the first request: a nil
// table, writer, reader or blob, a negative number, a range whose To is not
// above its From or that overlaps another (the backup would hold their
// common entities twice), a Filter that does not build, an unknown Mode, are
// refused with a *ConfigError matching ErrInvalid and entity.ErrInvalid
// (TestBadInputIsRefusedBeforeAnyRequest, which counts the requests). A
// Checkpoint's token carries a checksum and the fingerprint of the export
// that made it — the table's name, Ranges, Filter and SegmentEntities — so a
// token changed by hand, cut short, or made by an export of another table or
// with other options is refused the same way instead of resumed into a
// backup that mixes two (TestBadInputIsRefusedBeforeAnyRequest; for a blob:
// TestExportBlobRefusesABlobOfAnotherExport), and so is one spelled
// otherwise than Export wrote it (FuzzParseToken: base64 skips CR and LF). The checksum guards against
// accidents, not against someone who recomputes it. An import's ResumeAfter
// beyond the entities its input holds is refused with ErrInvalid once the
// input is read, with nothing written; a count from another input that is
// not larger cannot be told from this one's.
//
// An entity the table holds but that breaks a rule tablekit checks before
// every write — a DateTime before 1601, a property name that is not a C#
// identifier, which Azurite and Cosmos DB store — does not stop Export: it
// is written as stored (in the format above, which entity.Marshal would
// write were it valid) and named in Summary.Invalid with its line and keys,
// and an import of the backup writes every other entity and reports each
// such line failed alone (TestExportKeepsStoredEntitiesAWriteWouldRefuse;
// the line's bytes: TestMarshalStoredIsMarshal).
//
// Progress is reported after each segment, its entities and bytes counting
// the runs a resumed run goes on from; an import's bytes are the input's
// read so far (TestProgressCountsWhatWasDone).
//
// A backup is not a snapshot: entities changed while Export runs are read as
// they are when their page is read, each key written once
// (TestExportReadsEachEntityWhenItsPageIsRead).
//
// # Storage Explorer CSV
//
// [WriteCSV] and [ReadCSV] speak the typed CSV of Azure Storage Explorer's
// table export and import. WriteCSV separates cells with commas; ReadCSV
// (and ImportCSV) also reads the semicolons and tabs Storage Explorer
// exports with (the list separator of the user's locale, or a tab),
// telling them from the header row (TestReadCSVDelimiters). A header row
// of PartitionKey, RowKey, Timestamp, then for each property its column
// "Name" followed by "Name@type"; each row has a property's value and its
// type name (String, Int32, Int64, Double, Boolean, DateTime, Guid,
// Binary; "Edm."-prefixed names are accepted on reading; a Double cell
// that is an integer no Double holds exactly is refused, as in a backup),
// and empty value and type when the entity lacks it
// (TestReadCSVStorageExplorerSample reads Storage Explorer's own rows, whose
// later type cells may be empty). DateTime is RFC 3339 in UTC, Binary is
// base64. Timestamp is written for reference and ignored on reading. A
// quoted cell keeps every byte, a CR LF inside a String included (Go's
// encoding/csv reads it as LF). Every type at its extremes — Int64's and
// Int32's bounds, Double NaN, ±Inf and -0, DateTime of 1601 and 9999 with
// seven fractional digits, a 64 KiB Binary, empty Strings, NUL, U+FFFF and
// surrogate pairs, under keys with quotes, % and unicode — comes back as it
// was stored, through a backup (byte-identical) and through the CSV
// (TestExtremesRoundTrip). A record that cannot be read fails alone, as a
// bad line of a backup does (TestCSVOneBadRecordAmongMany). [ExportCSV]
// reads the table twice (once to learn the columns): an entity written
// between the two reads with a property the first did not see fails the
// export with an error naming its keys and the property
// (TestExportCSVNamesAPropertyAddedBetweenItsReads). [ImportCSV] writes as
// Import does, with the same checkpoints and outcomes (the crash and
// lost-reply tests above run it too).
//
// # Encrypted tables
//
// An encrypted table (package crypt's Table.Entity) is exported in clear
// only with ExportOptions.Decrypted, and never by ExportCSV: export the
// table through a plain entity.Table of the same client for the
// ciphertexts, and import them through a plain table; a crypt Table of the
// original table's name (crypt.Config.Table) reads them, with the keys
// that wrote them. Import through an encrypted table encrypts what it
// writes.
//
// # Azurite and Cosmos DB
//
// All tests run on Azurite. Under the Cosmos DB profile of package
// integration/cosmos (TABLEKIT_PROFILE=cosmos: opaque ETags without a time,
// query pages in no key order, RowKeys of at most 255 bytes, reserved
// property names):
//
//   - Export sorts each page the service returns into PartitionKey and
//     RowKey order (the service's order of keys) before writing it, so an
//     export through the profile writes the bytes an export from Table
//     storage writes, and two exports of the same table are
//     byte-identical (TestExportResumesUnderTheCosmosProfile;
//     TestRoundTripIsByteIdentical passes under the profile).
//   - Resuming continues after the last key written, which is the end of
//     what was written as long as every page's keys are above the previous
//     page's — the continuation tokens of Table storage and of the profile
//     guarantee it, whatever the order within a page. A killed export
//     resumed through the profile ends with the bytes of one that was not
//     killed (TestExportResumesUnderTheCosmosProfile, after k segments;
//     TestExportSurvivesACrashAtEveryRequestUnderTheCosmosProfile, at every
//     request); the other resume tests above pass under the profile too.
//   - Cosmos DB itself documents no order at all, so its pages need not
//     come in key order from one to the next. An export that makes
//     checkpoints or resumes (Checkpoint or Resume set, and every
//     [ExportBlob]) checks it: a page whose first key is not above the
//     last key of the page before stops the export with an *[OrderError]
//     (matching [ErrUnordered]) before any of that page is written
//     (TestExportStopsAtAPageOutOfKeyOrder, where the page repeats keys
//     already written and the last checkpoint still resumes to the same
//     bytes). In general a checkpoint given before such a page may already
//     be wrong (the page may hold keys below it, which a resume skips):
//     after an OrderError, start the export over without Checkpoint and
//     Resume, which writes the pages as they come — complete, in the
//     service's order across pages. Do not rely on resuming an export from
//     a real Cosmos DB account.
//
// Import's guarantees, and the CSV format, do not depend on order or on
// ETag times, and their tests pass there: an import stopped by an unknown
// outcome leaves unreached the lines after its checkpoint, whatever keys
// they hold (TestImportBesideAnotherWriter).
package backup
