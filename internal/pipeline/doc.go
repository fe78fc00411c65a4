// Package pipeline holds tablekit's two azcore pipeline policies, which let
// package entity see what aztables hides: how many times azcore sent a
// request, and a way to send a request of tablekit's own on a table client's
// pipeline (design guide §1 and §3: [entity group transactions], and writes
// whose outcome is reported exactly).
//
// # Lost replies
//
// azcore's retry policy resends a request whose reply was lost (a connection
// reset after the service executed it), also a non-idempotent one. The
// resend of an insert then gets 409, of a conditional update 412, of a
// $batch a failure at operation 0 — for a change that was applied. Only a
// policy below the retry policy sees every try: the per-retry policy counts
// the tries of a call that carries a [Call] in its context, notes which of
// them may have reached the service, and keeps the server's Date of the
// last answer. [Call.Resent] then says whether an earlier try than the one
// answered may have been executed, and [Call.FirstTryNotBefore] bounds, on
// the server's clock, when the first try can have arrived.
//
// # Requests of tablekit's own
//
// aztables does not export a client's pipeline, so tablekit cannot send a
// request it builds (a $batch with keys escaped as the single-entity calls
// escape them) through aztables' credential, retries, logging and tracing
// directly. The per-call policy takes over a request made by an aztables
// method (the carrier) when the call's context carries a [Takeover]: it
// swaps in tablekit's body (and, for a single-entity write or point read
// whose keys aztables cannot address, its method, escaped path and
// If-Match, Prefer or Accept headers; the URL's host and query, a SAS
// included, stay the carrier's), lets the rest of the pipeline (retries,
// authorization, the per-retry policies, logging, tracing) send it, keeps
// the real response for tablekit, and hands the carrier a harmless reply
// it accepts. It runs before the retry and authorization policies, so the
// request is signed as sent.
//
// [Probe] finds out, without sending anything, whether a client carries the
// policies: it makes the carrier call with a cancelled context, which the
// per-call policy answers itself; without the policy the pipeline gives up
// on the cancelled context before any byte is sent. The probe also yields
// the URL the carrier would have used, from which tablekit learns the table
// endpoint.
//
// [Install] adds both policies to client options once; tablekit's
// constructors call it, and integration's test clients carry them.
//
// [entity group transactions]: https://learn.microsoft.com/azure/storage/tables/table-storage-design#entity-group-transactions
package pipeline
