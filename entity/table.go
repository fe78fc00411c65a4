package entity

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/entity/internal/protect"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/connstr"
	"github.com/tablekit/tablekit/internal/pipeline"
	"github.com/tablekit/tablekit/internal/provision"
	"github.com/tablekit/tablekit/internal/tablename"
	"github.com/tablekit/tablekit/internal/wtoken"
)

// AnyETag makes a write unconditional ("last writer wins", If-Match: *).
const AnyETag = "*"

// UpdateMode chooses between the service's two ways to change an entity.
type UpdateMode uint8

const (
	// Merge changes only the properties sent; the others keep their values.
	Merge UpdateMode = iota + 1
	// Replace replaces the whole entity: properties not sent are removed.
	Replace
)

func (m UpdateMode) sdk() (aztables.UpdateMode, error) {
	switch m {
	case Merge:
		return aztables.UpdateModeMerge, nil
	case Replace:
		return aztables.UpdateModeReplace, nil
	}
	return "", &ValidationError{Rule: "update mode", Limit: "Merge or Replace", Value: "UpdateMode(" + strconv.Itoa(int(m)) + ")"}
}

// Table is a typed view of one table whose entities are T: a struct mapped by
// its `table` tags, DynamicEntity for entities of any shape, or
// json.RawMessage for each entity's JSON object as the service sent it.
//
// A Table[json.RawMessage] reads in minimal metadata (odata.etag and the
// @odata.type annotations that keep Int64, DateTime, Guid and Binary), for
// code that chooses a Go type per row or passes rows on undecoded. Each
// RawMessage is a copy, so keeping one does not keep a whole response
// alive. Its writes fail with a *TypeError before any request: write
// through a Table of a struct type or of DynamicEntity on the same client.
//
// Every call addresses every key the service allows — empty keys, quotes,
// spaces, any Unicode — on a client built with ClientOptions; a client
// built without refuses a merge, replace, upsert or delete of an empty
// PartitionKey with a *ClientOptionsError before any request (see
// ClientOptions).
//
// Table is safe for concurrent use.
type Table[T any] struct {
	client *aztables.Client
	conn   *conn
	name   string
	shape  shape
	// tokens: writes carry a write token (WithWriteTokens).
	tokens bool
	// readFormat is the metadata level asked for on reads: none when T needs
	// no annotations and no ETag (smaller, faster bodies), else minimal.
	readFormat aztables.MetadataFormat
	// guard, when set, protects every call (package crypt's Table.Entity;
	// see guard.go). A view bound to one call has its shape protected and
	// guard nil.
	guard protect.Guard
}

// NewTable returns a typed view of the table client's table. It fails with a
// *TypeError when T cannot be mapped, and a nil client with an error
// matching ErrInvalid, before any request (TestNilClientConstructors in
// internal/apisweep checks every constructor of the module that takes a
// client). Build the client
// with ClientOptions, so that lost replies are never misreported and
// transactions address every key (see ClientOptions for what a client
// without it cannot do).
func NewTable[T any](client *aztables.Client) (*Table[T], error) {
	return newTable[T](client, "")
}

// NewTableFromService returns a typed view of the named table of a service
// (built with ClientOptions, as for NewTable).
//
// A nil svc is a *ConfigError; a name that breaks the service's rule (3 to
// 63 letters and digits, starting with a letter, not "tables") is a
// *ValidationError with RuleTableName; both before any request.
func NewTableFromService[T any](svc *aztables.ServiceClient, name string) (*Table[T], error) {
	if svc == nil {
		return nil, &ConfigError{Field: FieldServiceClient, Reason: "is a nil *aztables.ServiceClient"}
	}
	if msg := tablename.Check(name); msg != "" {
		return nil, &ValidationError{Rule: RuleTableName, Limit: msg, Value: name}
	}
	return newTable[T](svc.NewClient(name), name)
}

// ErrInvalidConnectionString reports a connection string that cannot be
// read; the error says which setting is wrong, never the key. It matches
// ErrInvalid: nothing was sent.
var ErrInvalidConnectionString = connstr.ErrMalformed

