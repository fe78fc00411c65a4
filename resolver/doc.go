// Package resolver reads and writes several entity types kept in one table
// and one partition, the .NET EntityResolver and DynamicTableEntity of Go
// (design guide §5: one-to-many relationships and inheritance in one
// partition, kept consistent with entity group transactions; §7:
// heterogeneous entity types, versioned type names, the property bag).
//
// # Types and discriminators
//
// A Schema registers Go structs (mapped by package entity's `table` tags)
// under type names that carry a version, Kind.vN, and says how rows are
// told apart. [NewSchema] takes a [Config] (its zero value is the
// defaults) and the registrations made by [Register] and [Upgrade]:
//
//	schema, err := resolver.NewSchema(resolver.Config{},
//		resolver.Register[Department]("Department.v1"),
//		resolver.Register[Employee]("Employee.v2"),
//		resolver.Upgrade("Employee.v1", func(old *EmployeeV1) (*Employee, error) { … }),
//	)
//	tbl, err := resolver.NewTable(client, schema)
//
// Config.Discriminator is one of:
//
//   - ByProperty(name): a String property holds the type name
//     (EntityType = "Employee.v2"). The default, with DefaultProperty.
//   - ByRowKeyPrefix(sep): the RowKey starts with the kind and sep
//     (EMPLOYEE_000123, DEPARTMENT_SALES), which groups each kind in the key
//     space and lets kinds share ids; the version is kept in the EntityType
//     property so that keys survive upgrades.
//   - ByFunc(resolve, stamp): a function of the PartitionKey, RowKey and
//     properties.
//
// # Writing
//
// Writes stamp the discriminator, so no caller can forget it: the Go types
// need no field for it. tbl.Insert(ctx, &Employee{…}) stores the
// employee's properties plus EntityType = "Employee.v2". With a RowKey
// prefix the Go value's RowKey field holds the id alone ("000123"): writes
// store "EMPLOYEE_000123" and reads give "000123" back, so the prefix is
// never built by hand. Filters on RowKey see stored keys; RowKeyOf and
// OfType build them. A stamped value travels as an *entity.DynamicEntity
// (Schema.Stamp shows it); the new ETag and Timestamp are written back
// into the Go value.
//
// Batch puts entities of several types in one entity group transaction:
//
//	b := tbl.NewBatch().Update(&dept, entity.Merge).Insert(&Employee{…})
//	etags, err := tbl.Submit(ctx, b) // all or nothing
//
// # Reading
//
// Table.Query and Table.QueryPage read a partition in one pass and yield
// each row as its registered Go type, ready for a type switch, with
// continuation, resumable tokens, $top and projection as in entity.Table:
//
//	for v, err := range tbl.Query(ctx, entity.Query{Filter: filter.PK("Sales")}) {
//		switch e := v.(type) {
//		case *Department:
//		case *Employee:
//		case *entity.DynamicEntity: // a type this program does not know
//		}
//	}
//
// Each row is decoded once: a substring search (or, failing that, a scan)
// reads the discriminator from the raw body, then entity decodes the body
// into the chosen type; this costs about 10–15% over decoding rows whose
// type is known in advance (BenchmarkDecodeRatio). Rows of unknown type
// come back as property bags and do not stop the iteration, unless the
// schema's Config is Strict.
//
// The guide's three ways to read such a table are all here: as a known type
// (Get[T], Query[T], with OfType narrowing the query), as property bags
// (Table.Bags), or through the resolver, which picks the type per row.
//
// # Versions
//
// Upgrade registers an old version with the function that turns it into a
// newer one; reads return only registered current types. With
// Config.WriteBackUpgrades a read also replaces the row by its upgrade, on
// condition of the ETag it was read with, so a concurrent change is never
// overwritten (TestUpgradeWriteBackRacesAWriter).
//
// Table.Migrate does it for a whole table: it reads every row and replaces
// each old-version row by its upgrade, a partition's rows in transactions
// under the ETags they were read with; a row another writer changed in
// between is read again and upgraded from what is stored now, never
// overwritten (TestMigrateBesideConcurrentWriters: 300 rows beside 8
// writers, every edit kept; with TABLEKIT_FULL=1 the 50,000 rows:
// all upgraded, 4,228 concurrent edits kept, a second run upgrading 0, in
// 93 s on Azurite on the shared 2-core machine). It is resumable from a checkpoint token and
// idempotent: a second run upgrades nothing. A row that cannot be upgraded
// (its upgrade fails, panics, or cannot be stored) fails alone, named in
// the report (TestMigrateOneBadRowOverPages); a read or write the
// service does not answer stops the run with no checkpoint past its page,
// so a resumed run skips no row
// (TestMigrateResumesAfterAnOutageWithoutSkippingRows), and the report of
// the run that stopped counts only the pages that checkpoint covers, so
// that it and its resumption's report, added, count each row once
// (TestMigrateReportOfAStoppedRunAddsUp, killed at every request); a
// checkpoint token of another table or query, changed, or spelled
// otherwise than Checkpoint gave it is refused before any request, matching
// entity.ErrInvalid (TestMigrateRefusesAForeignResumeToken,
// FuzzResumeToken); rows of types the schema does
// not know are counted and left alone
// (TestMigrateLeavesUnknownAndNewerRowsAlone).
//
// # Property bags
//
// A row of a type this program does not know can still be changed through
// its property bag, guarded by its ETag (§7): Table.Modify reads it, lets a
// function change it (add one to EmployeeCount) and merges it back, starting
// again when another writer got there first.
//
// # Encrypted tables
//
// NewTableOf takes a table of property bags, an encrypted one included
// (package crypt's Table.Entity of entity.DynamicEntity, whose
// Config.Encrypt chooses the properties): every write encrypts, every read
// decrypts and checks. A table that may encrypt the discriminator
// property is refused.
//
// # Guarantee
//
// Each sentence names the test that injects the failure it is about; all
// run on Azurite and read the final state with a raw client.
//
//   - A row is read as the type its discriminator names, decoded once; a
//     row of a type the schema does not know comes back as a property bag
//     and does not stop the iteration, or, with Config.Strict, is an error
//     for that row alone (TestUnknownTypesLenientAndStrict).
//   - A Batch of several types is one entity group transaction: all or
//     nothing (TestMixedTypeTransaction); one entity of a type the schema
//     does not know, or with a key the service refuses, refuses the whole
//     Submit before any request, naming its index, and nothing is stored
//     (TestSubmitOneBadEntityAmongMany).
//   - A write whose reply was lost while another process inserted,
//     replaced, merged or deleted the same entity is reported applied or
//     entity.ErrOutcomeUnknown, never refused (TestWritesBesideAnotherWriter,
//     at every request).
//   - An upgrade written back on read, Migrate and a property bag's Modify
//     never overwrite a concurrent change: each writes on condition of the
//     ETag it read and starts again from a fresh read
//     (TestUpgradeWriteBackRacesAWriter, TestBagUpdateRacesASecondWriter,
//     TestMigrateBesideConcurrentWriters); Migrate killed at every request
//     and resumed upgrades every row once (TestMigrateSurvivesACrashAtEveryRequest).
//
// # Azurite and Cosmos DB
//
// All tests run on Azurite. Under the Cosmos DB profile of package
// integration/cosmos (TABLEKIT_PROFILE=cosmos: opaque ETags without a time,
// query pages in no key order, RowKeys of at most 255 bytes, reserved
// property names), writes, conditional upgrades and Modify hold, and so
// does Migrate (every TestMigrate… test passes under the profile, a
// transaction over its 2 MiB split like one over 4 MiB); what differs is
// order and Timestamps. A query of a mixed partition yields its
// rows in the service's order, which on Cosmos DB is not RowKey order
// (TestMixedPartitionByProperty, TestMixedPartitionByPrefix,
// TestFuncDiscriminator, TestUnknownTypesLenientAndStrict,
// TestVersionUpgrade and TestUpgradeWriteBackRacesAWriter read their rows
// by position and fail there on order alone), and a Submit writes back each
// entity's ETag but no Timestamp, since the ETag carries no time
// (TestMixedTypeTransaction).
package resolver
