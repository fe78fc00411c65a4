package denormalize

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/entityfields"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// Copies keeps the declared copies of sources of type S in targets of type
// T: it writes sources and targets so that every target holds the copied
// properties of the source it refers to, in the same transaction
// (SamePartition) or soon after (OtherPartition). Reads need nothing from
// it: a point query of a target returns the copies. It is safe for
// concurrent use.
type Copies[T, S any] struct {
	sources *entity.Table[S]
	targets *entity.Table[T]
	srcBags *entity.Table[entity.DynamicEntity] // the sources' table, with write tokens
	srcRaw  *entity.Table[json.RawMessage]      // the sources' table, read as sent
	tgtBags *entity.Table[entity.DynamicEntity] // the targets' table, with write tokens
	tgtRaw  *entity.Table[json.RawMessage]      // the targets' table, read as sent
	same    bool                                // sources and targets share a table

	rels   []*relation[T, S]
	local  []*relation[T, S] // SamePartition
	remote []*relation[T, S] // OtherPartition

	outbox    *eventual.Outbox[entity.DynamicEntity] // the sources' table's; nil without a processor
	intents   string                                 // the RowKey prefix of outbox intents; "" without an outbox
	tgtOutbox *eventual.Outbox[entity.DynamicEntity] // the targets' table's (outbox when it is the same table)
	kind      eventual.Kind[fanout]
	cfg       Config

	srcProps, tgtProps *entityfields.Stored // what S and T store
}

