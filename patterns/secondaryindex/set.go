package secondaryindex

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"reflect"
	"time"

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
//
// Its engine is indexset.Core, which patterns/indexentity's Set shares:
// the tables, the declared indexes, the outbox, the round driver of the
// writes and the loop of the index messages' handler. What is this
// package's is how an entry is laid out (index.go), how a write builds
// its transaction and reserves unique values (write.go, remote.go), and
// the lookups and checks.
type Set[T any] struct {
	core   *indexset.Core[pkg, T, *index[T]]
	raw    *entity.Table[json.RawMessage] // the primary's table, for its entries, read as sent
	copies *entity.Table[json.RawMessage] // the entries' table, read as sent
	cfg    Config
	aged   time.Duration // added to every reservation's age (tests: AgeReservations)
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
	if err := cfg.check(); err != nil {
		return nil, err
	}
	given := cfg.Grace
	cfg = cfg.withDefaults()
	st, err := entityfields.StoredOf(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	s := &Set[T]{cfg: cfg}
	s.core, err = indexset.NewCore[pkg, T, *index[T]](primary, indexset.Config{Processor: cfg.Processor, Entries: cfg.Entries, PrimaryPrefix: cfg.PrimaryPrefix, Retry: cfg.Retry, Kind: cfg.Kind, Outbox: cfg.Outbox}, indexset.Hooks[T]{
		Writer:     s.newWrite,
		Valid:      s.valid,
		Named:      func(err error) bool { var ue *UniqueError; return errors.As(err, &ue) },
		UpdateHint: "Get or a lookup with Verify",
		Remote:     "OtherPartition and TableWide indexes",
	})
	if err != nil {
		return nil, err
	}
	for i, d := range indexes {
		ix, err := compile(i, d, st, s.core.Protected)
		if err != nil {
			return nil, err
		}
		if err := s.core.Declare(i, ix); err != nil {
			return nil, err
		}
		if ix.Remote() && ix.Unique && cfg.Processor != nil {
			if err := cfg.checkGrace(given); err != nil {
				return nil, err
			}
		}
	}
	if s.raw, err = entity.NewTable[json.RawMessage](primary.Client()); err != nil {
		return nil, err
	}
	s.copies = s.raw
	if s.core.Other {
		if s.copies, err = entity.NewTable[json.RawMessage](cfg.Entries.Client()); err != nil {
			return nil, err
		}
	}
	if err := s.core.Open(s.handle); err != nil {
		return nil, err
	}
	return s, nil
}

// Indexes returns the names of the Set's indexes, in declaration order.
func (s *Set[T]) Indexes() []string {
	if s.ok() != nil {
		return nil
	}
	return s.core.IndexNames()
}

// Relay sends the index messages of primary writes whose process died
// between the write and the send (the outbox's intents), in the given
// partitions or the whole table; see eventual.Outbox.Relay. Run it now and
// then where OtherPartition or TableWide indexes are kept, or writes carry
// messages (WriteOptions).
func (s *Set[T]) Relay(ctx context.Context, partitions ...string) (int, error) {
	if err := s.ok(); err != nil {
		return 0, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return 0, err
	}
	return s.core.Relay(ctx, partitions...)
}

// Unsendable lists the outbox intents Relay set aside, in the given
// partitions or the whole table: with an inline processor
// (eventual.NewInline), an intent whose index handler failed on the
// processor's Config.MaxDeliveries runs, its entries behind their primary
// until Revive and a Relay (or Rebuild) bring them up; see
// eventual.Outbox.Unsendable.
func (s *Set[T]) Unsendable(ctx context.Context, partitions ...string) iter.Seq2[eventual.UnsendableIntent, error] {
	if err := s.ok(); err != nil {
		return func(yield func(eventual.UnsendableIntent, error) bool) { yield(eventual.UnsendableIntent{}, err) }
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(eventual.UnsendableIntent, error) bool) { yield(eventual.UnsendableIntent{}, err) }
	}
	return s.core.Unsendable(ctx, partitions...)
}

// Revive moves the set-aside intent of message id (UnsendableIntent's
// Message.ID) in partition partitionKey back among the intents, for the
// next Relay; see eventual.Outbox.Revive.
func (s *Set[T]) Revive(ctx context.Context, partitionKey, id string) error {
	if err := s.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	return s.core.Revive(ctx, partitionKey, id)
}

// Provision creates what the Set needs, where it does not exist yet: the
// primaries' table, Config.Entries, and the queues of Config.Processor.
// "Already exists" is success, also for a create whose reply was lost and
// whose resend met what the first try made (TestProvision), so Provision
// may run at every start of a service, and again after any error.
func (s *Set[T]) Provision(ctx context.Context) error {
	if err := s.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	return s.core.Provision(ctx)
}

// version is one stored or intended version of a primary.
type version[T any] = indexset.Version[T]

// read reads a primary; found is false when it does not exist.
func (s *Set[T]) read(ctx context.Context, pk, rk string) (version[T], bool, error) {
	return s.core.Read(ctx, pk, rk)
}

// valid checks, before any request, that e's values make entries' keys.
//
// On an encrypted table, the value of an index that is not Encrypted must
// not hold the value of a property the table encrypts (compared without
// case, when that value has 6 bytes or more): Key cannot be seen into, and
// an index of an encrypted property declared without Encrypted would key
// its entries by the plaintext. Such a write is refused with a *KeyError
// that names the property, not the value.
func (s *Set[T]) valid(e *T, pk, rk string) error {
	var plain map[string]string // the values of indexes in clear, on an encrypted table
	if s.core.Protected != nil {
		plain = map[string]string{}
	}
	for _, ix := range s.core.Indexes {
		_, _, value, has, err := ix.entryKeys(e, pk, rk)
		if err != nil {
			return err
		}
		if has && ix.beacon == nil && plain != nil {
			plain[ix.Name] = value
		}
	}
	return s.core.CheckUndeclared(e, plain)
}

// isPrimary tells a primary's RowKey from an entry's and other entities'.
func (s *Set[T]) isPrimary(rk string) bool { return s.core.IsPrimary(rk) }

// entryIndex returns the index whose entries have RowKeys like rk.
func (s *Set[T]) entryIndex(rk string) *index[T] {
	ix, _ := s.core.IndexOf(rk)
	return ix
}

// copyOf is the entry of index ix for the primary v with keys pk, rk.
func (ix *index[T]) copyOf(v *version[T], epk, erk, pk, rk string) *entity.DynamicEntity {
	props := make(map[string]any, len(v.Props)+2)
	if ix.props == nil {
		for k, val := range v.Props {
			if ix.copied(k) {
				props[k] = val
			}
		}
	} else {
		for _, k := range ix.props {
			if val, ok := v.Props[k]; ok {
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
func (s *Set[T]) validKeys(pk, rk string) error { return s.core.ValidKeys(pk, rk) }
