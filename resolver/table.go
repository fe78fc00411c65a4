package resolver

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"slices"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// Table reads and writes the entities of one table through a Schema. Write
// methods take a pointer to a registered struct, stamped with its type on
// the way out, or a *entity.DynamicEntity, written as it stands; the new
// ETag (and the Timestamp it encodes) is written back into the value. Read
// methods return a *T for each row of a registered T and a
// *entity.DynamicEntity for each row of unknown type.
//
// Table is safe for concurrent use.
type Table struct {
	s    *Schema
	bags *entity.Table[entity.DynamicEntity]
	raw  *entity.Table[json.RawMessage] // reads: each row's object, decoded here
}

// NewTable returns a view of the client's table through s. Build the
// client with entity.ClientOptions (or with package account), so that lost
// replies are never misreported and transactions address every key,
// single quotes included; a write that needs it through another client
// fails with an *entity.ClientOptionsError before any request.
func NewTable(client *aztables.Client, s *Schema) (*Table, error) {
	if s == nil {
		return nil, errNilSchema
	}
	bags, err := entity.NewTable[entity.DynamicEntity](client)
	if err != nil {
		return nil, err
	}
	raw, err := entity.NewTable[json.RawMessage](client)
	if err != nil {
		return nil, err
	}
	return &Table{s: s, bags: bags, raw: raw}, nil
}

// NewTableOf returns a view of tbl's table through s: NewTable for a table
// already made, and the way to an encrypted one — tbl from package crypt's
// Table.Entity (a crypt.Table of entity.DynamicEntity whose Config.Encrypt
// chooses the properties to encrypt). Every write then encrypts, every
// read decrypts and checks, through tbl's protection. The discriminator
// property is read before a row is decoded, so a table that may encrypt
// it is refused (an error matching entity.ErrInvalid), as are, at
// their writes, registered types with fields tagged encrypt or sign
// (their bags are written under tbl's policy, not their tags: mark such
// properties with Config.Encrypt).
func NewTableOf(tbl *entity.Table[entity.DynamicEntity], s *Schema) (*Table, error) {
	if s == nil {
		return nil, errNilSchema
	}
	if tbl == nil {
		return nil, invalidArg("resolver: NewTableOf: nil *entity.Table")
	}
	if p := s.disc.property; p != "" && s.disc.mode != modeFunc {
		if _, maybe := tbl.Encrypts(p); maybe {
			return nil, invalidArg("resolver: NewTableOf: the table may encrypt the discriminator property " + p + " (package crypt's Config.Encrypt), which rows are told apart by before they are decoded: leave it out of Config.Encryptable")
		}
	}
	raw, err := entity.ViewAs[json.RawMessage](tbl)
	if err != nil {
		return nil, err
	}
	return &Table{s: s, bags: tbl, raw: raw}, nil
}

// unmarshal is the decoder of rows read from the table: through its
// protection, when it has one.
func (t *Table) unmarshal(ctx context.Context) unmarshal {
	if !t.bags.Protected() {
		return entity.Unmarshal
	}
	return func(body []byte, v any) error { return t.bags.Unmarshal(ctx, body, v) }
}

// errNilTable is returned by every method of a nil or zero *Table.
var errNilTable = invalidArg("resolver: nil or zero *resolver.Table (make one with resolver.NewTable)")

// ok checks t before a call.
func (t *Table) ok() error {
	if t == nil || t.s == nil || t.bags == nil || t.raw == nil {
		return errNilTable
	}
	return nil
}

// Schema returns the table's schema; nil for a nil Table.
func (t *Table) Schema() *Schema {
	if t == nil {
		return nil
	}
	return t.s
}

// Client returns the underlying aztables client; nil for a nil Table.
func (t *Table) Client() *aztables.Client {
	if t == nil {
		return nil
	}
	return t.bags.Client()
}

// Bags returns the table as plain property bags, bypassing the schema; nil
// for a nil Table.
func (t *Table) Bags() *entity.Table[entity.DynamicEntity] {
	if t == nil {
		return nil
	}
	return t.bags
}

// Insert adds v; an entity with the same keys is an error matching
// entity.ErrAlreadyExists.
func (t *Table) Insert(ctx context.Context, v any) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := t.ok(); err != nil {
		return err
	}
	bag, tg, err := t.s.prepare(v)
	if err != nil {
		return err
	}
	if err := t.bags.Insert(ctx, bag); err != nil {
		return err
	}
	tg.written(bag.ETag)
	return nil
}

