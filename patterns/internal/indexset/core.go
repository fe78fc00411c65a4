package indexset

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// Index is what the engine needs of a package's checked index
// declaration.
type Index interface {
	// IndexName is the index's Name.
	IndexName() string
	// Remote reports an index kept by the Set's messages (OtherPartition,
	// TableWide, Blob), not in the primary's transaction.
	Remote() bool
}

// Config is what the engine takes of a package's Config.
type Config struct {
	Processor     *eventual.Processor
	Entries       *entity.Table[entity.DynamicEntity]
	PrimaryPrefix string
	Retry         entity.RetryPolicy
	Kind          string
	Outbox        eventual.OutboxConfig
}

// Hooks are what a package adds to the engine's writes.
type Hooks[T any] struct {
	// Writer makes the package's side of one write of primary pk/rk
	// carrying the caller's msgs (see Writer).
	Writer func(pk, rk string, msgs []eventual.Message) Writer[T]
	// Valid checks e, about to be written as primary pk/rk, before any
	// request of the round that writes it: its values make keys.
	Valid func(e *T, pk, rk string) error
	// Named reports the package's own errors that name the primary
	// already (a *UniqueError, a *CorruptError): a write returns them as
	// they are, not in a *StepError of the operation.
	Named func(err error) bool
	// UpdateHint says how to get an entity with an ETag, for Update's
	// error on one without ("Get or LookupAll").
	UpdateHint string
	// Remote names the placements that need Config.Processor, for New's
	// error without one ("OtherPartition and TableWide indexes").
	Remote string
}

// Core is the engine of an index Set, shared by patterns/secondaryindex
// and patterns/indexentity: its tables, its declared indexes, the outbox
// and message kind of its remote indexes, the round driver of its writes
// (Insert, Update, Modify, Delete, MoveTo), and the loop of its
// messages' handler (Sync). What a package keeps is what differs: how
// an index lays out its rows (entries or lists), how a round builds its
// transaction (Writer), and its lookups and checks.
//
// Every primary is read, decoded and encoded through Rows (Primaries),
// and written through Bags.
type Core[P Package, T any, X Index] struct {
	Rows Primaries[T]
	// Bags is the primaries' table as property bags, with write tokens:
	// every write of a primary, and of the index rows of its partition.
	Bags *entity.Table[entity.DynamicEntity]
	// Entries is the table of the remote indexes' rows, with write
	// tokens: Config.Entries, or Bags. Other reports Config.Entries.
	Entries *entity.Table[entity.DynamicEntity]
	Other   bool
	// Protected is the primaries' table when it is encrypted (package
	// crypt's Table.Entity): Rows decrypt and seal through it, and the
	// package keys its rows of encrypted values by beacons and copies no
	// encrypted property into them. Nil for a plain table.
	Protected *entity.Table[T]

	Indexes       []X // in declaration order
	ByName        map[string]X
	Local, Remote []X
	Names         *Names[P]

	Proc   *eventual.Processor
	Outbox *eventual.Outbox[entity.DynamicEntity]
	Kind   eventual.Kind[SyncMessage]
	Retry  entity.RetryPolicy

	cfg   Config
	hooks Hooks[T]
}

