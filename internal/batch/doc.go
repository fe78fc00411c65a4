// Package batch holds the entity-group-transaction (EGT, "batch") wire
// format, which aztables v1.4.1 gets wrong or drops, for entity.Table's
// transactions (design guide §1 [entity group transactions], §3 "a failed EGT reports the index
// of the operation that failed: surface it").
//
// aztables' Client.SubmitTransaction sends the multipart/mixed $batch
// request, but on success it discards the reply, so the new ETag of every
// operation is lost, and on failure it returns an *azcore.ResponseError with
// status 202, no error code, and the failing operation's index only inside
// the body's message ("1:The specified entity already exists."). With 101
// operations Azurite's reply makes it fail with "malformed HTTP response".
//
// [Request] builds the request instead: one changeset of operations, each
// addressed by a URL with its keys escaped as aztables' single-entity calls
// escape them (' doubled, then percent-encoded), so that every key the
// service allows — quotes, an empty PartitionKey or RowKey — can be merged,
// replaced or deleted in a transaction. aztables' own builder escapes no
// quote and refuses an empty PartitionKey. Package entity sends it on the
// table client's azcore pipeline (see package pipeline) and reads the reply
// with [Reply].
//
// For a client that cannot carry it, [Submit] keeps aztables for the
// request and reads the reply itself:
//
//	var resp *http.Response
//	_, err := client.SubmitTransaction(policy.WithCaptureResponse(ctx, &resp), actions, nil)
//	body, _ := runtime.Payload(resp) // buffered by azcore: still readable
//	results, perr := batch.ParseResponse(resp.Header.Get("Content-Type"), body)
//
// runtime.Payload returns the bytes azcore's body-download policy
// buffered, even though SubmitTransaction has already consumed resp.Body
// (reading resp.Body again would give nothing after a success). Submit
// wraps exactly this and returns per-operation results or a
// *TransactionError naming the failing operation.
//
// ParseResponse handles the outer batch boundary from the Content-Type
// header (or the first body line), the nested changeset boundary, CRLF or
// bare LF line endings, a failure reply holding only the failing part, 204
// parts with an ETag header, and 201 parts with the entity JSON (inserts
// sent with Prefer: return-content). It never panics (see FuzzParseResponse).
//
// Fixtures in testdata/ are plain HTTP/1.1 responses: azurite_* were recorded
// from Azurite 3.37 through aztables with response capture; docs_* are
// written by hand in the format the service documents.
//
// Behaviour of SubmitTransaction worth knowing (checked on Azurite 3.37):
//   - UpdateMerge and UpdateReplace with a nil IfMatch send no If-Match
//     header, so they act as InsertOrMerge/InsertOrReplace (they create a
//     missing entity). Set IfMatch to azcore.ETagAny for "update only"
//     (a missing entity then fails with 404 ResourceNotFound) or to the
//     entity's ETag for optimistic concurrency (412).
//   - Delete with a nil IfMatch sends If-Match: *.
//   - Add always sends Prefer: return-no-content (204, no body).
//   - Azurite answers a 201 without the entity body and accepts operations
//     on several partitions in one transaction; the service does neither.
//
// [entity group transactions]: https://learn.microsoft.com/azure/storage/tables/table-storage-design#entity-group-transactions
package batch