// Upsert inserts v or merges or replaces the entity with its keys, whatever
// its version.
func (t *Table) Upsert(ctx context.Context, v any, mode entity.UpdateMode) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := t.ok(); err != nil {
		return err
	}
	bag, tg, err := t.s.prepare(v)
	if err != nil {
		return err
	}
	if err := t.bags.Upsert(ctx, bag, mode); err != nil {
		return err
	}
	tg.written(bag.ETag)
	return nil
}

// Update merges or replaces the existing entity on condition that its ETag
// is still v's: entity.ErrPreconditionFailed when another writer changed it,
// entity.ErrNotFound when it is gone, entity.ErrNoETag when v has none.
func (t *Table) Update(ctx context.Context, v any, mode entity.UpdateMode) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := t.ok(); err != nil {
		return err
	}
	bag, tg, err := t.s.prepare(v)
	if err != nil {
		return err
	}
	if err := t.bags.Update(ctx, bag, mode); err != nil {
		return err
	}
	tg.written(bag.ETag)
	return nil
}

// UpdateAny merges or replaces the existing entity whatever its version.
func (t *Table) UpdateAny(ctx context.Context, v any, mode entity.UpdateMode) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := t.ok(); err != nil {
		return err
	}
	bag, tg, err := t.s.prepare(v)
	if err != nil {
		return err
	}
	if err := t.bags.UpdateAny(ctx, bag, mode); err != nil {
		return err
	}
	tg.written(bag.ETag)
	return nil
}

// Delete removes the entity with these stored keys if its ETag is still
// etag, as entity.Table.Delete: entity.AnyETag deletes any version, "" is
// entity.ErrNoETag.
func (t *Table) Delete(ctx context.Context, partitionKey, rowKey, etag string) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := t.ok(); err != nil {
		return err
	}
	return t.bags.Delete(ctx, partitionKey, rowKey, etag)
}

// DeleteEntity removes v's entity on condition that its ETag is still v's
// (entity.ErrNoETag when v has none).
func (t *Table) DeleteEntity(ctx context.Context, v any) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := t.ok(); err != nil {
		return err
	}
	pk, rk, etag, err := t.s.address(v)
	if err != nil {
		return err
	}
	return t.bags.Delete(ctx, pk, rk, etag)
}

// DeleteIfExists removes the entity with these stored keys whatever its
// version, and reports whether there was one.
func (t *Table) DeleteIfExists(ctx context.Context, partitionKey, rowKey string) (bool, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return false, err
	}
	if err := t.ok(); err != nil {
		return false, err
	}
	return t.bags.DeleteIfExists(ctx, partitionKey, rowKey)
}

// Get reads the entity with these stored keys (with a RowKey prefix, the
// full key: RowKeyOf builds it; Get[T] takes the id). A missing entity is a
// *RowError matching entity.ErrNotFound.
func (t *Table) Get(ctx context.Context, partitionKey, rowKey string) (any, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	v, _, err := t.get(ctx, partitionKey, rowKey)
	return v, err
}

// get reads one row and returns the ETag it was read with.
func (t *Table) get(ctx context.Context, partitionKey, rowKey string) (any, string, error) {
	if err := t.ok(); err != nil {
		return nil, "", err
	}
	body, err := t.raw.Get(ctx, partitionKey, rowKey)
	if errors.Is(err, entity.ErrNotFound) {
		return nil, "", &RowError{PartitionKey: partitionKey, RowKey: rowKey, Err: err}
	}
	if err != nil {
		return nil, "", err
	}
	v, etag, err := t.read(ctx, body, true)
	if err != nil {
		return nil, "", err
	}
	if etag == "" {
		h, _ := peek(body, wantETag, "")
		etag, _ = h.etag.text()
	}
	return v, etag, nil
}

// read decodes one row and, when the schema asks for it and the row is
// complete, writes an upgraded row back. For an upgraded row it returns the
// ETag the entity has now; otherwise "".
func (t *Table) read(ctx context.Context, body []byte, complete bool) (any, string, error) {
	v, info, err := t.s.decode(body, t.unmarshal(ctx))
	if err != nil {
		return nil, "", err
	}
	if info.upgraded && t.s.writeBack && complete && info.etag != "" {
		etag, err := t.writeBack(ctx, v, info.etag)
		return v, etag, err
	}
	return v, info.etag, nil
}