// NewTableFromConnectionString connects with an account connection string
// (account key or SAS) to the named table. opts (nil means aztables'
// defaults) gets tablekit's policies (ClientOptions).
//
// The string is read as package account reads it (internal/connstr), not
// by aztables' parser: requests go to the table endpoint the string
// configures — TableEndpoint, or
// DefaultEndpointsProtocol://AccountName.table.EndpointSuffix/ — whether
// an AccountKey or a SharedAccessSignature authorizes them (with both, the
// key signs). "UseDevelopmentStorage=true", which the Go SDKs refuse,
// stands for a local Azurite on its default ports.
//
// A string that cannot be read, or that gives no table endpoint, is a
// *ConfigError naming the setting (FieldConnectionString, or
// FieldAccountKey for a key that is not base64), matching ErrInvalid and
// ErrInvalidConnectionString, before any request; it never repeats the key
// or the signature.
func NewTableFromConnectionString[T any](connectionString, name string, opts *aztables.ClientOptions) (*Table[T], error) {
	svc, err := serviceFromConnectionString(connectionString, opts)
	if err != nil {
		return nil, err
	}
	return NewTableFromService[T](svc, name)
}

// serviceFromConnectionString builds the table service client of a
// connection string, with tablekit's policies.
func serviceFromConnectionString(connectionString string, opts *aztables.ClientOptions) (*aztables.ServiceClient, error) {
	// Normalize refuses what Parse refuses, and a string that gives no
	// table endpoint.
	if _, err := connstr.Normalize(connectionString); err != nil {
		return nil, connStringError(err)
	}
	p, err := connstr.Parse(connectionString)
	if err != nil {
		return nil, connStringError(err)
	}
	var svc *aztables.ServiceClient
	switch {
	case p.AccountKey != "":
		if _, err := base64.StdEncoding.DecodeString(p.AccountKey); err != nil {
			return nil, &ConfigError{Field: FieldAccountKey, Reason: "is not base64, as the portal's Access keys are"}
		}
		cred, err := aztables.NewSharedKeyCredential(p.AccountName, p.AccountKey)
		if err != nil {
			return nil, &ConfigError{Field: FieldAccountKey, Reason: "cannot sign requests"}
		}
		svc, err = aztables.NewServiceClientWithSharedKey(p.TableEndpoint, cred, ClientOptions(opts))
		if err != nil {
			return nil, clientOptionsError(err)
		}
	default:
		// The SAS goes on the endpoint's query, which aztables adds to
		// every request's URL.
		svc, err = aztables.NewServiceClientWithNoCredential(p.TableEndpoint+"?"+p.SAS, ClientOptions(opts))
		if err != nil {
			return nil, clientOptionsError(err)
		}
	}
	return svc, nil
}

// connStringError turns internal/connstr's error (which names the setting
// and repeats no secret) into a *ConfigError.
func connStringError(err error) error {
	reason := err.Error()
	if ce := (*connstr.Error)(nil); errors.As(err, &ce) {
		reason = ce.Reason
	}
	return &ConfigError{Field: FieldConnectionString, Reason: reason}
}

// clientOptionsError reports options aztables cannot build a client with
// (azcore's error names no URL).
func clientOptionsError(err error) error {
	return &ConfigError{Field: FieldClientOptions, Reason: "aztables cannot build a client with them: " + err.Error()}
}

