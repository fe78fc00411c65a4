package entity

import (
	"context"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/internal/batch"
	"github.com/tablekit/tablekit/internal/pipeline"
)

// Single-entity writes go out as tablekit's own requests on the client's
// pipeline, as transactions do (see batch.go): aztables v1.4.1 refuses to
// build a merge, replace or delete addressed by an empty PartitionKey, and
// decodes and re-encodes every body it sends. Each write is carried by the
// aztables call of its kind (so that tracing names it), whose method,
// path, If-Match and body tablekit replaces: the keys are escaped as the
// service wants them (' doubled, then percent-encoded), the body goes out
// as encoded, and an insert asks for no content back. Point reads go the
// same way (readEntity), so that the body is read once, as sent.

// writeEntity sends one single-entity write of kind: the body (nil for a
// delete) to the entity pk, rk, on condition of ifMatch ("" for none). It
// returns the new ETag, or the service's refusal as an
// *azcore.ResponseError, or the transport's error.
func (c *conn) writeEntity(ctx context.Context, kind OpKind, pk, rk, ifMatch string, body []byte) (string, error) {
	if !c.kit {
		return c.writeSDK(ctx, kind, pk, rk, ifMatch, body)
	}
	bp := bufPool.Get().(*[]byte)
	path := append((*bp)[:0], c.base...)
	if kind != OpInsert {
		path = batch.AppendKeyPath(path, pk, rk)
	}
	tk := &pipeline.Takeover{
		Method:        entityMethods[kind],
		Path:          string(path),
		Header:        http.Header{"If-Match": nil, "Prefer": nil, "X-Http-Method": nil},
		Body:          body,
		ContentType:   "application/json",
		CarrierStatus: http.StatusNoContent,
	}
	*bp = path[:0]
	bufPool.Put(bp)
	if ifMatch != "" {
		tk.Header["If-Match"] = []string{ifMatch}
	}
	if kind == OpInsert {
		tk.Header["Prefer"] = preferNoContent
	}
	if tk.Method == http.MethodPatch && c.cosmos {
		// As aztables' own policy sends a merge to Cosmos DB's Table API,
		// which it applies to the carrier before tablekit's.
		tk.Method, tk.Header["X-Http-Method"] = http.MethodPost, xMerge
	}
	resp, err := pipeline.Send(ctx, tk, func(ctx context.Context) { c.carryWrite(ctx, kind) })
	if err != nil {
		return "", err
	}
	if resp.StatusCode >= http.StatusMultipleChoices {
		return "", runtime.NewResponseError(resp)
	}
	return resp.Header.Get("ETag"), nil
}

var (
	preferNoContent = []string{"return-no-content"}
	xMerge          = []string{"MERGE"}
)

// isCosmos reports an endpoint of Azure Cosmos DB's Table API (or its
// emulator), as aztables recognises one.
func isCosmos(endpoint string) bool {
	return strings.Contains(endpoint, ".table.cosmos.") || strings.Contains(endpoint, ".table.cosmosdb.") ||
		(strings.Contains(endpoint, "localhost") && strings.Contains(endpoint, "8902"))
}

// entityMethods maps each kind to the HTTP method of its single-entity
// request, as aztables sends them; the If-Match header (an ETag, "*", or
// none for the upserts) makes the rest.
var entityMethods = [...]string{
	OpInsert:        http.MethodPost,
	OpMerge:         http.MethodPatch,
	OpReplace:       http.MethodPut,
	OpUpsertMerge:   http.MethodPatch,
	OpUpsertReplace: http.MethodPut,
	OpDelete:        http.MethodDelete,
}

// carrierETag is the If-Match of the carriers that take one: no version
// has it, so the carrier's own request, were it ever sent as built, would
// change nothing. (It is not: Probe found the per-call policy, which
// replaces it.)
var carrierETag = azcore.ETag(`W/"datetime'1601-01-01T00%3A00%3A00.0000000Z'"`)

// carryWrite runs the aztables call of kind as the carrier of a
// single-entity write. A panic in it must not escape: the real answer is
// tablekit's.
func (c *conn) carryWrite(ctx context.Context, kind OpKind) {
	defer func() { _ = recover() }()
	switch kind {
	case OpInsert:
		_, _ = c.client.AddEntity(ctx, carrierEntity, nil)
	case OpUpsertMerge, OpUpsertReplace:
		_, _ = c.client.UpsertEntity(ctx, carrierEntity, nil)
	case OpMerge, OpReplace:
		_, _ = c.client.UpdateEntity(ctx, carrierEntity, &aztables.UpdateEntityOptions{IfMatch: &carrierETag, UpdateMode: aztables.UpdateModeMerge})
	default:
		_, _ = c.client.DeleteEntity(ctx, "p", "r", &aztables.DeleteEntityOptions{IfMatch: &carrierETag})
	}
}

