package entity

import (
	"context"
	"iter"
	"maps"
	"reflect"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity/internal/protect"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/wtoken"
)

// A protected Table is what package crypt's Table.Entity returns: an
// *entity.Table[T] whose every call encrypts and decrypts under a crypt
// policy, so that everything that takes an *entity.Table[T] (every
// pattern, backup, resolver) takes an encrypted table unchanged. The
// protection is bound at each call — the call's context reaches the
// key-encryption key — and covers every path a call has: Get, Insert,
// Upsert, Update, UpdateAny, Modify, Query, QueryPage, QueryPartitions,
// BulkWrite, the transactions of NewBatch and Submit, the views ViewAs
// makes, and the conversions Unmarshal, ToDynamic, FromDynamic, Seal and
// Open. What the format cannot take is refused before any request: a
// merge (the entity's signature covers its protected properties as a
// whole), a filter on an encrypted property without a beacon, an entity
// added to a transaction by a view without the protection.

// guardedCopy is the hook's way to a copy of t that binds g at every call.
func (t *Table[T]) guardedCopy(g protect.Guard) any {
	v := *t
	v.guard = g
	v.readFormat = aztables.MetadataFormatMinimal // the scheme needs every annotation
	return &v
}

// Protected reports whether t encrypts or signs what it writes and checks
// what it reads (a table of package crypt's Table.Entity, or a view of one
// made by ViewAs or WithWriteTokens).
func (t *Table[T]) Protected() bool { return t != nil && t.guard != nil }

// Encrypts reports whether t stores the property encrypted in every entity
// (always: a field tagged encrypt of the protected entity type) or may in
// some (maybe: also a property crypt's Config.Encrypt may choose). Both are
// false for a table without protection. Patterns that copy a property out
// of an entity check it at construction.
func (t *Table[T]) Encrypts(property string) (always, maybe bool) {
	if t == nil || t.guard == nil {
		return false, false
	}
	return t.guard.Encrypts(property)
}

// Beacon returns the equality beacon t stores beside the encrypted
// property's value (package crypt's Config.Beacons): a keyed hash of the
// value, equal for equal values, which is what an index of an encrypted
// property keys its entries by instead of the value, and what a lookup
// computes from the value looked up before reading the candidates back
// through t (which decrypts them, so that a lookup checks each against the
// value). value is any value the codec takes for the property (an int is
// an Int64, as stored). ok is false when t does not encrypt the property:
// its value is stored in clear, to be indexed as it is. A property t
// encrypts without a beacon, or encrypts for some entities only
// (Config.Encrypt), is an error matching ErrInvalid: no index can find its
// values.
func (t *Table[T]) Beacon(property string, value any) (beacon []byte, ok bool, err error) {
	if err := t.ok(); err != nil {
		return nil, false, err
	}
	if t.guard == nil {
		return nil, false, nil
	}
	return t.guard.Beacon(property, value)
}

// bind returns t bound to one call's protection: a copy whose shape goes
// through the guard's scheme for ctx; t itself without a guard. A
// Table[json.RawMessage] reads bodies as stored and keeps its shape.
func (t *Table[T]) bind(ctx context.Context, op string, beaconed bool) *Table[T] {
	if t == nil || t.guard == nil {
		return t
	}
	v := *t
	v.guard = nil
	if _, raw := t.shape.(rawShape); !raw {
		v.shape = protectedShape{t.shape, t.guard.Bind(ctx, op, beaconed)}
	}
	return &v
}

// refuseMerge refuses a merge on a protected table.
func (t *Table[T]) refuseMerge(op string, mode UpdateMode) error {
	if t != nil && t.guard != nil && mode == Merge {
		return t.guard.Refuse(op + " with Merge")
	}
	return nil
}

// bindQuery is bind for a query, and the query as the service gets it:
// the guard checks and translates its filter and select.
func (t *Table[T]) bindQuery(ctx context.Context, op string, q Query, partitions []string, fanOut bool) (*Table[T], Query, error) {
	if t == nil || t.guard == nil {
		return t, q, nil
	}
	out, beaconed, err := t.guard.Query(q, partitions, fanOut)
	if err != nil {
		return nil, q, err
	}
	return t.bind(ctx, op, beaconed), out.(Query), nil
}

func failed[T any](err error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		yield(zero, err)
	}
}