// New returns the Copies of relations from sources into targets.
//
// SamePartition relations need sources and targets to be one table (two
// typed views of it). OtherPartition relations need Config.Processor, the
// processor of package eventual whose workers fan changes out (New
// registers its message kind on it; run its Run somewhere, and Relay now
// and then); it is optional, in Config, because it may be nil when every
// relation is SamePartition, unless writes are to commit messages of the
// caller's (WriteOptions.Messages): it sends those, from the outbox of
// the table written (Relay sends what a crashed writer left). Build the
// tables' clients with
// entity.ClientOptions (tablekit's constructors and integration.Env do), so
// that a lost reply is never misreported.
//
// What OtherPartition relations need of Config.Processor: its queues,
// with room for messages of 56 KB of text (40 KiB of target keys and
// ranges each, base64 or plain): it needs no blob container, as no
// fan-out message is ever claim-checked; and the kind Config.Kind (or the
// one derived from the tables' names), which no other handler on it may
// have. A change names
// its targets in up to 48 messages, all committed with it (at most 100
// operations in its transaction with its own writes); Relation.Targets
// that names more keys than that (about 50,000) is refused at that
// change with ErrFanOutTooLarge: name many targets by Range.
func New[T, S any](targets *entity.Table[T], sources *entity.Table[S], cfg Config, relations ...Relation[T, S]) (*Copies[T, S], error) {
	p := cfg.Processor
	if targets == nil || sources == nil {
		return nil, &ConfigError{Field: "tables", Reason: "are nil"}
	}
	if len(relations) == 0 {
		return nil, &ConfigError{Field: "relations", Reason: "are none"}
	}
	cfg = cfg.withDefaults()
	c := &Copies[T, S]{sources: sources, targets: targets, cfg: cfg}
	tgtProps, err := storedOf[T]()
	if err != nil {
		return nil, err
	}
	srcProps, err := storedOf[S]()
	if err != nil {
		return nil, err
	}
	c.srcProps, c.tgtProps = srcProps, tgtProps
	names := map[string]bool{}
	for i, d := range relations {
		r, err := compile(i, d, tgtProps, srcProps)
		if err != nil {
			return nil, err
		}
		if names[r.Name] {
			return nil, &ConfigError{Relation: r.Name, Position: i, Field: "Name", Reason: "is used twice"}
		}
		names[r.Name] = true
		c.rels = append(c.rels, r)
		if r.Placement == OtherPartition {
			c.remote = append(c.remote, r)
		} else {
			c.local = append(c.local, r)
		}
	}
	for i, r := range c.rels {
		for _, q := range c.rels[:i] {
			for _, f := range r.Fields {
				for _, g := range q.Fields {
					if f.To == g.To {
						return nil, &ConfigError{Relation: r.Name, Position: i, Field: "Fields", Reason: "copy into " + f.To + ", which relation " + q.Name + " writes too"}
					}
				}
			}
		}
	}
	if err := checkEncrypted(targets, sources, c.rels, tgtProps, srcProps); err != nil {
		return nil, err
	}
	// Views of the tables given, so that a protected one (package crypt)
	// encrypts what the Copies write and decrypts what they read.
	src, err := entity.ViewAs[entity.DynamicEntity](sources)
	if err != nil {
		return nil, err
	}
	tgt, err := entity.ViewAs[entity.DynamicEntity](targets)
	if err != nil {
		return nil, err
	}
	c.srcBags, c.tgtBags = src.WithWriteTokens(), tgt.WithWriteTokens()
	if c.srcRaw, err = entity.ViewAs[json.RawMessage](sources); err != nil {
		return nil, err
	}
	if c.tgtRaw, err = entity.ViewAs[json.RawMessage](targets); err != nil {
		return nil, err
	}
	c.same = sources.Name() != "" && sources.Name() == targets.Name()
	if len(c.local) > 0 && !c.same {
		return nil, &ConfigError{Relation: c.local[0].Name, Field: "Placement", Reason: "is SamePartition, but the sources' table " + sources.Name() + " is not the targets' table " + targets.Name() + " (or a name is unknown: build the clients with entity.ClientOptions)"}
	}
	if p == nil {
		if len(c.remote) > 0 {
			return nil, &ConfigError{Field: "Config.Processor", Reason: argerr.Nil + ", and OtherPartition relations need one"}
		}
		return c, nil // SamePartition only, without the caller's messages
	}
	if c.outbox, err = newOutbox(p, c.srcBags, cfg.Outbox); err != nil {
		return nil, err
	}
	c.intents = cfg.Outbox.Prefix
	if c.intents == "" {
		c.intents = eventual.OutboxPrefix
	}
	c.tgtOutbox = c.outbox
	if !c.same {
		if c.tgtOutbox, err = newOutbox(p, c.tgtBags, cfg.Outbox); err != nil {
			return nil, err
		}
	}
	if len(c.remote) == 0 {
		return c, nil
	}
	name := cfg.Kind
	if name == "" {
		if sources.Name() == "" || targets.Name() == "" {
			return nil, &ConfigError{Field: "Config.Kind", Reason: "is empty and a table's name is unknown (build its client with entity.ClientOptions)"}
		}
		name = kindName(sources.Name(), targets.Name())
	} else if why := checkKind(name); why != "" {
		return nil, &ConfigError{Field: "Config.Kind", Reason: why}
	}
	c.kind = eventual.NewKind[fanout](name)
	if err := eventual.Handle(p, c.kind, c.handle, eventual.HandleOptions{}); err != nil {
		if errors.Is(err, eventual.ErrDuplicateKind) {
			return nil, &ConfigError{Field: "Config.Kind", Reason: strconv.Quote(name) + " has a handler on the processor already: give each Copies of one pair of tables on one processor its own Config.Kind"}
		}
		var ce *eventual.ConfigError
		if errors.As(err, &ce) {
			return nil, &ConfigError{Field: "Config.Kind", Reason: strconv.Quote(name) + ": " + ce.Reason}
		}
		return nil, err
	}
	return c, nil
}

// newOutbox returns the outbox of table t, its configuration errors
// named as this package's.
func newOutbox(p *eventual.Processor, t *entity.Table[entity.DynamicEntity], cfg eventual.OutboxConfig) (*eventual.Outbox[entity.DynamicEntity], error) {
	o, err := eventual.NewOutbox(p, t, cfg)
	if err != nil {
		var ce *eventual.ConfigError
		if errors.As(err, &ce) {
			return nil, &ConfigError{Field: "Config.Outbox." + strings.TrimPrefix(ce.Field, "OutboxConfig."), Reason: ce.Reason}
		}
		return nil, err
	}
	return o, nil
}