// NewTableWithCredential connects to the named table of the account at
// serviceURL (https://ACCOUNT.table.core.windows.net/) with a Microsoft Entra
// credential, such as azidentity.NewDefaultAzureCredential's. opts gets
// tablekit's policies (ClientOptions).
//
// serviceURL is checked as a connection string's TableEndpoint is: an
// https URL whose host is a DNS name, an IPv4 address or a bracketed IPv6
// address, with a port (if any) from 1 to 65535, an optional path of plain
// segments (an emulator's /ACCOUNT), and no user, query or fragment — a URL
// carrying a SAS goes to entity/sas's OpenTable or OpenService, not here,
// where the SAS would travel beside the token. http is refused: azcore
// sends tokens over https only, and aztables' client does not pass on
// ClientOptions.InsecureAllowCredentialWithHTTP. A URL refused, or a nil
// cred, is a *ConfigError matching ErrInvalid, before any request; it never
// repeats the URL's query or user information.
func NewTableWithCredential[T any](serviceURL, name string, cred azcore.TokenCredential, opts *aztables.ClientOptions) (*Table[T], error) {
	if cred == nil {
		return nil, &ConfigError{Field: FieldCredential, Reason: "is a nil azcore.TokenCredential"}
	}
	endpoint, err := credentialEndpoint(serviceURL)
	if err != nil {
		return nil, err
	}
	svc, err := aztables.NewServiceClient(endpoint, cred, ClientOptions(opts))
	if err != nil {
		return nil, clientOptionsError(err)
	}
	return NewTableFromService[T](svc, name)
}

// credentialEndpoint checks the service URL of NewTableWithCredential and
// returns it in normal form (ending with '/').
func credentialEndpoint(serviceURL string) (string, error) {
	if u, err := url.Parse(serviceURL); err == nil && (u.RawQuery != "" || u.ForceQuery) {
		return "", &ConfigError{Field: FieldServiceURL, Reason: fmt.Sprintf("%s has a query: with a token credential the URL carries no SAS "+
			"(open a SAS URL with entity/sas's OpenTable or OpenService)", argerr.Quote(u.Scheme+"://"+u.Host+"/…?…"))}
	}
	endpoint, err := connstr.CheckEndpoint(FieldServiceURL, serviceURL)
	if err != nil {
		reason := err.Error()
		if ce := (*connstr.Error)(nil); errors.As(err, &ce) {
			reason = strings.TrimPrefix(ce.Reason, FieldServiceURL+" ")
		}
		return "", &ConfigError{Field: FieldServiceURL, Reason: reason}
	}
	if strings.HasPrefix(endpoint, "http:") {
		return "", &ConfigError{Field: FieldServiceURL, Reason: fmt.Sprintf("%s is not https: azcore sends a token credential's tokens over https only "+
			"(reach an emulator over http with a connection string)", argerr.Quote(endpoint))}
	}
	return endpoint, nil
}

func newTable[T any](client *aztables.Client, name string) (*Table[T], error) {
	c, err := connect(client)
	if err != nil {
		return nil, err
	}
	sh, err := shapeOf(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = c.table
	}
	return &Table[T]{client: client, conn: c, name: name, shape: sh, readFormat: sh.readFormat()}, nil
}

// WithWriteTokens returns a view of the same table whose writes carry a
// write token, with which Modify never applies a change twice under lost
// replies (and settles nearly every one: see Modify), and which lets
// every conditional write or insert whose reply was lost be recognised by
// reading it back.
//
// Each insert and each conditional write (Update, Modify, and the insert,
// merge, replace operations of Submit and BulkWrite) stores a reserved
// String property, TkWrite: a random token of the write and of the writes
// before it that Modify (or an entity type with a TkWrite field) read,
// newest first, at most 16 (134 characters). When the write's answer may
// be about a resent request, or, in Modify, after any 412, tablekit reads
// the entity back: its token in TkWrite proves the write was applied;
// another token following the one it read proves another write won, so it
// was not applied; anything else is ErrOutcomeUnknown, never a guess.
//
// Cost: one property of at most 8 + 2·7 + 2·134 = 290 bytes per entity;
// no extra request unless a reply was lost (Modify's re-read after a 412
// is the read it makes anyway). Upserts and unconditional writes carry no
// token (a resend repeats them harmlessly) and, like every write without
// one, strip a TkWrite read earlier, so an old chain is never restored.
// Every writer of an entity should go through tablekit: a writer that
// stores TkWrite itself defeats the proof.
func (t *Table[T]) WithWriteTokens() *Table[T] {
	if t == nil {
		return nil
	}
	u := *t
	u.tokens = true
	return &u
}

// ok checks t before a call.
func (t *Table[T]) ok() error {
	if t == nil || t.conn == nil {
		return errNilTable
	}
	return nil
}

var errNilTable = invalidArg("entity: nil or zero *entity.Table (make one with entity.NewTable)")

