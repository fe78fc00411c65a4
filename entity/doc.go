// Package entity maps Go structs to Azure Table Storage entities and gives
// them a typed table.
//
// It implements three parts of the Azure Table design guide:
//
//   - §1 The service model: the entity's shape, the eight EDM property types
//     and every size and naming limit, checked before any request.
//   - §3 Design for data modification: optimistic concurrency with ETags,
//     merge versus replace, upserts, idempotent deletes, and entity group
//     transactions that report the failing operation.
//   - §7 Implementation considerations: point queries returning a typed
//     entity, typed filters that always escape their values (package
//     filter), automatic continuation and resumable page tokens, server-side
//     projection, the property bag for entities of unknown shape, and
//     parallel queries over several partitions.
//
// # Codec
//
// Marshal and Unmarshal convert between a struct tagged `table:"Name,opts"`
// and the JSON body the service speaks, with the @odata.type annotations it
// needs (Int64 as an annotated string, Double always annotated so whole
// numbers stay Double, DateTime in UTC with 100 ns precision):
//
//	type Employee struct {
//		Department string    `table:"PartitionKey,pk"`
//		ID         string    `table:"RowKey,rk"`
//		ETag       string    `table:",etag"`
//		Updated    time.Time `table:",timestamp"`
//		Email      string    `table:",omitempty"`
//		Salary     int64
//		Hired      time.Time
//		Home       *Address  `table:",flatten"` // Home_Street, Home_City
//	}
//
//	body, err := entity.Marshal(&Employee{...})
//
// Both directions validate every documented limit: errors.Is(err,
// ErrInvalid) reports a violation and errors.As(err, &*ValidationError)
// names the property, the rule, the limit and the offending value. A type
// that cannot be mapped is a *TypeError (ErrInvalidType) found when the type
// is first used, and a body that does not fit the struct a *DecodeError
// (ErrDecode). DynamicEntity is the property bag for entities of any shape.
//
// ErrInvalid means "refused before any request": every argument a call
// refuses — an invalid entity, a nil or unmappable value (*TypeError), a
// conditional write without an ETag (*ETagError), a Batch that breaks a
// rule, a filter that does not build, a nil client or table, a connection
// string or a continuation token that cannot be read — matches it,
// besides its own sentinel, and no request was sent
// (TestRefusalsMatchErrInvalid and TestNilReceiversMatchErrInvalid in
// internal/apisweep, which count the requests). A continuation token is
// read only in the one form QueryPage writes (FuzzDecodeToken: base64
// skips CR and LF, so "AQEAAAAAAAAAB0\r0A" is refused).
//
// The tag options encrypt and sign mark properties for client-side
// encryption (design guide §4): such a type is read and written through
// package [github.com/tablekit/tablekit/entity/crypt], and Marshal,
// Unmarshal and Table refuse it (ErrInvalidType) rather than store a marked
// property in clear.
//
// # Tables
//
// Table[T] is a typed view of one table over *aztables.Client (build it with
// ClientOptions, or use NewTableFromConnectionString or
// NewTableWithCredential):
//
//	emps, err := entity.NewTableFromConnectionString[Employee](connStr, "Employees", nil)
//	err = emps.Provision(ctx)                      // create the table unless it exists
//	err = emps.Insert(ctx, &e)                     // e.ETag and e.Updated filled
//	e, err = emps.Get(ctx, "Sales", "000123")      // ErrNotFound when missing
//	err = emps.Update(ctx, &e, entity.Merge)       // If-Match e.ETag: ErrPreconditionFailed on a race
//	e, err = emps.Modify(ctx, "Sales", "000123", func(e *Employee) error { … }, entity.ModifyOptions{})
//	for e, err := range emps.Query(ctx, entity.Query{Filter: filter.PK("Sales")}) { … }
//	page, err := emps.QueryPage(ctx, q, token)     // page.Next resumes later, anywhere
//	etags, err := emps.Submit(ctx, emps.NewBatch().Insert(&a).Update(&dept, entity.Merge))
//	outcomes, err := emps.BulkWrite(ctx, many, entity.BulkOptions{})
//
// Service errors match ErrNotFound, ErrTableNotFound, ErrAlreadyExists and
// ErrPreconditionFailed with errors.Is, and unwrap to the
// *azcore.ResponseError.
//
// Provision returns nil only when the table exists: a create whose reply
// was lost and whose resend met the table counts as done
// (TestProvisionLostReply), and a name the service is still deleting (409
// TableBeingDeleted, which matches ErrBeingDeleted) is asked for again
// until ctx ends (TestProvisionWhileBeingDeleted). Package account's
// Provision runs the Provision of several tables, queues and containers
// at once.
//
// # Protected tables
//
// crypt's Table.Entity returns a protected Table (Protected reports it):
// every call encrypts and decrypts under the crypt policy, bound to the
// call's context, so whatever takes a Table[T] takes an encrypted one.
// What a component needs beside the calls keeps the protection: ViewAs
// makes a view of the same table as another type (property bags, rows as
// sent); Unmarshal, ToDynamic and FromDynamic convert through it; Seal and
// Open give a logical entity's stored form; Batch.Through encodes a
// transaction's entities through another view's protection; Encrypts and
// Beacon tell a component what it may copy out of an entity. Validate
// checks a type with encrypted fields as it is stored, and an error about
// an encrypted value withholds the value. A view of the table made by
// NewTable on its Client has no protection: use ViewAs.
//
// # Conventions
//
// The API of tablekit keeps to these rules, in this package, in package
// [github.com/tablekit/tablekit/resolver] and in the pattern packages:
//
//   - Options: a call's options are a value struct named after the method
//     ([ModifyOptions], [BulkOptions], [FanOutOptions]), passed last; a
//     constructor's settings are a value struct Config, passed last to
//     New… (before any variadic list). The zero value of every field means
//     its documented default ("0 means …"). Methods of one family share
//     one options struct (LookupOptions for Lookup, LookupAll and
//     LookupPrefix); a package's second constructor names its settings
//     after itself (OutboxConfig for NewOutbox). The SDK's
//     *aztables.ClientOptions appears only where an Azure client is made.
//     There are no functional options.
//   - Transactions: a [Batch] is made by the table that runs it and run by
//     that table: b := tbl.NewBatch(); b.Insert(&a).Update(&dept,
//     entity.Merge); etags, err := tbl.Submit(ctx, b). Its methods mirror
//     Table's single-entity writes, with the same ETag rules: Insert,
//     Update (conditional on the entity's ETag; none is [ErrNoETag]),
//     UpdateAny (unconditional), Upsert, Delete(pk, rk, etag) and
//     DeleteEntity.
//   - Read-modify-write: Modify(ctx, partitionKey, rowKey, change, opts)
//     with [ModifyOptions] (Mode 0 means Merge; the zero Retry means
//     [RetryPolicy]'s defaults with 40 rounds; Create inserts a missing
//     entity instead of ErrNotFound). Types that always write whole entities
//     (encrypted tables, index sets) read Mode 0 as Replace and refuse
//     Merge before any request.
//   - Names: [ErrContention] is an optimistic-concurrency loop that lost
//     every round; HTTP 409 is [ErrAlreadyExists].
//   - Concurrency: every "0 means" concurrency field means
//     [DefaultConcurrency].
//   - Errors: every message is one line that starts with its package's
//     name ("entity: ", "keys: ", "resolver: ", "secondaryindex: "), names
//     the operation, table and keys it is about, and never repeats the
//     prefix of an error it wraps; sentinels match with errors.Is, typed
//     errors with errors.As, and the service's answer stays reachable as
//     *azcore.ResponseError. Authorization failures match
//     [ErrUnauthorized], a service that never answered [ErrUnreachable].
//     Every error of a single-entity call (Get, Insert, Upsert, Update,
//     UpdateAny, Delete, DeleteEntity, DeleteIfExists, Modify) names both
//     keys, quoted, empty ones included: `entity: Insert on table People
//     (PartitionKey "Sales", RowKey "O'Brien"): 409 EntityAlreadyExists`
//     ([ServiceError], [OutcomeError], [RowError] for an entity that
//     cannot be encoded or decoded, [ETagError] for a conditional write
//     without an ETag, which says to use UpdateAny or AnyETag)
//     (TestSingleEntityErrorsNameTheKeys).
//   - Raw rows: Table[json.RawMessage] reads each entity's JSON object as
//     the service sent it (a copy), and refuses writes with a [*TypeError]
//     before any request: the bytes-level view for pass-through and for
//     decoders of one's own.
//
// # Outcomes under lost replies
//
// azcore resends a request whose reply was lost, also a write the service
// executed; the resend of an insert then gets 409, of a conditional update
// 412, of a transaction a failure at an operation, for a change that was
// applied. tablekit never reports such an answer as the truth: built with
// ClientOptions (tablekit's constructors are), a client counts azcore's
// tries, and a write whose final answer may be about a resend is checked
// by reading the entity back. The outcome is then either certain — done
// (its write token is stored, or the inserted entity is stored exactly as
// sent), or refused (the stored version is older than the write's first
// try, or another write's token proves it won) — or an error matching
// ErrOutcomeUnknown, never a guess. Upserts and unconditional writes are
// repeated harmlessly. Table.WithWriteTokens makes a lost reply's outcome
// certain from the stored token, independent of ETag times, unless
// another writer changed the entity between the lost reply and the
// read-back (its token replaced ours: then ErrOutcomeUnknown — 3 of about
// 4,700 increments in 66 runs of 6 writers on 3 counters through a proxy
// resetting 10% of replies, TestModifyCountersThroughResettingProxy), and lets the
// ETag-guarded patterns recognise their own writes, for one property of
// at most 290 bytes per entity. Modify never applies a change twice.
//
// This holds with another writer inside azcore's retry window: for every
// public write (Insert, Upsert, Update, UpdateAny, Delete, DeleteEntity,
// DeleteIfExists, Modify, Submit, BulkWrite) whose reply is lost while
// another client inserts, replaces, merges or deletes the same entity
// before the resend, a write that was applied is reported done or
// ErrOutcomeUnknown, never refused, and one that was not is never
// reported done (TestSeamsLostReplyWithAnotherWriter). A transaction is
// settled by any of up to four of its entities, since it is atomic. An
// ETag reported after settling is that of the version the write made,
// read back — for a transaction, each entity's (Submit writes them back
// into the entities) — and "" for an entity another writer changed since
// (TestLostReplyReportsStoredETags); Modify returns the entity as read,
// with that version's ETag.
//
// # Requests of tablekit's own
//
// Writes go out as tablekit's own requests on the client's pipeline (same
// credential, retries, logging, tracing): transactions as tablekit's
// $batch, single-entity writes as requests carried by the aztables call
// of their kind, with the keys escaped as the service wants them and the
// body sent as encoded. So every key the service allows — empty, quotes,
// spaces, any Unicode — works in every call on a client built with
// ClientOptions (TestSingleEntityWritesEveryKey,
// TestTransactionsForEveryKey), and each transaction operation's ETag and
// the failing operation's index are reported. A client built without
// ClientOptions refuses, before any request and with a
// [*ClientOptionsError] that says to build it with ClientOptions, only
// what aztables cannot address: a merge, replace, upsert or delete of an
// empty PartitionKey, and in a Batch a key holding ' in one (BulkWrite
// sends such an upsert on its own) (TestTransactionsWithoutThePolicies).
// Point reads (Get, Modify's read) go out the same way on a client built
// with ClientOptions: a GET of the keys' path carried by aztables'
// GetEntity, for every key the service allows (TestGetEveryKey,
// TestGetRequestAsSent), whose body is read once and decoded as sent,
// while GetEntity is handed an empty object; queries decode the body
// captured through azcore's pipeline. Neither uses the copy aztables
// decodes into a map[string]any and re-encodes, so every value keeps its
// stored type and a read costs little client work: BenchmarkGet measures
// Get at 177 allocations per read against 308 for GetEntity decoded into
// an EDMEntity (221 before Get left GetEntity's decoding), and, paired
// on in-memory Azurite on a shared 2-core machine, at 0.95–1.11× its
// speed (medians 1.09 and 1.03 in two runs of five, against 1.02 and
// 0.92 on the GetEntity path): Azurite's time dominates. Retries,
// logging and tracing are azcore's, configured through
// aztables.ClientOptions.
//
// # Rows that cannot be read
//
// A row that cannot be decoded into T (or, through package crypt,
// authenticated) is a [*RowError] naming its keys and never a partly
// filled value. By default it ends a query like any error; with
// Query.ContinueOnRowError it is yielded in its place and the query goes
// on (QueryPage: Page.RowErrors), so that whoever can write one row
// cannot block every listing of its partition
// (TestQueryContinuesPastBadRows; crypt's
// TestQueryContinuesPastTamperedRow). A failure of the request itself
// still ends the sequence.
//
// # One bad item among many
//
// BulkWrite encodes every entity before any request: one the service
// would refuse (an invalid key or property, a value too long, an entity
// over 1 MiB once encoded) fails alone with its error, and the others go
// out in the transactions they need; Submit refuses a Batch holding one,
// whole, before any request, naming the operation
// (TestSeamsOneBadItemAmongMany).
//
// # Azurite and Cosmos DB
//
// The suite runs on Azurite, and under the Cosmos DB for Table profile of
// package integration/cosmos (TABLEKIT_PROFILE=cosmos; `make test` runs it
// so): opaque ETags without a time, query pages in no key order, RowKeys
// of at most 255 bytes, transactions of at most 2 MB, and the reserved
// property names Id, rid, etag and ResourceId. Measured there:
//
//   - Reads, writes, conditional writes, transactions, BulkWrite and
//     paging with tokens hold as on Table storage: every row comes back
//     once, across pages and an empty PartitionKey.
//   - Order: Query and QueryPage yield rows in the service's order, which
//     on Cosmos DB is not PartitionKey and RowKey order, and Limit keeps
//     the first rows the service sends, not the smallest keys.
//     QueryPartitions keeps the partitions in the order given, each in the
//     service's order; its ByRowKey merge is not in RowKey order there
//     (every row still comes once: TestCosmosFanOutByRowKeyKeepsEveryRow).
//     A query that stops at its first undecodable row stops at the first
//     the service sends (TestCosmosBadRowsWithoutOrder).
//   - Timestamps: an ETag without a time gives a write no Timestamp to
//     write back (TimestampFromETag reports false); reads still fill it.
//   - Lost replies: the verdicts that compare a stored version's ETag time
//     with the write's first try cannot be made, and become
//     ErrOutcomeUnknown — never a wrong certain answer. An insert whose
//     resend meets an older row not as sent is ErrOutcomeUnknown instead of
//     ErrAlreadyExists (TestInsertLostReply); a transaction whose resend
//     fails on an entity stored exactly as sent is settled by its other
//     entities, else ErrOutcomeUnknown
//     (TestCosmosTransactionOverAnIdenticalRow; so a Submit whose other
//     entity another writer deleted in the retry window is unknown there:
//     TestSeamsLostReplyWithAnotherWriter). With 10% of replies lost,
//     TestOutcomesMatchTheTable reports about 50 of 315 writes unknown
//     (none on Table storage), and every write reported done or refused
//     is so in the table. Write tokens (WithWriteTokens) do not depend on
//     ETag times: their verdicts stay certain.
//   - Limits: entity checks Table storage's limits before sending, not
//     Cosmos DB's. An entity with a longer RowKey or a reserved property
//     name reaches the service and is refused (400) — in BulkWrite with
//     its partition's transaction, while the other partitions are written
//     (TestCosmosLimitsOfItsOwn).
package entity