// kindName is the default message kind of the Copies from table src into
// table tgt: "denormalize.<src>.<tgt>.v1", or, when that is longer than a
// kind name may be, both names cut short and followed by a hash of the
// whole pair, so that every process derives the same name and two pairs
// never share one.
func kindName(src, tgt string) string {
	name := "denormalize." + src + "." + tgt + ".v1"
	if len(name) <= eventual.MaxKindLength {
		return name
	}
	sum := sha256.Sum256([]byte(src + "\x00" + tgt))
	const keep = (eventual.MaxKindLength - len("denormalize...v1") - 1 - 16) / 2
	return "denormalize." + src[:min(len(src), keep)] + "." + tgt[:min(len(tgt), keep)] + "." + hex.EncodeToString(sum[:8]) + ".v1"
}

// checkKind returns why name cannot be a message kind (eventual's rule),
// or "".
func checkKind(name string) string {
	if len(name) > eventual.MaxKindLength {
		return strconv.Quote(name) + " is longer than " + strconv.Itoa(eventual.MaxKindLength) + " bytes"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return strconv.Quote(name) + " has characters other than ASCII letters, digits, '.', '_' and '-'"
		}
	}
	return ""
}

// ok refuses a nil or zero Copies, which New never returns.
func (c *Copies[T, S]) ok() error {
	if c == nil || c.srcBags == nil {
		return &ConfigError{Field: "Copies", Reason: ReasonZeroValue}
	}
	return nil
}

// retry is the policy of one call: r unless it is zero, else Config.Retry.
func (c *Copies[T, S]) retry(r entity.RetryPolicy) entity.RetryPolicy {
	if r == (entity.RetryPolicy{}) {
		return c.cfg.Retry
	}
	return r
}

// Relay sends the messages of writes whose writer died after its
// transaction and before the enqueue — the fan-out messages of source
// changes, and the caller's own messages (WriteOptions.Messages) — in the
// given partitions or, with none, in all of them (see
// eventual.Outbox.Relay): of the sources' table and, when the targets are
// in another, of the targets' table too (a target write's messages). Run
// it now and then when there are OtherPartition relations or writes with
// messages. Without a processor there is nothing to send: 0. A failure
// in one table does not keep the other's messages from being sent: the
// count is what both sent, the error joins both tables' failures
// (eventual.RelayError, found with errors.As).
func (c *Copies[T, S]) Relay(ctx context.Context, partitions ...string) (int, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return 0, err
	}
	if err := c.ok(); err != nil {
		return 0, err
	}
	if c.outbox == nil {
		return 0, nil
	}
	n, err := c.outbox.Relay(ctx, partitions...)
	if c.tgtOutbox == c.outbox || ctx.Err() != nil {
		return n, err
	}
	// One table's failure does not hold up the other's messages: both
	// are relayed, and their failures joined
	// (TestRelayGoesOnPastTheSourcesTable).
	m, terr := c.tgtOutbox.Relay(ctx, partitions...)
	return n + m, errors.Join(err, terr)
}

// doc is one entity as read: its typed value, its property bag (what a
// write sends back, so that properties V does not model survive), and
// its ETag.
type doc[V any] struct {
	key  Key
	etag string
	val  V
	bag  entity.DynamicEntity
	raw  []byte
	dec  func(raw []byte, v any) error // raw's table's decoder (decode)
}

// fresh decodes another copy of d's value, for a change function to edit.
func (d *doc[V]) fresh() (V, error) {
	var v V
	err := d.dec(d.raw, &v)
	return v, err
}

// decode decodes an entity read from rows' table, through its protection
// when it has one (package crypt): in clear, checked.
func decode[V any](ctx context.Context, rows *entity.Table[json.RawMessage], raw []byte) (*doc[V], error) {
	d := &doc[V]{raw: raw, dec: func(raw []byte, v any) error { return rows.Unmarshal(ctx, raw, v) }}
	if err := d.dec(raw, &d.bag); err != nil {
		if rows.Protected() {
			// A row that fails authentication or decryption is that
			// row's failure: named by its keys, the others go on.
			if k, ok := rawKeys(raw); ok {
				return nil, &rowError{key: k, err: err}
			}
		}
		return nil, err
	}
	d.key = Key{d.bag.PartitionKey, d.bag.RowKey}
	if err := d.dec(raw, &d.val); err != nil {
		return nil, &rowError{key: d.key, err: err}
	}
	d.etag = d.bag.ETag
	return d, nil
}

