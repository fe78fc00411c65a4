package entity

import (
	"context"
	"errors"
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
// its `table` tags, or DynamicEntity for entities of any shape. It is safe
// for concurrent use.
type Table[T any] struct {
	client *aztables.Client
	name   string
	shape  shape
	// readFormat is the metadata level asked for on reads: none when T needs
	// no annotations and no ETag (smaller, faster bodies), else minimal.
	readFormat aztables.MetadataFormat
}

// NewTable returns a typed view of the table client's table. It fails with a
// *TypeError when T cannot be mapped, before any request.
func NewTable[T any](client *aztables.Client) (*Table[T], error) {
	return newTable[T](client, "")
}

// NewTableFromService returns a typed view of the named table of a service.
func NewTableFromService[T any](svc *aztables.ServiceClient, name string) (*Table[T], error) {
	return newTable[T](svc.NewClient(name), name)
}

// NewTableFromConnectionString connects with an account connection string
// (account key or SAS) to the named table.
func NewTableFromConnectionString[T any](connectionString, name string, opts *aztables.ClientOptions) (*Table[T], error) {
	svc, err := aztables.NewServiceClientFromConnectionString(connectionString, opts)
	if err != nil {
		return nil, err
	}
	return NewTableFromService[T](svc, name)
}

// NewTableWithCredential connects to the named table of the account at
// serviceURL (https://ACCOUNT.table.core.windows.net/) with a Microsoft Entra
// credential, such as azidentity.NewDefaultAzureCredential's.
func NewTableWithCredential[T any](serviceURL, name string, cred azcore.TokenCredential, opts *aztables.ClientOptions) (*Table[T], error) {
	svc, err := aztables.NewServiceClient(serviceURL, cred, opts)
	if err != nil {
		return nil, err
	}
	return NewTableFromService[T](svc, name)
}

func newTable[T any](client *aztables.Client, name string) (*Table[T], error) {
	if client == nil {
		return nil, errors.New("tablekit: nil *aztables.Client")
	}
	sh, err := shapeOf(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	return &Table[T]{client: client, name: name, shape: sh, readFormat: sh.readFormat()}, nil
}

// Client returns the underlying aztables client, for what tablekit does not wrap.
func (t *Table[T]) Client() *aztables.Client { return t.client }

// Name returns the table name when it is known (it is not for NewTable).
func (t *Table[T]) Name() string { return t.name }

// CreateTable creates the table; ErrAlreadyExists when it exists.
func (t *Table[T]) CreateTable(ctx context.Context) error {
	_, err := t.client.CreateTable(ctx, nil)
	return wrapErr("CreateTable", t.name, err)
}

// CreateTableIfNotExists creates the table unless it exists.
func (t *Table[T]) CreateTableIfNotExists(ctx context.Context) error {
	err := t.CreateTable(ctx)
	if errors.Is(err, ErrAlreadyExists) {
		return nil
	}
	return err
}

// DeleteTable deletes the table and every entity in it (design guide §6.8).
func (t *Table[T]) DeleteTable(ctx context.Context) error {
	_, err := t.client.Delete(ctx, nil)
	return wrapErr("DeleteTable", t.name, err)
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
// A missing entity is an error matching ErrNotFound. Empty keys, which the
// service allows and aztables' GetEntity refuses, are read with a query.
func (t *Table[T]) Get(ctx context.Context, partitionKey, rowKey string) (T, error) {
	var out T
	body, etag, err := t.getRaw(ctx, partitionKey, rowKey)
	if err != nil {
		return out, err
	}
	rv := reflect.ValueOf(&out).Elem()
	if err := t.shape.decode(body, rv); err != nil {
		return out, err
	}
	if etag != "" && t.shape.etagValue(rv) == "" { // no metadata: the header has it
		t.shape.setWritten(rv, etag)
	}
	return out, nil
}

// GetRaw is Get returning the entity's JSON body as the service sent it,
// undecoded, in the table's read format (minimal metadata for
// Table[DynamicEntity], which carries odata.etag and every type): for
// decoders that choose the Go type per entity (package resolver).
func (t *Table[T]) GetRaw(ctx context.Context, partitionKey, rowKey string) ([]byte, error) {
	body, _, err := t.getRaw(ctx, partitionKey, rowKey)
	return body, err
}

func (t *Table[T]) getRaw(ctx context.Context, partitionKey, rowKey string) (body []byte, etag string, err error) {
	if err := checkKey("PartitionKey", partitionKey); err != nil {
		return nil, "", err
	}
	if err := checkKey("RowKey", rowKey); err != nil {
		return nil, "", err
	}
	if partitionKey == "" || rowKey == "" {
		q := Query{Filter: filter.And(filter.PK(partitionKey), filter.RK(rowKey)), Limit: 1}
		for body, err := range t.QueryRaw(ctx, q) {
			return body, "", err
		}
		return nil, "", &ServiceError{Op: "Get", Table: t.name, StatusCode: 404, Code: "ResourceNotFound", Err: errors.New("the specified resource does not exist")}
	}
	var raw *http.Response
	resp, err := t.client.GetEntity(policy.WithCaptureResponse(ctx, &raw), partitionKey, rowKey, &aztables.GetEntityOptions{Format: &t.readFormat})
	if err != nil {
		return nil, "", wrapErr("Get", t.name, err)
	}
	body, err = rawBody(raw, resp.Value)
	return body, string(resp.ETag), err
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
func (t *Table[T]) Insert(ctx context.Context, e *T) error {
	return t.withBody(e, func(body []byte) error {
		resp, err := t.client.AddEntity(ctx, body, &aztables.AddEntityOptions{Format: &formatNone})
		if err != nil {
			return wrapErr("Insert", t.name, err)
		}
		t.setWritten(e, resp.ETag)
		return nil
	})
}

var formatNone = aztables.MetadataFormatNone

// Upsert inserts e or, when it exists, merges or replaces it, whatever its
// ETag (InsertOrMerge / InsertOrReplace). The new ETag is written back into e.
func (t *Table[T]) Upsert(ctx context.Context, e *T, mode UpdateMode) error {
	m, err := mode.sdk()
	if err != nil {
		return err
	}
	if e != nil {
		if pk, _ := t.keysOf(e); pk == "" {
			return errEmptyPartitionKey("Upsert")
		}
	}
	return t.withBody(e, func(body []byte) error {
		resp, err := t.client.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: m})
		if err != nil {
			return wrapErr("Upsert", t.name, err)
		}
		t.setWritten(e, resp.ETag)
		return nil
	})
}

// Update merges or replaces an existing entity, on condition that its ETag is
// still e's: a concurrent change makes it fail with ErrPreconditionFailed,
// a missing entity with ErrNotFound. An e without an ETag is refused with
// ErrNoETag before any request; UpdateAny is the explicit unconditional
// form. The new ETag is written back into e.
func (t *Table[T]) Update(ctx context.Context, e *T, mode UpdateMode) error {
	if e == nil {
		return errNilEntity[T]()
	}
	etag := t.etagOf(e)
	if etag == "" {
		return ErrNoETag
	}
	return t.update(ctx, e, mode, etag)
}

// UpdateAny merges or replaces an existing entity whatever its ETag ("last
// writer wins"). It still fails with ErrNotFound when there is no entity.
func (t *Table[T]) UpdateAny(ctx context.Context, e *T, mode UpdateMode) error {
	return t.update(ctx, e, mode, AnyETag)
}

func (t *Table[T]) update(ctx context.Context, e *T, mode UpdateMode, etag string) error {
	if e == nil {
		return errNilEntity[T]()
	}
	m, err := mode.sdk()
	if err != nil {
		return err
	}
	if pk, _ := t.keysOf(e); pk == "" {
		return errEmptyPartitionKey("Update")
	}
	return t.withBody(e, func(body []byte) error {
		match := azcore.ETag(etag)
		resp, err := t.client.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{UpdateMode: m, IfMatch: &match})
		if err != nil {
			return wrapErr("Update", t.name, err)
		}
		t.setWritten(e, resp.ETag)
		return nil
	})
}

// errEmptyPartitionKey: aztables v1.4.1 builds no request for an update or
// delete addressed by an empty PartitionKey, although the service allows one.
func errEmptyPartitionKey(op string) error {
	return &ValidationError{Property: "PartitionKey", Rule: RuleKey, Limit: "non-empty for " + op + " (aztables cannot address an empty PartitionKey)", Value: `""`}
}

// Delete removes the entity with these keys if its ETag is still etag
// (ErrPreconditionFailed otherwise; ErrNotFound when it is gone). Pass
// AnyETag to delete whatever its version.
func (t *Table[T]) Delete(ctx context.Context, partitionKey, rowKey, etag string) error {
	if etag == "" {
		return ErrNoETag
	}
	if err := checkKey("PartitionKey", partitionKey); err != nil {
		return err
	}
	if err := checkKey("RowKey", rowKey); err != nil {
		return err
	}
	if partitionKey == "" {
		return errEmptyPartitionKey("Delete")
	}
	match := azcore.ETag(etag)
	_, err := t.client.DeleteEntity(ctx, partitionKey, rowKey, &aztables.DeleteEntityOptions{IfMatch: &match})
	return wrapErr("Delete", t.name, err)
}

// DeleteEntity removes e on condition that its ETag is still e's.
func (t *Table[T]) DeleteEntity(ctx context.Context, e *T) error {
	if e == nil {
		return errNilEntity[T]()
	}
	pk, rk := t.keysOf(e)
	return t.Delete(ctx, pk, rk, t.etagOf(e))
}

// DeleteIfExists removes the entity with these keys whatever its version and
// reports whether there was one. A missing table is still an error
// (ErrTableNotFound). Deleting what is gone is not an error, so
// recovery steps can repeat it (design guide §3, §6.3).
func (t *Table[T]) DeleteIfExists(ctx context.Context, partitionKey, rowKey string) (deleted bool, err error) {
	err = t.Delete(ctx, partitionKey, rowKey, AnyETag)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

func errNilEntity[T any]() error {
	return &TypeError{Type: reflect.TypeFor[*T](), Reason: "nil entity"}
}

// withBody encodes e into a pooled buffer for the duration of send.
func (t *Table[T]) withBody(e *T, send func(body []byte) error) error {
	if e == nil {
		return errNilEntity[T]()
	}
	bp := bufPool.Get().(*[]byte)
	body, err := t.shape.encode((*bp)[:0], reflect.ValueOf(e).Elem())
	if err == nil {
		err = send(body)
	}
	if cap(body) <= 1<<20 {
		*bp = body[:0]
		bufPool.Put(bp)
	}
	return err
}