// Client returns the underlying aztables client, for what tablekit does not
// wrap; nil for a nil Table.
func (t *Table[T]) Client() *aztables.Client {
	if t == nil {
		return nil
	}
	return t.client
}

// Name returns the table name: the one given, or the one in the client's
// URL for NewTable.
func (t *Table[T]) Name() string {
	if t == nil {
		return ""
	}
	return t.name
}

// CreateTable creates the table; ErrAlreadyExists when it exists. On a
// client built with ClientOptions (which counts azcore's tries), when a
// try whose reply was lost may have created the table and the resend finds
// it, the error is an *OutcomeError matching ErrOutcomeUnknown instead —
// never a refusal of a create that was applied; its Last holds the 409
// answer, which errors.Is does not reach
// (TestTableLifecycleIsTruthfulAfterALostReply in integration/seamtest).
func (t *Table[T]) CreateTable(ctx context.Context) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := t.ok(); err != nil {
		return err
	}
	cctx, call := pipeline.WithCall(ctx)
	_, err := t.client.CreateTable(cctx, nil)
	err = wrapErr("CreateTable", t.name, err)
	if errors.Is(err, ErrAlreadyExists) && t.conn.kit && call.Resent() {
		// A resent create meets the table its lost first try made, or one
		// another process made: nothing stored tells which.
		return &OutcomeError{Op: "CreateTable", Table: t.name, Last: err}
	}
	return err
}

// CreateTableIfNotExists creates the table unless it exists: either way
// the table exists when it returns nil (also when a resent create met the
// table its first try made).
func (t *Table[T]) CreateTableIfNotExists(ctx context.Context) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	err := t.CreateTable(ctx)
	if errors.Is(err, ErrAlreadyExists) {
		return nil
	}
	var oe *OutcomeError
	if errors.As(err, &oe) && errors.Is(oe.Last, ErrAlreadyExists) {
		return nil
	}
	return err
}

// Provision creates the table unless it exists, as CreateTableIfNotExists
// does, and returns nil only when the table exists: created now, found
// existing, or found by the resend of a create whose reply was lost
// (TestProvisionLostReply). While the service answers that a table of the
// name is being deleted (409 TableBeingDeleted, about 40 s after a delete
// on Azure Storage) it asks again, with waits from 0.2 s doubling up to 5
// s, until the table is created or ctx ends; then the error matches
// ErrBeingDeleted and ctx's error, and the table was not created
// (TestProvisionWhileBeingDeleted). Any other failure is returned as
// CreateTable returns it. It is the Provision of package account's
// Provisioner, so that account.Provision(ctx, orders, …) creates every
// table, queue and container a program uses in one call.
func (t *Table[T]) Provision(ctx context.Context) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := t.ok(); err != nil {
		return err
	}
	return provision.Create(ctx, "entity: table "+strconv.Quote(t.name), func(ctx context.Context) (bool, error) {
		err := t.CreateTableIfNotExists(ctx)
		return errors.Is(err, ErrBeingDeleted), err
	})
}

// DeleteTable deletes the table and every entity in it (design guide §6.8).
// A missing table is an error matching ErrTableNotFound, or, on a client
// built with ClientOptions, an *OutcomeError matching ErrOutcomeUnknown
// when a try whose reply was lost may have deleted it (its Last holds the
// 404 answer).
func (t *Table[T]) DeleteTable(ctx context.Context) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := t.ok(); err != nil {
		return err
	}
	cctx, call := pipeline.WithCall(ctx)
	_, err := t.client.Delete(cctx, nil)
	err = wrapErr(opDeleteTable, t.name, err)
	if errors.Is(err, ErrTableNotFound) && t.conn.kit && call.Resent() {
		// A resent delete finds the table gone: its lost first try, or
		// another process, deleted it.
		return &OutcomeError{Op: opDeleteTable, Table: t.name, Last: err}
	}
	return err
}

// keysOf reads the PartitionKey and RowKey of e.
func (t *Table[T]) keysOf(e *T) (pk, rk string) { return t.shape.keyValues(reflect.ValueOf(e).Elem()) }

