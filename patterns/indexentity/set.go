package indexentity

import (
	"context"
	"errors"
	"iter"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
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
//
// Its engine is indexset.Core, which patterns/secondaryindex's Set
// shares: the tables, the declared indexes, the outbox, the round driver
// of the writes and the loop of the index messages' handler. What is this
// package's is how a list is laid out and changed (rows.go, lists.go,
// blobs.go, format.go), how a write builds its transaction (write.go),
// and the lookups, checks and rebuilds.
type Set[T any] struct {
	core  *indexset.Core[pkg, T, *index[T]]
	blobs *container.Client
	cfg   Config
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
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Set[T]{blobs: cfg.Blobs, cfg: cfg}
	var err error
	s.core, err = indexset.NewCore[pkg, T, *index[T]](primary, indexset.Config{Processor: cfg.Processor, Entries: cfg.Entries, PrimaryPrefix: cfg.PrimaryPrefix, Retry: cfg.Retry, Kind: cfg.Kind, Outbox: cfg.Outbox}, indexset.Hooks[T]{
		Writer:     s.newWriter,
		Valid:      s.valid,
		Named:      func(err error) bool { var ce *CorruptError; return errors.As(err, &ce) },
		UpdateHint: "Get or LookupAll",
		Remote:     "OtherPartition, TableWide and Blob indexes",
	})
	if err != nil {
		return nil, err
	}
	for i, d := range indexes {
		ix, err := compile(i, d, s.core.Protected)
		if err != nil {
			return nil, err
		}
		if ix.Placement == Blob && cfg.Blobs == nil {
			return nil, &DeclarationError{Index: ix.Name, Position: i, Field: "Placement", Reason: "is Blob, and Config.Blobs is nil"}
		}
		if err := s.core.Declare(i, ix); err != nil {
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
// then where OtherPartition or Blob indexes are kept.
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

func (s *Set[T]) index(name string) (*index[T], error) { return s.core.Index(name, ErrUnknownIndex) }

// rows is the table of ix's index entities.
func (s *Set[T]) rows(ix *index[T]) *entity.Table[entity.DynamicEntity] {
	if ix.Placement == OtherPartition || ix.Placement == TableWide {
		return s.core.Entries
	}
	return s.core.Bags
}

// Provision creates what the Set needs, where it does not exist yet: the
// primaries' table, Config.Entries, the queues of Config.Processor and
// the container Config.Blobs. "Already exists" is success, also for a
// create whose reply was lost and whose resend met what the first try
// made (TestProvision), so Provision may run at every start of a service,
// and again after any error.
func (s *Set[T]) Provision(ctx context.Context) error {
	if err := s.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if s.blobs == nil {
		return s.core.Provision(ctx)
	}
	return s.core.Provision(ctx, func(ctx context.Context) error {
		_, err := s.blobs.Create(ctx, nil)
		if bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
			return nil
		}
		return err
	})
}

// version is one stored or intended version of a primary.
type version[T any] = indexset.Version[T]

// head is the primary's metadata, decoded before the rest.
type head struct {
	PartitionKey string
	RowKey       string
	ETag         string `table:",etag"`
}

// read reads the primary pk/rk; found is false when there is none.
func (s *Set[T]) read(ctx context.Context, pk, rk string) (version[T], bool, error) {
	return s.core.Read(ctx, pk, rk)
}

// valid checks, before any request, that e's values make valid keys for
// their lists.
//
// On an encrypted table, the value of an index that is not Encrypted must
// not hold the value of a property the table encrypts (compared without
// case, when that value has 6 bytes or more): Value cannot be seen into,
// and an index of an encrypted property declared without Encrypted would
// key its lists by the plaintext. Such a write is refused with a
// *KeyError that names the property, not the value.
func (s *Set[T]) valid(e *T, pk, _ string) error {
	var plain map[string]string // the values of indexes in clear, on an encrypted table
	if s.core.Protected != nil {
		plain = map[string]string{}
	}
	for _, ix := range s.core.Indexes {
		value, has, err := ix.valueOf(e, pk)
		if err != nil {
			return err
		}
		if has && ix.beacon == nil && plain != nil {
			plain[ix.Name] = value
		}
	}
	return s.core.CheckUndeclared(e, plain)
}

// validKeys refuses a primary whose keys are invalid or whose RowKey the
// Set could not tell from its index entities'.
func (s *Set[T]) validKeys(pk, rk string) error { return s.core.ValidKeys(pk, rk) }

// isPrimary reports whether an entity of a primaries' partition with
// RowKey rk is a primary.
func (s *Set[T]) isPrimary(rk string) bool { return s.core.IsPrimary(rk) }

// entryIndex returns the index whose entities' RowKeys rk has the prefix
// of, or nil.
func (s *Set[T]) entryIndex(rk string) *index[T] {
	ix, _ := s.core.IndexOf(rk)
	return ix
}