// NewCore returns the engine of the Set of primary's entities: its
// tables, with no index yet (Declare them, then Open).
func NewCore[P Package, T any, X Index](primary *entity.Table[T], cfg Config, hooks Hooks[T]) (*Core[P, T, X], error) {
	if primary == nil {
		return nil, &ConfigError[P]{Field: "primary", Reason: argerr.Nil}
	}
	c := &Core[P, T, X]{ByName: map[string]X{}, Names: NewNames[P](cfg.PrimaryPrefix), Proc: cfg.Processor, Retry: cfg.Retry, cfg: cfg, hooks: hooks}
	if primary.Protected() {
		rows, err := NewProtectedPrimaries(primary)
		if err != nil {
			return nil, err
		}
		c.Rows, c.Protected = rows, primary
	} else {
		rows, err := NewTablePrimaries(primary)
		if err != nil {
			return nil, err
		}
		c.Rows = rows
	}
	bags, err := entity.NewTable[entity.DynamicEntity](primary.Client())
	if err != nil {
		return nil, err
	}
	c.Bags = bags.WithWriteTokens()
	c.Entries = c.Bags
	if cfg.Entries != nil && cfg.Entries.Name() != primary.Name() {
		c.Other, c.Entries = true, cfg.Entries.WithWriteTokens()
		if cfg.Entries.Protected() {
			// The rows hold beacons and ciphertexts already, or values the
			// primaries store in clear: they are written as they are.
			plain, err := entity.NewTable[entity.DynamicEntity](cfg.Entries.Client())
			if err != nil {
				return nil, err
			}
			c.Entries = plain.WithWriteTokens()
		}
	}
	return c, nil
}

// Declare adds the index declared at position i of New's indexes, its
// name checked (Names.Add); call it in declaration order.
func (c *Core[P, T, X]) Declare(i int, x X) error {
	if err := c.Names.Add(i, x.IndexName()); err != nil {
		return err
	}
	c.ByName[x.IndexName()] = x
	c.Indexes = append(c.Indexes, x)
	if x.Remote() {
		c.Remote = append(c.Remote, x)
	} else {
		c.Local = append(c.Local, x)
	}
	return nil
}

// Open ends New once the indexes are declared: remote indexes need the
// processor, which gets the Set's message kind with handle as its
// handler; a processor without them still makes the outbox of the
// caller's messages.
func (c *Core[P, T, X]) Open(handle func(context.Context, SyncMessage) error) error {
	p := c.cfg.Processor
	var err error
	switch {
	case len(c.Indexes) == 0:
		return &ConfigError[P]{Field: "indexes", Reason: "are none"}
	case p == nil && len(c.Remote) > 0:
		return &ConfigError[P]{Field: "Config.Processor", Reason: argerr.Nil + ", and " + c.hooks.Remote + " need one"}
	case p == nil:
		return nil
	case len(c.Remote) == 0:
		// The outbox of the caller's messages (WriteOptions) alone.
		c.Outbox, err = eventual.NewOutbox(p, c.Bags, c.cfg.Outbox)
		return err
	}
	c.Kind, c.Outbox, err = Register[P](p, c.Bags, c.cfg.Outbox, c.cfg.Kind, c.Rows.Name(), handle)
	return err
}

// IndexNames returns the names of the indexes, in declaration order.
func (c *Core[P, T, X]) IndexNames() []string {
	names := make([]string, len(c.Indexes))
	for i, x := range c.Indexes {
		names[i] = x.IndexName()
	}
	return names
}

// Index returns the index named name, or a *StepError matching
// unknown (the package's ErrUnknownIndex).
func (c *Core[P, T, X]) Index(name string, unknown error) (X, error) {
	x, ok := c.ByName[name]
	if !ok {
		return x, &StepError[P]{Step: "lookup", Index: name, Err: unknown}
	}
	return x, nil
}

// IndexOf returns the index whose rows have RowKeys like rk, and false
// when none has.
func (c *Core[P, T, X]) IndexOf(rk string) (X, bool) {
	if i := c.Names.Of(rk); i >= 0 {
		return c.Indexes[i], true
	}
	var zero X
	return zero, false
}

// IsPrimary tells a primary's RowKey from an index row's and tablekit's
// own entities'.
func (c *Core[P, T, X]) IsPrimary(rk string) bool { return c.Names.CheckRowKey(rk) == nil }

// ValidKeys checks a primary's keys before anything is sent.
func (c *Core[P, T, X]) ValidKeys(pk, rk string) error { return c.Names.CheckKeys(pk, rk) }