// etagOf reads the ETag of e ("" when T has none).
func (t *Table[T]) etagOf(e *T) string { return t.shape.etagValue(reflect.ValueOf(e).Elem()) }

// setWritten stores the ETag the service returned, and the Timestamp it
// encodes, into e.
func (t *Table[T]) setWritten(e *T, etag azcore.ETag) {
	t.shape.setWritten(reflect.ValueOf(e).Elem(), string(etag))
}

// TimestampFromETag returns the Timestamp an ETag was made from. The service's
// ETags have the form W/"datetime'2024-05-01T10%3A00%3A00.1234567Z'", the
// entity's new Timestamp; ok is false for any other form.
func TimestampFromETag(etag string) (time.Time, bool) {
	const prefix, suffix = `W/"datetime'`, `'"`
	if !strings.HasPrefix(etag, prefix) || !strings.HasSuffix(etag, suffix) || len(etag) < len(prefix)+len(suffix) {
		return time.Time{}, false
	}
	s, err := url.QueryUnescape(etag[len(prefix) : len(etag)-len(suffix)])
	if err != nil {
		return time.Time{}, false
	}
	return parseWireTime([]byte(s))
}

// Get reads one entity by its keys (a point query, the fastest kind).
// A missing entity is an error matching ErrNotFound. On a client built
// with ClientOptions, Get is tablekit's own GET of the keys' path, carried
// by aztables' GetEntity (so that tracing names it), for every key the
// service allows, and its body is decoded as the service sent it, once;
// on a client built without, it is aztables' GetEntity, and empty keys,
// which GetEntity refuses, are read with a query.
// An entity that cannot be decoded into T is a *RowError naming its keys
// (matching ErrDecode), with T's zero value; so is a read whose failure
// is not the service's answer (a reply that cannot be read, a cancelled
// context), which unwraps to the cause.
func (t *Table[T]) Get(ctx context.Context, partitionKey, rowKey string) (T, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return *new(T), err
	}
	var out T
	t = t.bind(ctx, "Get", false)
	body, etag, err := t.getRaw(ctx, "Get", partitionKey, rowKey)
	if err != nil {
		return out, err
	}
	rv := reflect.ValueOf(&out).Elem()
	if err := t.shape.decode(body, rv); err != nil {
		var zero T
		return zero, rowErr("Get", t.name, partitionKey, rowKey, err)
	}
	if etag != "" && t.shape.etagValue(rv) == "" { // no metadata: the header has it
		t.shape.setWritten(rv, etag)
	}
	return out, nil
}

func (t *Table[T]) getRaw(ctx context.Context, op, partitionKey, rowKey string) (body []byte, etag string, err error) {
	if err := t.ok(); err != nil {
		return nil, "", err
	}
	if err := t.checkKeys(op, partitionKey, rowKey); err != nil {
		return nil, "", err
	}
	if t.conn.kit { // the service allows empty keys in a point query's path
		resp, err := t.conn.readEntity(ctx, partitionKey, rowKey, &t.readFormat)
		if err != nil {
			return nil, "", t.readErr(op, partitionKey, rowKey, err)
		}
		body, err = runtime.Payload(resp)
		if err != nil {
			return nil, "", t.readErr(op, partitionKey, rowKey, err)
		}
		return body, resp.Header.Get("ETag"), nil
	}
	if partitionKey == "" || rowKey == "" {
		q := Query{Filter: filter.And(filter.PK(partitionKey), filter.RK(rowKey)), Limit: 1}
		fail := func(err error) error { return t.readErr(op, partitionKey, rowKey, err) }
		fetch := func(ctx context.Context, c compiled, top int, cont continuation) ([][]byte, []error, continuation, error) {
			return t.readPage(ctx, c, top, cont, fail)
		}
		for body, err := range iterate(ctx, t, q, fetch) {
			return body, "", err
		}
		return nil, "", &ServiceError{Op: op, Table: t.name, PartitionKey: partitionKey, RowKey: rowKey, scope: scopeEntity, StatusCode: 404, Code: "ResourceNotFound", Err: errors.New("the specified resource does not exist")}
	}
	var raw *http.Response
	resp, err := t.client.GetEntity(policy.WithCaptureResponse(ctx, &raw), partitionKey, rowKey, &aztables.GetEntityOptions{Format: &t.readFormat})
	if err != nil {
		return nil, "", t.readErr(op, partitionKey, rowKey, err)
	}
	body, err = rawBody(raw, resp.Value)
	if err != nil {
		return nil, "", t.readErr(op, partitionKey, rowKey, err)
	}
	return body, string(resp.ETag), nil
}

