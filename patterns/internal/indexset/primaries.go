package indexset

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"maps"

	"github.com/tablekit/tablekit/entity"
)

// Primaries is where an index Set reads, decodes and encodes its
// primaries: every primary row the engine and the two index packages read
// (a write's read, a worker's, Check's scan, a lookup's) comes from Get or
// Query and is decoded by Decode, and every primary they write is the
// property bag Encode makes. (A check's probe of whether a partition
// holds primaries reads their RowKeys alone, which are never encrypted.) The Set's own table is [TablePrimaries],
// entity's JSON; an encrypted table plugs in here, decrypting in Decode
// and encrypting in Encode, and nothing else of a Set changes: what a Set
// copies into its entries, writes and compares is the properties as
// stored (ciphertext, for an encrypted table), and what its index
// functions see is T.
type Primaries[T any] interface {
	// Name is the name of the primaries' table.
	Name() string
	// Get returns the row pk/rk as the service sent it, or an error
	// matching entity.ErrNotFound.
	Get(ctx context.Context, pk, rk string) ([]byte, error)
	// Query returns the rows q selects, as the service sent them: the
	// primaries and every other entity of their partitions (entries,
	// lists, tablekit's own).
	Query(ctx context.Context, q entity.Query) iter.Seq2[json.RawMessage, error]
	// Decode decodes a row Get or Query returned: as T (ETag included),
	// and as the properties stored, keys, ETag and Timestamp included.
	// ctx reaches an encrypted table's key-encryption key.
	Decode(ctx context.Context, raw []byte) (T, entity.DynamicEntity, error)
	// Encode returns the properties e is stored with.
	Encode(ctx context.Context, e *T) (*entity.DynamicEntity, error)
}

// TablePrimaries is the Primaries of an entity.Table: T as entity stores
// it.
type TablePrimaries[T any] struct {
	raw *entity.Table[json.RawMessage]
}

// NewTablePrimaries returns the Primaries of table's entities.
func NewTablePrimaries[T any](table *entity.Table[T]) (*TablePrimaries[T], error) {
	raw, err := entity.NewTable[json.RawMessage](table.Client())
	if err != nil {
		return nil, err
	}
	return &TablePrimaries[T]{raw: raw}, nil
}

// Name is the table's name.
func (p *TablePrimaries[T]) Name() string { return p.raw.Name() }

// Get reads pk/rk as sent.
func (p *TablePrimaries[T]) Get(ctx context.Context, pk, rk string) ([]byte, error) {
	return p.raw.Get(ctx, pk, rk)
}

// Query reads q's rows as sent.
func (p *TablePrimaries[T]) Query(ctx context.Context, q entity.Query) iter.Seq2[json.RawMessage, error] {
	return p.raw.Query(ctx, q)
}

// Decode decodes raw once, as a property bag, and makes T of it.
func (p *TablePrimaries[T]) Decode(_ context.Context, raw []byte) (e T, bag entity.DynamicEntity, err error) {
	if err = entity.Unmarshal(raw, &bag); err != nil {
		return e, bag, err
	}
	err = entity.FromDynamic(&bag, &e)
	return e, bag, err
}

// Encode is entity.ToDynamic.
func (p *TablePrimaries[T]) Encode(_ context.Context, e *T) (*entity.DynamicEntity, error) {
	return entity.ToDynamic(e)
}

// ProtectedPrimaries is the Primaries of a protected table (package
// crypt's Table.Entity): rows read as stored, through a view of the table
// that keeps its protection; Decode decrypts and checks them, and Encode
// seals an entity as the table stores it (its encrypted properties as
// ciphertexts bound to its keys, the scheme's own properties added), so
// that the Set's writes of the bag, through a table without protection,
// store what the protected table would.
type ProtectedPrimaries[T any] struct {
	t   *entity.Table[T]
	raw *entity.Table[json.RawMessage]
}

// NewProtectedPrimaries returns the Primaries of the protected table's
// entities.
func NewProtectedPrimaries[T any](table *entity.Table[T]) (*ProtectedPrimaries[T], error) {
	raw, err := entity.ViewAs[json.RawMessage](table)
	if err != nil {
		return nil, err
	}
	return &ProtectedPrimaries[T]{t: table, raw: raw}, nil
}

// Name is the table's name.
func (p *ProtectedPrimaries[T]) Name() string { return p.raw.Name() }

// Get reads pk/rk as stored.
func (p *ProtectedPrimaries[T]) Get(ctx context.Context, pk, rk string) ([]byte, error) {
	return p.raw.Get(ctx, pk, rk)
}

// Query reads q's rows as stored.
func (p *ProtectedPrimaries[T]) Query(ctx context.Context, q entity.Query) iter.Seq2[json.RawMessage, error] {
	return p.raw.Query(ctx, q)
}

