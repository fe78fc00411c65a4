package secondaryindex

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/edmvalue"
	"github.com/tablekit/tablekit/internal/entityfields"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// Set is the primaries of one table with their declared indexes: it
// writes a primary and its entries together, looks entities up by an
// index's value, and checks and repairs the indexes. It is safe for
// concurrent use.
type Set[T any] struct {
	primary *entity.Table[T]                    // with write tokens
	bags    *entity.Table[entity.DynamicEntity] // the primary's table, with write tokens
	entries *entity.Table[entity.DynamicEntity] // OtherPartition entries' table, with write tokens
	raw     *entity.Table[json.RawMessage]      // the primary's table, read as sent
	copies  *entity.Table[json.RawMessage]      // the entries' table, read as sent
	other   bool                                // entries live in another table

	indexes []*index[T]
	byName  map[string]*index[T]
	names   *indexset.Names[pkg]
	local   []*index[T] // SamePartition
	remote  []*index[T] // OtherPartition and TableWide

	proc   *eventual.Processor
	outbox *eventual.Outbox[entity.DynamicEntity]
	kind   eventual.Kind[syncMessage]
	cfg    Config
}

// New returns the Set of primary's entities with the given indexes.
// OtherPartition and TableWide indexes need Config.Processor, the
// processor of patterns/eventual whose workers keep them (New registers
// the Set's message kind on it; run its Run somewhere); it may be nil
// when every index is SamePartition and no write carries messages
// (WriteOptions). The primary
// table and Config.Entries should be built with entity.ClientOptions (as
// tablekit's constructors and integration.Env do), so that a lost reply is
// never misreported.
func New[T any](primary *entity.Table[T], cfg Config, indexes ...Index[T]) (*Set[T], error) {
	if primary == nil {
		return nil, &ConfigError{Field: "primary", Reason: argerr.Nil}
	}
	p := cfg.Processor
	if err := cfg.check(); err != nil {
		return nil, err
	}
	given := cfg.Grace
	cfg = cfg.withDefaults()
	if len(indexes) == 0 {
		return nil, &ConfigError{Field: "indexes", Reason: "are none"}
	}
	st, err := entityfields.StoredOf(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	s := &Set[T]{primary: primary.WithWriteTokens(), byName: map[string]*index[T]{}, names: indexset.NewNames[pkg](cfg.PrimaryPrefix), proc: p, cfg: cfg}
	for i, d := range indexes {
		ix, err := compile(i, d, st)
		if err != nil {
			return nil, err
		}
		if err := s.names.Add(i, ix.Name); err != nil {
			return nil, err
		}
		s.byName[ix.Name] = ix
		s.indexes = append(s.indexes, ix)
		if ix.remote() {
			s.remote = append(s.remote, ix)
		} else {
			s.local = append(s.local, ix)
		}
	}
	bags, err := entity.NewTable[entity.DynamicEntity](primary.Client())
	if err != nil {
		return nil, err
	}
	s.bags = bags.WithWriteTokens()
	if s.raw, err = entity.NewTable[json.RawMessage](primary.Client()); err != nil {
		return nil, err
	}
	s.entries, s.copies = s.bags, s.raw
	if cfg.Entries != nil && cfg.Entries.Name() != primary.Name() {
		s.other = true
		s.entries = cfg.Entries.WithWriteTokens()
		if s.copies, err = entity.NewTable[json.RawMessage](cfg.Entries.Client()); err != nil {
			return nil, err
		}
	}
	if p == nil {
		if len(s.remote) > 0 {
			return nil, &ConfigError{Field: "Config.Processor", Reason: argerr.Nil + ", and OtherPartition and TableWide indexes need one"}
		}
		return s, nil
	}
	for _, ix := range s.remote {
		if ix.Unique {
			if err := cfg.checkGrace(given); err != nil {
				return nil, err
			}
			break
		}
	}
	if len(s.remote) == 0 {
		// The outbox of the caller's messages (WriteOptions) alone.
		if s.outbox, err = eventual.NewOutbox(p, s.bags, cfg.Outbox); err != nil {
			return nil, err
		}
		return s, nil
	}
	if s.kind, s.outbox, err = indexset.Register[pkg](p, s.bags, cfg.Outbox, cfg.Kind, primary.Name(), s.handle); err != nil {
		return nil, err
	}
	return s, nil
}

// Indexes returns the names of the Set's indexes, in declaration order.
func (s *Set[T]) Indexes() []string {
	names := make([]string, len(s.indexes))
	for i, ix := range s.indexes {
		names[i] = ix.Name
	}
	return names
}

// Relay sends the index messages of primary writes whose process died
// between the write and the send (the outbox's intents), in the given
// partitions or the whole table; see eventual.Outbox.Relay. Run it now and
// then where OtherPartition or TableWide indexes are kept, or writes carry
// messages (WriteOptions).
func (s *Set[T]) Relay(ctx context.Context, partitions ...string) (int, error) {
	if s.outbox == nil {
		return 0, nil
	}
	return s.outbox.Relay(ctx, partitions...)
}

// version is one stored or intended version of a primary.
type version[T any] struct {
	e    T
	bag  entity.DynamicEntity // its properties, TkWrite aside
	etag string
	raw  []byte // as read; nil for an intended version
	// chain is the stored TkWrite, written back with a conditional write
	// so that entity can tell its outcome after a lost reply.
	chain any
}

// read reads a primary; found is false when it does not exist.
func (s *Set[T]) read(ctx context.Context, pk, rk string) (v version[T], found bool, err error) {
	raw, found, err := indexset.Read(ctx, s.raw, pk, rk)
	if err != nil || !found {
		return v, false, err
	}
	if err := v.decode(raw); err != nil {
		return v, false, err
	}
	return v, true, nil
}

func (v *version[T]) decode(raw []byte) (err error) {
	if v.e, v.bag, v.chain, err = indexset.Decode[T](raw); err != nil {
		return err
	}
	v.raw, v.etag = raw, v.bag.ETag
	return nil
}

// intend makes the version of e about to be written (indexset.Intend).
func intend[T any](e *T) (version[T], error) {
	v := version[T]{e: *e}
	bag, err := indexset.Intend(e)
	if err != nil {
		return v, err
	}
	v.bag = *bag
	return v, nil
}

// isPrimary tells a primary's RowKey from an entry's and other entities'.
func (s *Set[T]) isPrimary(rk string) bool {
	return s.names.CheckRowKey(rk) == nil
}

// entryIndex returns the index whose entries have RowKeys like rk.
func (s *Set[T]) entryIndex(rk string) *index[T] {
	if i := s.names.Of(rk); i >= 0 {
		return s.indexes[i]
	}
	return nil
}

// copyOf is the entry of index ix for the primary v with keys pk, rk.
func (ix *index[T]) copyOf(v *version[T], epk, erk, pk, rk string) *entity.DynamicEntity {
	props := make(map[string]any, len(v.bag.Properties)+2)
	if ix.props == nil {
		for k, val := range v.bag.Properties {
			if !reserved(k) {
				props[k] = val
			}
		}
	} else {
		for _, k := range ix.props {
			if val, ok := v.bag.Properties[k]; ok {
				props[k] = val
			}
		}
	}
	props[PropPrimaryPK] = pk
	props[PropPrimaryRK] = rk
	return &entity.DynamicEntity{PartitionKey: epk, RowKey: erk, Properties: props}
}

// owner returns the keys of an entry's primary; ok is false for an entity
// that is not an entry.
func owner(e *entity.DynamicEntity) (pk, rk string, ok bool) {
	pk, ok1 := entity.Prop[string](e, PropPrimaryPK)
	rk, ok2 := entity.Prop[string](e, PropPrimaryRK)
	return pk, rk, ok1 && ok2
}

// sameCopy reports whether entry holds exactly the properties want (an
// entry as copyOf makes it), its claim and write token aside.
func sameCopy(want, entry *entity.DynamicEntity) bool {
	n := 0
	for k, got := range entry.Properties {
		if k == propWriteToken || k == PropClaim {
			continue
		}
		n++
		w, ok := want.Properties[k]
		if !ok || !edmvalue.Equal(w, got) {
			return false
		}
	}
	m := len(want.Properties)
	if _, ok := want.Properties[PropClaim]; ok {
		m--
	}
	return n == m
}

// validKeys checks a primary's keys before anything is sent.
func (s *Set[T]) validKeys(pk, rk string) error { return s.names.CheckKeys(pk, rk) }
