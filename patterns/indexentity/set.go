package indexentity

import (
	"context"
	"encoding/json"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// Set is the primaries of one table with their declared index-entity
// indexes: it writes a primary and its lists together, looks entities up
// by a value, and checks and rebuilds the lists. It is safe for
// concurrent use.
type Set[T any] struct {
	primary *entity.Table[T]                    // with write tokens
	bags    *entity.Table[entity.DynamicEntity] // the primary's table, with write tokens
	entries *entity.Table[entity.DynamicEntity] // OtherPartition index entities' table, with write tokens
	raw     *entity.Table[json.RawMessage]      // the primary's table, read as sent
	blobs   *container.Client

	indexes []*index[T]
	byName  map[string]*index[T]
	names   *indexset.Names[pkg]
	local   []*index[T] // SamePartition
	remote  []*index[T] // OtherPartition and Blob

	proc   *eventual.Processor
	outbox *eventual.Outbox[entity.DynamicEntity]
	kind   eventual.Kind[syncMessage]
	cfg    Config
}

// New returns the Set of primary's entities with the given indexes.
// OtherPartition, TableWide and Blob indexes need Config.Processor, the
// processor of patterns/eventual whose workers keep them (New registers
// the Set's message kind on it; run its Run somewhere), and so do
// WriteOptions.Messages; it may be nil when every index is SamePartition
// and no write carries messages. Build the primary table, Config.Entries and
// Config.Blobs with entity.ClientOptions and azcore's pipeline (as
// tablekit's constructors and integration.Env do), so that a lost reply
// is never misreported.
func New[T any](primary *entity.Table[T], cfg Config, indexes ...Index[T]) (*Set[T], error) {
	if primary == nil {
		return nil, &ConfigError{Field: "primary", Reason: argerr.Nil}
	}
	p := cfg.Processor
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if len(indexes) == 0 {
		return nil, &ConfigError{Field: "indexes", Reason: "are none"}
	}
	s := &Set[T]{primary: primary.WithWriteTokens(), byName: map[string]*index[T]{}, names: indexset.NewNames[pkg](cfg.PrimaryPrefix), proc: p, blobs: cfg.Blobs, cfg: cfg}
	for i, d := range indexes {
		ix, err := compile(i, d)
		if err != nil {
			return nil, err
		}
		if err := s.names.Add(i, ix.Name); err != nil {
			return nil, err
		}
		if ix.Placement == Blob && cfg.Blobs == nil {
			return nil, &DeclarationError{Index: ix.Name, Position: i, Field: "Placement", Reason: "is Blob, and Config.Blobs is nil"}
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
	s.entries = s.bags
	if s.raw, err = entity.NewTable[json.RawMessage](primary.Client()); err != nil {
		return nil, err
	}
	if cfg.Entries != nil && cfg.Entries.Name() != primary.Name() {
		s.entries = cfg.Entries.WithWriteTokens()
	}
	if len(s.remote) == 0 {
		if p != nil {
			// The caller's own messages (WriteOptions.Messages) go
			// through an outbox of the primaries' table.
			if s.outbox, err = eventual.NewOutbox(p, s.bags, cfg.Outbox); err != nil {
				return nil, err
			}
		}
		return s, nil
	}
	if p == nil {
		return nil, &ConfigError{Field: "Config.Processor", Reason: argerr.Nil + ", and OtherPartition, TableWide and Blob indexes need one"}
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
// then where OtherPartition or Blob indexes are kept.
func (s *Set[T]) Relay(ctx context.Context, partitions ...string) (int, error) {
	if s.outbox == nil {
		return 0, nil
	}
	return s.outbox.Relay(ctx, partitions...)
}

func (s *Set[T]) index(name string) (*index[T], error) {
	ix, ok := s.byName[name]
	if !ok {
		return nil, &StepError{Step: "lookup", Index: name, Err: ErrUnknownIndex}
	}
	return ix, nil
}

// rows is the table of ix's index entities.
func (s *Set[T]) rows(ix *index[T]) *entity.Table[entity.DynamicEntity] {
	if ix.Placement == OtherPartition || ix.Placement == TableWide {
		return s.entries
	}
	return s.bags
}

// version is one stored or intended version of a primary.
type version[T any] struct {
	e     T
	props map[string]any // its properties, TkWrite aside
	chain any            // the TkWrite it was read with, nil for none
	etag  string
	raw   []byte // the body read, nil for an intended version
}

// head is the primary's metadata, decoded before the rest.
type head struct {
	PartitionKey string
	RowKey       string
	ETag         string `table:",etag"`
}

// read reads the primary pk/rk; found is false when there is none.
func (s *Set[T]) read(ctx context.Context, pk, rk string) (v version[T], found bool, err error) {
	raw, found, err := indexset.Read(ctx, s.raw, pk, rk)
	if err != nil || !found {
		return v, false, err
	}
	return v, true, v.decode(raw)
}

func (v *version[T]) decode(raw []byte) error {
	e, bag, chain, err := indexset.Decode[T](raw)
	if err != nil {
		return err
	}
	v.e, v.raw, v.etag, v.chain, v.props = e, raw, bag.ETag, chain, bag.Properties
	return nil
}

// intend is the version e would be once written (indexset.Intend).
func intend[T any](e *T) (version[T], error) {
	v := version[T]{e: *e}
	bag, err := indexset.Intend(e)
	if err != nil {
		return v, err
	}
	v.props = bag.Properties
	return v, nil
}

// validKeys refuses a primary whose keys are invalid or whose RowKey the
// Set could not tell from its index entities'.
func (s *Set[T]) validKeys(pk, rk string) error { return s.names.CheckKeys(pk, rk) }

// isPrimary reports whether an entity of a primaries' partition with
// RowKey rk is a primary.
func (s *Set[T]) isPrimary(rk string) bool { return s.names.CheckRowKey(rk) == nil }

// entryIndex returns the index whose entities' RowKeys rk has the prefix
// of, or nil.
func (s *Set[T]) entryIndex(rk string) *index[T] {
	if i := s.names.Of(rk); i >= 0 {
		return s.indexes[i]
	}
	return nil
}