// rowError is an entity that was read but does not decode as its type:
// one bad row, named by its keys, among the others of a range.
type rowError struct {
	key Key
	err error
}

func (e *rowError) Error() string { return e.err.Error() }
func (e *rowError) Unwrap() error { return e.err }

// badRow returns the keys of the row err is about, if it is one that was
// read but does not decode.
func badRow(err error) (Key, bool) {
	var re *rowError
	if errors.As(err, &re) {
		return re.key, true
	}
	return Key{}, false
}

// read reads the entity k of bags' table; nil when there is none.
// readChanged is the read half of a read-modify-write round: it reads the
// entity at k (what names it in errors: "source" or "target"), lets change
// edit a fresh copy, and checks that change kept the keys. A change's own
// error is returned as is.
func readChanged[V any](ctx context.Context, rows *entity.Table[json.RawMessage], k Key, what string, create bool, change func(*V) error) (*doc[V], V, error) {
	var cur V
	old, err := read[V](ctx, rows, k)
	if err != nil {
		return nil, cur, &StepError{Step: "read " + what, Key: k, Err: err}
	}
	switch {
	case old == nil && !create:
		return nil, cur, &StepError{Step: "read " + what, Key: k, Err: entity.ErrNotFound}
	case old == nil:
		// ModifyOptions.Create: change gets V's zero value with the keys
		// set and no ETag; the write inserts it.
		if err := entityfields.SetSystem(&cur, entityfields.System{PartitionKey: k.PartitionKey, RowKey: k.RowKey}); err != nil {
			return nil, cur, &StepError{Step: "create " + what, Key: k, Err: err}
		}
		if d, ok := any(&cur).(*entity.DynamicEntity); ok {
			d.Properties = map[string]any{}
		}
	default:
		if cur, err = old.fresh(); err != nil {
			return nil, cur, &StepError{Step: "read " + what, Key: k, Err: err}
		}
	}
	if err := change(&cur); err != nil {
		return nil, cur, err
	}
	if got, err := keyOf(&cur); err != nil || got != k {
		return nil, cur, &StepError{Step: "change", Key: k, Err: ErrKeysChanged}
	}
	return old, cur, nil
}

