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
//     [RetryPolicy]'s defaults). Types that always write whole entities
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
// repeated harmlessly. Table.WithWriteTokens makes Modify exactly-once and
// lets the ETag-guarded patterns recognise their own writes, for one
// property of at most 290 bytes per entity.
//
// Transactions go out as tablekit's own $batch on the client's pipeline
// (same credential, retries, logging, tracing), so every key the service
// allows can be merged, replaced or deleted in one, and each operation's
// ETag and the failing operation's index are reported. Reads decode the
// body the service sent, captured through azcore's pipeline, rather than
// the re-encoded copy aztables hands out, so every value keeps its stored
// type. Retries, logging and tracing
// are azcore's, configured through aztables.ClientOptions.
package entity
