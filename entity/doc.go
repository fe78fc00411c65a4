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
// # Tables
//
// Table[T] is a typed view of one table over *aztables.Client:
//
//	emps, err := entity.NewTableFromConnectionString[Employee](connStr, "Employees", nil)
//	err = emps.Insert(ctx, &e)                     // e.ETag and e.Updated filled
//	e, err = emps.Get(ctx, "Sales", "000123")      // ErrNotFound when missing
//	err = emps.Update(ctx, &e, entity.Merge)       // If-Match e.ETag: ErrPreconditionFailed on a race
//	e, err = emps.Modify(ctx, "Sales", "000123", entity.Merge, entity.RetryPolicy{}, func(e *Employee) error { … })
//	for e, err := range emps.Query(ctx, entity.Query{Filter: filter.PK("Sales")}) { … }
//	page, err := emps.QueryPage(ctx, q, token)     // page.Next resumes later, anywhere
//	etags, err := emps.Submit(ctx, (&entity.Batch{}).Insert(&a).Merge(&dept))
//	outcomes, err := emps.BulkWrite(ctx, many, entity.BulkOptions{})
//
// Service errors match ErrNotFound, ErrTableNotFound, ErrAlreadyExists and
// ErrPreconditionFailed with errors.Is, and unwrap to the
// *azcore.ResponseError. Reads decode the body the service sent, captured
// through azcore's pipeline, rather than the re-encoded copy aztables hands
// out, so every value keeps its stored type. Retries, logging and tracing
// are azcore's, configured through aztables.ClientOptions.
package entity