// carrierEntity is the carriers' entity: never sent.
var carrierEntity = []byte(`{"PartitionKey":"p","RowKey":"r"}`)

// writeSDK is writeEntity through aztables' own calls, for a client
// without tablekit's policies (checked by conn.addressable first).
func (c *conn) writeSDK(ctx context.Context, kind OpKind, pk, rk, ifMatch string, body []byte) (string, error) {
	var match *azcore.ETag
	if ifMatch != "" {
		m := azcore.ETag(ifMatch)
		match = &m
	}
	switch kind {
	case OpInsert:
		resp, err := c.client.AddEntity(ctx, body, &aztables.AddEntityOptions{Format: &formatNone})
		return string(resp.ETag), err
	case OpUpsertMerge, OpUpsertReplace:
		mode := aztables.UpdateModeMerge
		if kind == OpUpsertReplace {
			mode = aztables.UpdateModeReplace
		}
		resp, err := c.client.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: mode})
		return string(resp.ETag), err
	case OpMerge, OpReplace:
		mode := aztables.UpdateModeMerge
		if kind == OpReplace {
			mode = aztables.UpdateModeReplace
		}
		resp, err := c.client.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{UpdateMode: mode, IfMatch: match})
		return string(resp.ETag), err
	}
	_, err := c.client.DeleteEntity(ctx, pk, rk, &aztables.DeleteEntityOptions{IfMatch: match})
	return "", err
}

var formatNone = aztables.MetadataFormatNone

// addressable refuses, before any request, a single-entity write that a
// client without tablekit's policies cannot send: aztables builds no URL
// for a merge, replace or delete (upserts included) addressed by an empty
// PartitionKey.
func (c *conn) addressable(op, table string, kind OpKind, pk, rk string) error {
	if c.kit || kind == OpInsert || pk != "" {
		return nil
	}
	return &ClientOptionsError{Op: op, Table: table, PartitionKey: pk, RowKey: rk, Reason: "aztables cannot address an empty PartitionKey in a " + kind.String()}
}

// readEntity reads the entity pk, rk (a point query) as tablekit's own
// request on the client's pipeline, carried by aztables' GetEntity (so that
// tracing names it): a GET of the keys' path, escaped as the writes escape
// it (empty keys and ' included, which GetEntity cannot address), asking
// for format's metadata. It returns the service's 200 answer, whose body
// azcore has read once, or the service's refusal as an
// *azcore.ResponseError, or the transport's error. The carrier is handed
// an empty object, which it decodes and re-encodes at no cost, instead of
// the entity: aztables' map[string]any and its second encoding are
// skipped.
func (c *conn) readEntity(ctx context.Context, pk, rk string, format *aztables.MetadataFormat) (*http.Response, error) {
	bp := bufPool.Get().(*[]byte)
	path := batch.AppendKeyPath(append((*bp)[:0], c.base...), pk, rk)
	tk := &pipeline.Takeover{
		Path:          string(path),
		Header:        http.Header{"Accept": accept(*format)},
		CarrierStatus: http.StatusOK,
		CarrierBody:   emptyObject,
	}
	*bp = path[:0]
	bufPool.Put(bp)
	resp, err := pipeline.Send(ctx, tk, func(ctx context.Context) { c.carryRead(ctx, format) })
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, runtime.NewResponseError(resp)
	}
	return resp, nil
}

// carryRead runs GetEntity as the carrier of a point read: its keys are
// replaced, its $format is format. A panic in it must not escape.
func (c *conn) carryRead(ctx context.Context, format *aztables.MetadataFormat) {
	defer func() { _ = recover() }()
	_, _ = c.client.GetEntity(ctx, "p", "r", &aztables.GetEntityOptions{Format: format})
}

// emptyObject is the carrier's reply to a point read that succeeded.
var emptyObject = []byte("{}")

// accept is the Accept header asking for format's metadata.
func accept(format aztables.MetadataFormat) []string {
	switch format {
	case aztables.MetadataFormatNone:
		return acceptNone
	case aztables.MetadataFormatMinimal:
		return acceptMinimal
	}
	return []string{string(format)}
}

var (
	acceptNone    = []string{string(aztables.MetadataFormatNone)}
	acceptMinimal = []string{string(aztables.MetadataFormatMinimal)}
)