// Relay sends the messages of primary writes whose process died between
// the write and the send (the outbox's intents), in the given partitions
// or the whole table: eventual.Outbox.Relay. A Set without an outbox has
// none.
func (c *Core[P, T, X]) Relay(ctx context.Context, partitions ...string) (int, error) {
	if c.Outbox == nil {
		return 0, nil
	}
	return c.Outbox.Relay(ctx, partitions...)
}

// Unsendable lists the outbox intents Relay set aside, in the given
// partitions or the whole table: eventual.Outbox.Unsendable. A Set
// without an outbox has none.
func (c *Core[P, T, X]) Unsendable(ctx context.Context, partitions ...string) iter.Seq2[eventual.UnsendableIntent, error] {
	if c.Outbox == nil {
		return func(func(eventual.UnsendableIntent, error) bool) {}
	}
	return c.Outbox.Unsendable(ctx, partitions...)
}

// Revive moves a set-aside intent back for Relay: eventual.Outbox.Revive.
// A Set without an outbox has none to revive (entity.ErrNotFound).
func (c *Core[P, T, X]) Revive(ctx context.Context, partitionKey, id string) error {
	if c.Outbox == nil {
		var p P
		return fmt.Errorf("%s: revive %q: the Set has no outbox: %w", p.Name(), id, entity.ErrNotFound)
	}
	return c.Outbox.Revive(ctx, partitionKey, id)
}

// Read reads the primary pk/rk through Rows; found is false when there
// is none.
func (c *Core[P, T, X]) Read(ctx context.Context, pk, rk string) (Version[T], bool, error) {
	return ReadVersion(ctx, c.Rows, pk, rk)
}

// Get reads the primary pk/rk as T through Rows: an error matching
// entity.ErrNotFound when there is none, entity.ErrDecode when it does
// not decode as T.
func (c *Core[P, T, X]) Get(ctx context.Context, pk, rk string) (T, error) {
	raw, err := c.Rows.Get(ctx, pk, rk)
	if err != nil {
		var zero T
		return zero, err
	}
	e, _, err := c.Rows.Decode(ctx, raw)
	return e, err
}

// Intend is the version e would be once written.
func (c *Core[P, T, X]) Intend(ctx context.Context, e *T) (Version[T], error) {
	return IntendVersion(ctx, c.Rows, e)
}

// SyncMessage is the message that brings the remote index rows of one
// primary in line with it: its keys, and the values, by index, whose
// rows it looks at (the values it held, and those a write reserved,
// besides the one it holds).
type SyncMessage struct {
	PK     string              `json:"pk"`
	RK     string              `json:"rk"`
	Values map[string][]string `json:"values,omitempty"`
}

// Message is the Set's message for primary pk/rk with the values to look
// at, by index, each index's values sorted and once.
func (c *Core[P, T, X]) Message(pk, rk string, values map[string][]string) (eventual.Message, error) {
	vals := make(map[string][]string, len(values))
	for k, vs := range values {
		vs = slices.Clone(vs)
		slices.Sort(vs)
		vals[k] = slices.Compact(vs)
	}
	m, err := c.Kind.Message(SyncMessage{PK: pk, RK: rk, Values: vals})
	if err != nil {
		return m, err
	}
	m.Key = pk + "/" + rk // keys hold no '/'
	return m, nil
}

// WriteOptions are the options of one write (Insert, Update, Modify,
// Delete) of an index Set: its last, variadic argument, at most one.
// Each package documents them as its own (secondaryindex.WriteOptions,
// indexentity.WriteOptions).
type WriteOptions struct {
	// Messages are the caller's own messages of package eventual,
	// committed as outbox intents in the write's entity group transaction
	// with the change: sent exactly when the change committed.
	Messages []eventual.Message
}

// Messages returns the caller's messages of a write op's options, checked
// before any request (the package function Messages), for the room the
// Set's transactions leave (Room).
func (c *Core[P, T, X]) Messages(op string, opts []WriteOptions) ([]eventual.Message, error) {
	var msgs []eventual.Message
	if len(opts) > 0 {
		msgs = opts[0].Messages
	}
	return Messages[P](op, len(opts), msgs, c.Outbox != nil, Room(len(c.Local)), c.Proc)
}