// ViewAs returns a view of t's table as entities of type U: the same
// client, name and protection (a view of a protected table encrypts and
// decrypts the properties the protected type encrypts, and those the
// crypt policy chooses, whatever U is), without write tokens
// (WithWriteTokens adds them). A pattern that needs the rows of a table
// as property bags, or as sent (json.RawMessage), makes them with ViewAs
// rather than NewTable on t.Client(), which would drop the protection.
// A nil or zero t is an error, as is a U that cannot be mapped
// (*TypeError).
func ViewAs[U, T any](t *Table[T]) (*Table[U], error) {
	if err := t.ok(); err != nil {
		return nil, err
	}
	sh, err := shapeOf(reflect.TypeFor[U]())
	if err != nil {
		return nil, err
	}
	v := &Table[U]{client: t.client, conn: t.conn, name: t.name, shape: sh, readFormat: sh.readFormat(), guard: t.guard}
	if t.guard != nil {
		v.readFormat = aztables.MetadataFormatMinimal
	}
	return v, nil
}

// Unmarshal decodes an entity body read from t's table (by any view of
// it, a Table[json.RawMessage] included) into v, as package-level
// Unmarshal does, through t's protection: a protected table decrypts and
// checks it (ctx reaches the key-encryption key), and on failure sets *v
// to its zero value, never a partly filled one. Without protection it is
// Unmarshal(data, v).
func (t *Table[T]) Unmarshal(ctx context.Context, data []byte, v any) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if t == nil || t.guard == nil {
		return Unmarshal(data, v)
	}
	err := protectedUnmarshal(data, v, t.guard.Bind(ctx, "Unmarshal", false))
	if err != nil {
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
			rv.Elem().SetZero()
		}
	}
	return err
}

// ToDynamic is package-level ToDynamic, and on a protected table also for
// entity types with encrypted or signed fields: the bag holds their
// values in clear, in memory, for a write through t or a view of it
// (ViewAs), which encrypts them. Without protection such types are
// refused, as by ToDynamic.
func (t *Table[T]) ToDynamic(v any) (*DynamicEntity, error) {
	if t == nil || t.guard == nil {
		return ToDynamic(v)
	}
	return toDynamicWith(v, clearScheme{})
}

// FromDynamic is package-level FromDynamic, and on a protected table also
// for entity types with encrypted or signed fields (see ToDynamic).
func (t *Table[T]) FromDynamic(d *DynamicEntity, v any) error {
	if t == nil || t.guard == nil {
		return FromDynamic(d, v)
	}
	return fromDynamicWith(d, v, clearScheme{})
}

// Seal returns the property bag d (in clear, as ToDynamic makes it) as t
// stores it: on a protected table its encrypted properties as
// ciphertexts (Edm.Binary) and the scheme's own properties added, bound to
// d's keys, without the limits of one stored entity. It is for a pattern
// that stores one logical entity as several rows (package wide): what it
// spreads over the rows is ciphertext, and Open reads the assembled bag
// back. Without protection it returns a copy of d.
func (t *Table[T]) Seal(ctx context.Context, d *DynamicEntity) (*DynamicEntity, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	if d == nil {
		return nil, &TypeError{Type: reflect.TypeOf(d), Reason: "nil pointer"}
	}
	if t == nil || t.guard == nil {
		c := *d
		c.Properties = maps.Clone(d.Properties)
		return &c, nil
	}
	return toDynamicWith(d, t.guard.Bind(ctx, "", false))
}

// Open reverses Seal: the bag in clear, decrypted and checked (ctx
// reaches the key-encryption key). Without protection it returns a copy
// of d.
func (t *Table[T]) Open(ctx context.Context, d *DynamicEntity) (*DynamicEntity, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	if t == nil || t.guard == nil {
		return t.Seal(ctx, d)
	}
	if d == nil {
		return nil, &TypeError{Type: reflect.TypeOf(d), Reason: "nil pointer"}
	}
	out := &DynamicEntity{}
	if err := fromDynamicWith(d, out, t.guard.Bind(ctx, "Open", false)); err != nil {
		return nil, err
	}
	return out, nil
}

// toDynamicWith is ToDynamic through the scheme s.
func toDynamicWith(v any, s protect.Scheme) (*DynamicEntity, error) {
	rv, sh, err := entityValue(v)
	if err != nil {
		return nil, err
	}
	bp := bufPool.Get().(*[]byte)
	body, err := encodeWith((*bp)[:0], sh, rv, s, true)
	d := &DynamicEntity{}
	if err == nil {
		err = d.decode(body)
	}
	if cap(body) <= 1<<20 {
		clear(body) // it may hold values in clear
		*bp = body[:0]
		bufPool.Put(bp)
	}
	if err != nil {
		return nil, err
	}
	sys := sh.system(rv)
	d.ETag, d.Timestamp = sys.ETag, sys.Timestamp
	return d, nil
}