// Decode decodes raw as the properties stored (ciphertexts included), and
// decrypts and checks it as T.
func (p *ProtectedPrimaries[T]) Decode(ctx context.Context, raw []byte) (e T, bag entity.DynamicEntity, err error) {
	if err = entity.Unmarshal(raw, &bag); err != nil {
		return e, bag, err
	}
	err = p.t.Unmarshal(ctx, raw, &e)
	return e, bag, err
}

// Encode seals e as the table stores it.
func (p *ProtectedPrimaries[T]) Encode(ctx context.Context, e *T) (*entity.DynamicEntity, error) {
	d, err := p.t.ToDynamic(e)
	if err != nil {
		return nil, err
	}
	return p.t.Seal(ctx, d)
}

// Version is one stored or intended version of a primary.
type Version[T any] struct {
	E     T
	Props map[string]any // as stored (Primaries.Encode), WriteToken aside
	// Chain is the stored WriteToken, written back with a conditional
	// write so that entity can tell its outcome after a lost reply; nil
	// for none.
	Chain any
	ETag  string
	Raw   []byte // as read; nil for an intended version
}

// Entity is v's T, or nil for a nil v.
func (v *Version[T]) Entity() *T {
	if v == nil {
		return nil
	}
	return &v.E
}

// ETagOr is v's ETag, or "" for a nil v.
func (v *Version[T]) ETagOr() string {
	if v == nil {
		return ""
	}
	return v.ETag
}

// ReadVersion reads the primary pk/rk through rows; found is false when
// there is none.
func ReadVersion[T any](ctx context.Context, rows Primaries[T], pk, rk string) (v Version[T], found bool, err error) {
	raw, err := rows.Get(ctx, pk, rk)
	if errors.Is(err, entity.ErrNotFound) {
		return v, false, nil
	}
	if err != nil {
		return v, false, err
	}
	v, err = DecodeVersion(ctx, rows, raw)
	return v, err == nil, err
}

// DecodeVersion decodes a primary read through rows.
func DecodeVersion[T any](ctx context.Context, rows Primaries[T], raw []byte) (Version[T], error) {
	e, bag, err := rows.Decode(ctx, raw)
	if err != nil {
		return Version[T]{}, err
	}
	chain := bag.Properties[WriteToken]
	delete(bag.Properties, WriteToken)
	return Version[T]{E: e, Props: bag.Properties, Chain: chain, ETag: bag.ETag, Raw: raw}, nil
}

// IntendVersion is the version e would be once written through rows:
// its properties as Encode makes them, WriteToken aside; they are checked
// by the transaction that sends them.
func IntendVersion[T any](ctx context.Context, rows Primaries[T], e *T) (Version[T], error) {
	v := Version[T]{E: *e}
	bag, err := rows.Encode(ctx, e)
	if err != nil {
		return v, err
	}
	delete(bag.Properties, WriteToken)
	v.Props = bag.Properties
	return v, nil
}

// Fence is the write of primary pk/rk that changes nothing but its ETag,
// on condition of v's: in a transaction it makes the transaction depend
// on the version v (a repair), alone it keeps a write conditional on v's
// ETag from ever applying (a claim's fence). It carries v's write token
// chain, so that entity can tell its outcome after a lost reply. Send it
// as a Merge.
func Fence[T any](pk, rk string, v *Version[T]) *entity.DynamicEntity {
	f := &entity.DynamicEntity{PartitionKey: pk, RowKey: rk, ETag: v.ETag, Properties: map[string]any{}}
	if v.Chain != nil {
		f.Properties[WriteToken] = v.Chain
	}
	return f
}

// PrimaryOp adds to b the primary's operation of a write from old to cur:
// its delete on old's ETag (cur nil), its insert (old nil), or its
// replace on old's ETag, carrying the write token chain old was read
// with, which lets entity prove the write's outcome after a lost reply
// (entity replaces it with the write's own). It returns the entity
// written, whose ETag entity sets once the transaction is applied; nil
// for a delete.
func PrimaryOp[T any](b *entity.Batch, pk, rk string, old, cur *Version[T]) *entity.DynamicEntity {
	switch {
	case cur == nil:
		b.Delete(pk, rk, old.ETag)
		return nil
	case old == nil:
		e := &entity.DynamicEntity{PartitionKey: pk, RowKey: rk, Properties: cur.Props}
		b.Insert(e)
		return e
	}
	props := cur.Props
	if old.Chain != nil {
		props = maps.Clone(props)
		props[WriteToken] = old.Chain
	}
	e := &entity.DynamicEntity{PartitionKey: pk, RowKey: rk, ETag: old.ETag, Properties: props}
	b.Update(e, entity.Replace)
	return e
}