// readErr is the error of op's read of the entity pk, rk: the service's
// answer, or no answer, as a *ServiceError naming the keys; anything else
// (a reply that cannot be read, a cancelled context) as a *RowError naming
// them, which unwraps to it.
func (t *Table[T]) readErr(op, pk, rk string, err error) error {
	err = wrapEntityErr(op, t.name, pk, rk, err)
	if _, ok := err.(*ServiceError); ok {
		return err
	}
	return rowErr(op, t.name, pk, rk, err)
}

// checkKeys refuses keys the service does not allow, before any request,
// with a *RowError of op naming them.
func (t *Table[T]) checkKeys(op, partitionKey, rowKey string) error {
	if err := checkKey("PartitionKey", partitionKey); err != nil {
		return rowErr(op, t.name, partitionKey, rowKey, err)
	}
	return rowErr(op, t.name, partitionKey, rowKey, checkKey("RowKey", rowKey))
}

// rawBody returns the response body as the service sent it. aztables hands
// out a re-encoded copy of its own map[string]any, which turns the Double
// 2.0 into 2 and costs a second encoding; the raw body, captured through
// azcore's pipeline, keeps every value as stored.
func rawBody(resp *http.Response, fallback []byte) ([]byte, error) {
	if resp == nil {
		return fallback, nil
	}
	body, err := runtime.Payload(resp)
	if err != nil {
		return nil, err
	}
	return body, nil
}

// Insert adds e; an entity with the same keys is an error matching
// ErrAlreadyExists. The new ETag and Timestamp are written back into e.
//
// When the service's answer may be about a resent request (its reply to an
// earlier try was lost), Insert reads the entity back: stored with its
// write token, or exactly as sent, it reports success (e's ETag is then
// set only when the stored entity is still exactly e); stamped before
// the first try can have arrived, ErrAlreadyExists; otherwise
// ErrOutcomeUnknown.
func (t *Table[T]) Insert(ctx context.Context, e *T) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := t.okWrite(); err != nil {
		return err
	}
	t = t.bind(ctx, "", false)
	return t.withBody("Insert", e, func(body []byte, pk, rk string) error {
		w := &write{op: "Insert", kind: wInsert, pk: pk, rk: rk}
		return t.send(ctx, w, body, func(ctx context.Context, body []byte) (string, error) {
			return t.conn.writeEntity(ctx, OpInsert, pk, rk, "", body)
		}, e)
	})
}

// send writes body (with w's write token, or without any TkWrite) through
// do, settles the outcome and writes the new ETag back into e.
func (t *Table[T]) send(ctx context.Context, w *write, body []byte, do func(ctx context.Context, body []byte) (string, error), e *T) error {
	etag, err := t.sendOnly(ctx, w, body, do, true)
	if err != nil {
		return err
	}
	if e != nil {
		t.setWritten(e, azcore.ETag(etag))
	}
	return nil
}

// sendOnly is send without the ETag's write-back; without settle it
// returns the service's answer as is, and leaves w.call for the caller
// to settle (w.sent is then cleared: it lives in a pooled buffer).
func (t *Table[T]) sendOnly(ctx context.Context, w *write, body []byte, do func(ctx context.Context, body []byte) (string, error), settle bool) (string, error) {
	bp := bufPool.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 1<<20 {
			bufPool.Put(bp)
		}
	}()
	if w.kind == wConditional && !w.base.Known && w.base.ETag == "" {
		w.base = baseOf(t.shape, body, w.etag)
	}
	body, copied := w.withToken((*bp)[:0], body, t.tokenUse())
	if copied {
		*bp = body[:0]
	}
	w.sent = body
	cctx, call := pipeline.WithCall(ctx)
	w.call = call
	if w.settleAtOnce {
		call.StopResends()
	}
	etag, err := do(cctx, body)
	if err == nil {
		return etag, nil
	}
	err = wrapEntityErr(w.op, t.name, w.pk, w.rk, err)
	if !settle {
		w.sent = nil
		return "", err
	}
	applied, got, err := t.conn.settle(ctx, call, t.name, w, err)
	if !applied || err != nil {
		return "", err
	}
	return got, nil
}