func read[V any](ctx context.Context, rows *entity.Table[json.RawMessage], k Key) (*doc[V], error) {
	raw, err := rows.Get(ctx, k.PartitionKey, k.RowKey)
	if errors.Is(err, entity.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decode[V](ctx, rows, raw)
}

// queryRange reads the entities of r, but for outbox intents (RowKeys
// that start with intents, when not ""). A row that does not decode is
// bad(its keys, the error) when bad is not nil, and the query goes on;
// else it ends the query with a *StepError naming it.
func queryRange[V any](ctx context.Context, rows *entity.Table[json.RawMessage], r Range, intents string, yield func(*doc[V]) error, bad func(Key, error) error) error {
	q := entity.Query{Filter: filter.PK(r.PartitionKey).And(filter.RowKeyRange(r.From, r.To))}
	for raw, err := range rows.Query(ctx, q) {
		if err != nil {
			return err
		}
		d, err := decode[V](ctx, rows, raw)
		if k, ok := badRow(err); ok && isIntent(k, intents) {
			continue
		}
		if err == nil && isIntent(d.key, intents) {
			continue
		}
		if k, ok := badRow(err); ok {
			if bad == nil {
				return &StepError{Step: "read target", Key: k, Err: err}
			}
			if err := bad(k, err); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if err := yield(d); err != nil {
			return err
		}
	}
	return nil
}

// isIntent reports whether k is an outbox intent of a table whose intents'
// RowKeys start with prefix ("": the table has no outbox): an entity of
// eventual's, not a source or target.
func isIntent(k Key, prefix string) bool {
	return prefix != "" && strings.HasPrefix(k.RowKey, prefix)
}

// bagOf encodes v as a property bag, to be written over the version base
// (nil for an insert): it carries base's ETag and write-token chain, so
// that the write is conditional on base and its outcome can be settled
// after a lost reply. The properties base holds that V does not model
// (st says which V stores) are kept: the write replaces the entity whole,
// so that what V models and the change cleared is removed, but it never
// removes another writer's properties V cannot see
// (TestWritesKeepPropertiesTheTypeDoesNotModel).
//
// conv is the bags' view of v's table: a protected one converts the
// fields it encrypts too (in clear, for its write to encrypt).
func bagOf[V any](conv *entity.Table[entity.DynamicEntity], v *V, base *doc[V], st *entityfields.Stored) (*entity.DynamicEntity, error) {
	bag, err := conv.ToDynamic(v)
	if err != nil {
		return nil, err
	}
	bag.ETag = ""
	delete(bag.Properties, propWriteToken)
	if base != nil {
		bag.ETag = base.etag
		if tok, ok := base.bag.Properties[propWriteToken]; ok {
			bag.Set(propWriteToken, tok)
		}
		for name, val := range base.bag.Properties {
			if _, set := bag.Properties[name]; !set && !st.Models(name) && !systemProperty(name) {
				bag.Set(name, val)
			}
		}
	}
	return bag, nil
}

// keyOf returns the keys of v.
func keyOf[V any](v *V) (Key, error) {
	sys, err := entity.SystemOf(v)
	if err != nil {
		return Key{}, err
	}
	return Key{sys.PartitionKey, sys.RowKey}, nil
}

// clone copies a bag deeply enough for its properties to be changed.
func clone(b *entity.DynamicEntity) *entity.DynamicEntity {
	c := *b
	c.Properties = make(map[string]any, len(b.Properties))
	for k, v := range b.Properties {
		c.Properties[k] = v
	}
	return &c
}

// fence is a merge of nothing into d, conditional on its ETag: in a
// transaction, it makes the transaction fail if d changed since it was
// read, and makes every write based on that read fail afterwards.
func fence[V any](d *doc[V]) *entity.DynamicEntity {
	f := &entity.DynamicEntity{PartitionKey: d.key.PartitionKey, RowKey: d.key.RowKey, ETag: d.etag}
	if tok, ok := d.bag.Properties[propWriteToken]; ok {
		f.Set(propWriteToken, tok)
	}
	return f
}

// project is what a target of r copies from source src (nil: none): the
// value of each To whose From the source has.
func (r *relation[T, S]) project(src *entity.DynamicEntity) map[string]any {
	want := make(map[string]any, len(r.Fields))
	if src == nil {
		return want
	}
	for _, f := range r.Fields {
		if v, ok := src.Properties[f.From]; ok {
			want[f.To] = v
		}
	}
	return want
}

// holds reports whether target bag t holds exactly the copy want of r.
func (r *relation[T, S]) holds(t *entity.DynamicEntity, want map[string]any) bool {
	for _, f := range r.Fields {
		got, has := t.Properties[f.To]
		v, ok := want[f.To]
		if has != ok || ok && !sameValue(got, v) {
			return false
		}
	}
	return true
}

// put writes the copy want of r into t, removing the properties the
// source does not have.
func (r *relation[T, S]) put(t *entity.DynamicEntity, want map[string]any) {
	for _, f := range r.Fields {
		if v, ok := want[f.To]; ok {
			t.Set(f.To, v)
		} else {
			delete(t.Properties, f.To)
		}
	}
}

// sourceOf returns the source t refers to in r; a target never refers to
// itself.
func (r *relation[T, S]) sourceOf(t *doc[T]) (Key, bool) {
	k, ok := r.Source(&t.val)
	if !ok || k == t.key {
		return Key{}, false
	}
	return k, true
}

// sameValue compares two property values as the codec stores them.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case uuid.UUID:
		y, ok := b.(uuid.UUID)
		return ok && x == y
	}
	return a == b
}