// writeBack replaces the row an upgraded value came from, on condition
// that it is unchanged since it was read, and returns the entity's ETag.
func (t *Table) writeBack(ctx context.Context, v any, etag string) (string, error) {
	bag, tg, err := t.s.prepare(v)
	if err != nil {
		return "", err
	}
	bag.ETag = etag
	err = t.bags.Update(ctx, bag, entity.Replace)
	switch {
	case err == nil:
		tg.written(bag.ETag)
		return bag.ETag, nil
	case errors.Is(err, entity.ErrPreconditionFailed), errors.Is(err, entity.ErrNotFound):
		return etag, nil // changed or deleted since the read: the value is still what was read
	}
	return "", err
}

// query adds the discriminator's property to a projection.
func (t *Table) query(q entity.Query) entity.Query {
	p := t.s.disc.property
	if len(q.Select) == 0 || p == "" || t.s.disc.mode == modeFunc || slices.Contains(q.Select, p) {
		return q
	}
	q.Select = append(slices.Clip(q.Select), p)
	return q
}

// Query runs q and yields each row as its registered Go type (a *T), or as
// a *entity.DynamicEntity when its type is unknown, in the service's order,
// following continuations until the rows or q.Limit run out. A projection
// (q.Select) fills only the named fields; the discriminator property is
// added to it. The first error is yielded and ends the sequence; in a
// Strict schema a row of unknown type is such an error.
func (t *Table) Query(ctx context.Context, q entity.Query) iter.Seq2[any, error] {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(any, error) bool) { yield(nil, err) }
	}
	return func(yield func(any, error) bool) {
		if err := t.ok(); err != nil {
			yield(nil, err)
			return
		}
		complete := len(q.Select) == 0
		for body, err := range t.raw.Query(ctx, t.query(q)) {
			if err != nil {
				yield(nil, err)
				return
			}
			v, _, err := t.read(ctx, body, complete)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(v, nil) {
				return
			}
		}
	}
}

// QueryPage reads one page of q from token ("" for the first) and decodes
// each row as Query does. Page.Next resumes the query later, in this
// process or another; it is "" when the query is complete. A page may be
// empty and still have a Next.
func (t *Table) QueryPage(ctx context.Context, q entity.Query, token string) (entity.Page[any], error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return entity.Page[any]{}, err
	}
	if err := t.ok(); err != nil {
		return entity.Page[any]{}, err
	}
	raw, err := t.raw.QueryPage(ctx, t.query(q), token)
	if err != nil {
		return entity.Page[any]{}, err
	}
	items := make([]any, len(raw.Items))
	complete := len(q.Select) == 0
	for i, body := range raw.Items {
		if items[i], _, err = t.read(ctx, body, complete); err != nil {
			return entity.Page[any]{}, err
		}
	}
	return entity.Page[any]{Items: items, Next: raw.Next}, nil
}

// Modify reads the entity with these stored keys, lets change edit the
// value read (a *T, or a *entity.DynamicEntity for a row of unknown type),
// and writes it back with opts.Mode (0 means entity.Merge) on condition
// that nobody wrote the entity in between; when somebody did, it starts
// again from a fresh read, with backoff, at most opts.Retry.Attempts times
// (then entity.ErrContention). change must not change the keys; it may
// return an error to give up, returned as is. The value written is
// returned.
//
// This is the guide's update of an entity through the property bag (§7):
// read a department of a type this program does not know, add one to
// EmployeeCount, merge it back, guarded by its ETag.
func (t *Table) Modify(ctx context.Context, partitionKey, rowKey string, change func(v any) error, opts entity.ModifyOptions) (any, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	var out any
	if err := t.ok(); err != nil {
		return nil, err
	}
	if change == nil {
		return nil, invalidArg("resolver: nil change function")
	}
	mode := opts.Mode
	if mode == 0 {
		mode = entity.Merge
	}
	err := opts.Retry.Retry(ctx, func(ctx context.Context) error {
		v, etag, err := t.get(ctx, partitionKey, rowKey)
		if err != nil {
			return err
		}
		if etag == "" {
			return entity.ErrNoETag
		}
		if err := change(v); err != nil {
			return err
		}
		bag, tg, err := t.s.prepare(v)
		if err != nil {
			return err
		}
		bag.ETag = etag
		if err := t.bags.Update(ctx, bag, mode); err != nil {
			return err
		}
		tg.written(bag.ETag)
		out = v
		return nil
	})
	return out, err
}