// Upsert inserts e or, when it exists, merges or replaces it, whatever its
// ETag (InsertOrMerge / InsertOrReplace). The new ETag is written back into e.
// A resend repeats it harmlessly, so its answer is always the truth.
func (t *Table[T]) Upsert(ctx context.Context, e *T, mode UpdateMode) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := t.okWrite(); err != nil {
		return err
	}
	if _, err := mode.sdk(); err != nil {
		return err
	}
	if err := t.refuseMerge("Upsert", mode); err != nil {
		return err
	}
	t = t.bind(ctx, "", false)
	kind := OpUpsertReplace
	if mode == Merge {
		kind = OpUpsertMerge
	}
	return t.withBody("Upsert", e, func(body []byte, pk, rk string) error {
		if err := t.conn.addressable("Upsert", t.name, kind, pk, rk); err != nil {
			return err
		}
		w := &write{op: "Upsert", kind: wUpsert, pk: pk, rk: rk}
		return t.send(ctx, w, body, func(ctx context.Context, body []byte) (string, error) {
			return t.conn.writeEntity(ctx, kind, pk, rk, "", body)
		}, e)
	})
}

// Update merges or replaces an existing entity, on condition that its ETag is
// still e's: a concurrent change makes it fail with ErrPreconditionFailed,
// a missing entity with ErrNotFound. An e without an ETag is refused with
// an *ETagError (ErrNoETag) before any request; UpdateAny is the explicit
// unconditional form. The new ETag is written back into e.
//
// A 412 or 404 answered to a resent request is checked by reading the
// entity back: Update reports success when its write token is stored,
// the failure when the stored version was stamped before its first try can
// have arrived (or its chain shows another write won, see
// WithWriteTokens), and ErrOutcomeUnknown otherwise.
func (t *Table[T]) Update(ctx context.Context, e *T, mode UpdateMode) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := t.okWrite(); err != nil {
		return err
	}
	if e == nil {
		return errNilEntity[T]()
	}
	etag := t.etagOf(e)
	if etag == "" {
		pk, rk := t.keysOf(e)
		return &ETagError{Op: "Update", Table: t.name, PartitionKey: pk, RowKey: rk}
	}
	return t.update(ctx, "Update", e, mode, etag, wtoken.Base{})
}

// UpdateAny merges or replaces an existing entity whatever its ETag ("last
// writer wins"). It still fails with ErrNotFound when there is no entity
// (ErrOutcomeUnknown when that answers a resend: the first try may have
// updated an entity deleted since).
func (t *Table[T]) UpdateAny(ctx context.Context, e *T, mode UpdateMode) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := t.okWrite(); err != nil {
		return err
	}
	return t.update(ctx, "UpdateAny", e, mode, AnyETag, wtoken.Base{})
}

// update writes e on condition of etag. base is what the caller read of
// the version's chain (Modify), else found from e's body.
func (t *Table[T]) update(ctx context.Context, op string, e *T, mode UpdateMode, etag string, base wtoken.Base) error {
	if e == nil {
		return errNilEntity[T]()
	}
	if _, err := mode.sdk(); err != nil {
		return err
	}
	if err := t.refuseMerge(op, mode); err != nil {
		return err
	}
	t = t.bind(ctx, "", false)
	kind := OpReplace
	if mode == Merge {
		kind = OpMerge
	}
	return t.withBody(op, e, func(body []byte, pk, rk string) error {
		if err := t.conn.addressable(op, t.name, kind, pk, rk); err != nil {
			return err
		}
		w := &write{op: op, kind: wConditional, pk: pk, rk: rk, merge: mode == Merge, base: base, etag: etag}
		if etag == AnyETag {
			w.kind = wAny
		}
		return t.send(ctx, w, body, func(ctx context.Context, body []byte) (string, error) {
			return t.conn.writeEntity(ctx, kind, pk, rk, etag, body)
		}, e)
	})
}