// Submit submits one transaction of a write in the primaries' partition
// pk, build adding its operations, with msgs as outbox intents in it (the
// outbox's Submit) or, without any, as a plain transaction; a plain one
// to which build adds nothing is not sent.
func (c *Core[P, T, X]) Submit(ctx context.Context, pk string, build func(*entity.Batch) error, msgs []eventual.Message) error {
	if len(msgs) > 0 {
		return c.Outbox.Submit(ctx, pk, build, msgs...)
	}
	b := c.Bags.NewBatch()
	if err := build(b); err != nil {
		return err
	}
	if b.Len() == 0 {
		return nil
	}
	_, err := c.Bags.Submit(ctx, b)
	return err
}

// MoveTo is the Sets' MoveTo (see Move): it copies the primary pk/rk to
// dst with an upsert, then deletes it through the Set on condition of the
// version copied, so that its entries or lists go with it.
func (c *Core[P, T, X]) MoveTo(ctx context.Context, pk, rk string, dst *entity.Table[T]) error {
	if err := MoveDestination[P](dst, c.Rows.Name()); err != nil {
		return err
	}
	if c.Protected != nil && !dst.Protected() {
		return &ConfigError[P]{Field: "MoveTo: dst", Reason: "is a plain table and the primaries' is encrypted: the copy would hold the encrypted values in clear (give crypt.Table.Entity of the destination)"}
	}
	if err := c.ValidKeys(pk, rk); err != nil {
		return err
	}
	// The destination's entity is read and written as a bag, so that the
	// copy can be conditional on its ETag whatever T holds.
	bags, err := entity.ViewAs[entity.DynamicEntity](dst)
	if err != nil {
		return &ConfigError[P]{Field: "MoveTo: dst", Reason: err.Error()}
	}
	return Move[P](ctx, pk, rk, dst.Name(), c.Retry, Mover[T]{
		Read: func(ctx context.Context) (T, string, bool, error) {
			v, found, err := c.Read(ctx, pk, rk)
			return v.E, v.ETag, found, err
		},
		Dest: func(ctx context.Context) (string, error) {
			d, err := bags.Get(ctx, pk, rk)
			if errors.Is(err, entity.ErrNotFound) {
				return "", nil
			}
			return d.ETag, err
		},
		Copy: func(ctx context.Context, e *T, etag string) error {
			d, err := dst.ToDynamic(e)
			if err != nil {
				return err
			}
			if etag == "" {
				return bags.Insert(ctx, d)
			}
			d.ETag = etag
			return bags.Update(ctx, d, entity.Replace)
		},
		Delete: func(ctx context.Context, etag string) error { return c.Delete(ctx, pk, rk, etag) },
	})
}

// Provision creates what the Set stores into and sends through, as far
// as it does not exist: the primaries' table (which holds the outbox's
// intents and the SamePartition rows), Config.Entries, the processor's
// work and poison queues (its Provision, or CreateQueues), and what more
// the package names (a container of blobs). "Already exists" is success,
// also when a create whose reply was lost is resent and meets what its
// first try made (entity.Table.CreateTableIfNotExists), so Provision can
// run at every start, and again after any failure.
func (c *Core[P, T, X]) Provision(ctx context.Context, more ...func(context.Context) error) error {
	steps := []func(context.Context) error{c.Bags.CreateTableIfNotExists}
	if c.Other {
		steps = append(steps, c.Entries.CreateTableIfNotExists)
	}
	if p, ok := any(c.Proc).(interface{ Provision(context.Context) error }); ok && c.Proc != nil {
		steps = append(steps, p.Provision) // the processor's own, where it has one
	} else if c.Proc != nil {
		steps = append(steps, c.Proc.CreateQueues)
	}
	for _, step := range append(steps, more...) {
		if err := step(ctx); err != nil {
			return &StepError[P]{Step: "provision", Err: err}
		}
	}
	return nil
}