// fromDynamicWith is FromDynamic through the scheme s.
func fromDynamicWith(d *DynamicEntity, v any, s protect.Scheme) error {
	if d == nil {
		return &TypeError{Type: reflect.TypeOf(d), Reason: "nil pointer"}
	}
	rv, sh, err := entityValue(v)
	if err != nil {
		return err
	}
	err = logicalBody(d, func(body []byte) error { return protectedShape{sh, s}.decode(body, rv) })
	if err != nil {
		rv.SetZero()
		return err
	}
	sh.setSystem(rv, System{PartitionKey: d.PartitionKey, RowKey: d.RowKey, ETag: d.ETag, Timestamp: d.Timestamp})
	return nil
}

// clearScheme protects nothing: through it the codec converts, in
// memory, entity types whose fields are tagged encrypt or sign, which it
// otherwise refuses to encode or decode (Table.ToDynamic, FromDynamic).
type clearScheme struct{}

func (clearScheme) Writer(string, string) (protect.Writer, error) { return clearWriter{}, nil }
func (clearScheme) Reader([]byte, []byte, protect.Props) (protect.Reader, error) {
	return clearReader{}, nil
}
func (clearScheme) Reserved(string) bool { return false }

type clearWriter struct{}

func (clearWriter) Mode(string, protect.Mode) (protect.Mode, error) { return 0, nil }
func (clearWriter) Property(string, protect.Mode, uint8, []byte, any) ([]byte, error) {
	return nil, nil
}
func (clearWriter) Finish() ([]protect.Property, error) { return nil, nil }
func (clearWriter) Close()                              {}

type clearReader struct{}

func (clearReader) Mode([]byte, protect.Mode) (protect.Mode, error) { return 0, nil }
func (clearReader) Open([]byte) (uint8, []byte, error)              { return 0, nil, nil }
func (clearReader) Close()                                          {}

// isProtectedType reports whether v is an entity of a type with fields
// tagged encrypt or sign.
func isProtectedType(v any) bool {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return false
	}
	p, err := structCodecOf(rv.Type())
	return err == nil && p.protected
}

// sizingWriter stands for package crypt in Validate: it keeps the tags'
// modes, so that errors about encrypted values withhold them, and counts
// each encrypted value at its ciphertext's size (a version byte, a
// 12-byte nonce, the EDM type and a 16-byte tag besides the value).
type sizingWriter struct{}

func (sizingWriter) Mode(_ string, tagged protect.Mode) (protect.Mode, error) {
	return tagged &^ protect.Beacon, nil
}

func (sizingWriter) Property(_ string, mode protect.Mode, _ uint8, text []byte, _ any) ([]byte, error) {
	if mode&protect.Encrypt == 0 {
		return nil, nil
	}
	return make([]byte, 1+12+1+len(text)+16), nil
}

func (sizingWriter) Finish() ([]protect.Property, error) { return nil, nil }
func (sizingWriter) Close()                              {}

// fenceScheme encodes a merge in a protected table's transaction: one that
// carries no property but the write token (a fence, conditional on the
// entity's ETag) leaves the entity's protected properties and their
// metadata as they are, so it goes out as it is; any other is refused, as
// every merge of a protected entity is.
type fenceScheme struct{ g protect.Guard }

func (s fenceScheme) Writer(string, string) (protect.Writer, error) { return fenceWriter(s), nil }
func (fenceScheme) Reader([]byte, []byte, protect.Props) (protect.Reader, error) {
	return clearReader{}, nil
}
func (fenceScheme) Reserved(string) bool { return false }

type fenceWriter struct{ g protect.Guard }

func (w fenceWriter) Mode(name string, _ protect.Mode) (protect.Mode, error) {
	if name == wtoken.Property {
		return 0, nil
	}
	return 0, w.g.Refuse("a transaction's merge of property " + name + " (a merge of no property but the write token, a fence, is taken)")
}
func (fenceWriter) Property(string, protect.Mode, uint8, []byte, any) ([]byte, error) {
	return nil, nil
}
func (fenceWriter) Finish() ([]protect.Property, error) { return nil, nil }
func (fenceWriter) Close()                              {}