// Delete removes the entity with these keys if its ETag is still etag
// (ErrPreconditionFailed otherwise; ErrNotFound when it is gone). Pass
// AnyETag to delete whatever its version; "" is an *ETagError (ErrNoETag).
// A 404 answered to a resent request is ErrOutcomeUnknown (the first try
// may have deleted it), as is a 412 unless the stored version predates
// the first try.
func (t *Table[T]) Delete(ctx context.Context, partitionKey, rowKey, etag string) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	return t.delete(ctx, "Delete", partitionKey, rowKey, etag)
}

func (t *Table[T]) delete(ctx context.Context, op, partitionKey, rowKey, etag string) error {
	if err := t.okWrite(); err != nil {
		return err
	}
	if etag == "" {
		return &ETagError{Op: op, Table: t.name, PartitionKey: partitionKey, RowKey: rowKey}
	}
	if err := t.checkKeys(op, partitionKey, rowKey); err != nil {
		return err
	}
	if err := t.conn.addressable(op, t.name, OpDelete, partitionKey, rowKey); err != nil {
		return err
	}
	w := &write{op: op, kind: wConditional, pk: partitionKey, rk: rowKey, delete: true}
	if etag == AnyETag {
		w.kind = wAny
	}
	cctx, call := pipeline.WithCall(ctx)
	_, err := t.conn.writeEntity(cctx, OpDelete, partitionKey, rowKey, etag, nil)
	_, _, err = t.conn.settle(ctx, call, t.name, w, wrapEntityErr(op, t.name, partitionKey, rowKey, err))
	return err
}

// DeleteEntity removes e on condition that its ETag is still e's.
func (t *Table[T]) DeleteEntity(ctx context.Context, e *T) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := t.okWrite(); err != nil {
		return err
	}
	if e == nil {
		return errNilEntity[T]()
	}
	pk, rk := t.keysOf(e)
	return t.delete(ctx, "DeleteEntity", pk, rk, t.etagOf(e))
}

// DeleteIfExists removes the entity with these keys whatever its version and
// reports whether there was one. A missing table is still an error
// (ErrTableNotFound). Deleting what is gone is not an error, so
// recovery steps can repeat it (design guide §3, §6.3). When the reply to
// a try that deleted it was lost, the resend finds nothing and whether
// this call deleted it is unknown: the entity is gone, and the error
// matches ErrOutcomeUnknown; repeat the call to settle it.
func (t *Table[T]) DeleteIfExists(ctx context.Context, partitionKey, rowKey string) (deleted bool, err error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return false, err
	}
	err = t.delete(ctx, "DeleteIfExists", partitionKey, rowKey, AnyETag)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

func errNilEntity[T any]() error {
	return &TypeError{Type: reflect.TypeFor[*T](), Reason: "nil entity"}
}

// withBody encodes e into a pooled buffer for the duration of send, which
// gets e's keys too. An e that cannot be encoded is a *RowError of op
// naming its keys.
func (t *Table[T]) withBody(op string, e *T, send func(body []byte, pk, rk string) error) error {
	if e == nil {
		return errNilEntity[T]()
	}
	pk, rk := t.keysOf(e)
	bp := bufPool.Get().(*[]byte)
	body, err := t.shape.encode((*bp)[:0], reflect.ValueOf(e).Elem())
	if err == nil {
		err = send(body, pk, rk)
	} else {
		err = rowErr(op, t.name, pk, rk, err)
	}
	if cap(body) <= 1<<20 {
		*bp = body[:0]
		bufPool.Put(bp)
	}
	return err
}

// tokenUse is what the table's writes do with TkWrite.
func (t *Table[T]) tokenUse() tokenUse {
	if t.tokens {
		return tokensNew
	}
	return tokensStrip
}
