package crypt

import (
	"context"
	"iter"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/internal/protect"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/entityfields"
	"github.com/tablekit/tablekit/keys"
)

// Config says how a Table protects its entities. Only Key is required.
type Config struct {
	// Key wraps the content key of every write and unwraps it on every
	// read: a LocalKey, a keyvault.Key, or a Keyring of the current key and
	// older ones while keys are rotated (Table.Rotate). Required.
	Key KeyWrapper
	// Table is the table name bound into every ciphertext and signature,
	// so a ciphertext copied to another table does not decrypt. "" means
	// the entity table's Name (for entity.NewTable, the one in the
	// client's URL); set it when that is empty, which New refuses.
	Table string
	// Encrypt marks properties to encrypt besides those tagged
	// `table:",encrypt"`: a function of (PartitionKey, RowKey, property
	// name), like the .NET client's encryption resolver; the way to encrypt
	// properties of entity.DynamicEntity. nil means the tags alone. A
	// filter on a property it may mark is refused unless the filter pins
	// the keys (see Encryptable and the package doc's Filters).
	Encrypt func(partitionKey, rowKey, property string) bool
	// Encryptable lists every property Config.Encrypt may mark, for any
	// keys: a filter on any other property runs in clear, and a write for
	// which Config.Encrypt marks an unlisted property is refused
	// (a *WriteError matching ErrInvalidConfig). nil means any property:
	// then a filter on a property other than the keys and Timestamp is
	// refused (ErrEncryptedFilter) unless it is a point query of an entity
	// for which Config.Encrypt says clear (see the package doc's Filters).
	// Ignored without Config.Encrypt. It holds for what is written from
	// then on: an entity written before it was set, with a property outside
	// it encrypted, is missed by filters on that property until Rotate with
	// Reencrypt rewrites it (which lists it in RotateResult.Failed if the
	// function still marks that property).
	Encryptable []string
	// Sign marks sign-only properties (stored in clear, covered by the
	// entity's signature) besides those tagged `table:",sign"`. nil means
	// the tags alone.
	Sign func(partitionKey, rowKey, property string) bool
	// Beacons lists encrypted properties that also store an equality
	// beacon, so that a filter's eq or ne on them can run on the service.
	// A beacon tells anyone who reads the table which entities hold equal
	// values of the property (and, for a value guessed, whether any entity
	// holds it, if the BeaconKey leaks). nil means none: filters on
	// encrypted properties are refused.
	Beacons []string
	// BeaconKey is the beacons' HMAC key, at least 32 bytes; required with
	// Beacons. Keep it apart from the key-encryption key.
	BeaconKey []byte
	// Types lists the other entity types the table holds, a value (or
	// pointer) of each: the properties their tags encrypt or sign are
	// protected so in every view of this Table — its Entity's property
	// bags (entity.ViewAs), and entities of T that happen to have a
	// property of that name — as in the views of the other types' crypt
	// Tables of the same table. Give it when several types share one table
	// and a component reads or writes them together: package denormalize's
	// sources and targets in one table (each crypt Table naming the other's
	// type), package resolver's registered types. A name two types tag
	// differently (encrypt and sign) is a *ConfigError.
	Types []any
	// Legacy reads, decrypt only, entities written by the .NET client's
	// TableEncryptionPolicy (AES-CBC, no integrity), so they can be
	// written back in this package's format. false refuses them.
	Legacy bool
	// ReadPlaintext reads entities that carry no encryption metadata as
	// plaintext, to migrate a plaintext table. false refuses them with
	// ErrNotEncrypted, so nobody can pass plaintext off as protected data by
	// stripping the metadata.
	ReadPlaintext bool
	// KeyCache is the most content keys kept in memory, after a write or a
	// read, so that reading the entity again skips the unwrap (a Key Vault
	// call) and the key setup; the wrapped bytes are the lookup key, so a
	// changed envelope is unwrapped afresh. A key in the cache is never
	// used to encrypt (ContentKeyWrites keeps its shared key apart). 0
	// means 1024; a negative value keeps none, so no content key outlives
	// the call that used it — which ContentKeyWrites above 1 cannot keep:
	// New refuses the two together.
	KeyCache int
	// ContentKeyWrites is the most entity writes of this Table one content
	// key encrypts. 0 or 1 means one: every write draws a new content key
	// and wraps it (with package keyvault, a vault operation per write, and
	// per first read of each entity). n > 1 (at most MaxContentKeyWrites)
	// shares a content key among up to n writes, for at most
	// ContentKeyAge: n writes cost one wrap and one key setup, and a reader
	// that has unwrapped the key for one of the entities reads the others
	// from its KeyCache. Each write still draws its own nonces, and every
	// ciphertext and signature names its entity, so nothing moves between
	// entities that share a key. The price: whoever obtains one unwrapped
	// content key reads the encrypted properties of up to n entities, not
	// one. The stored format is the same either way.
	ContentKeyWrites int
	// ContentKeyAge bounds how long a content key shared under
	// ContentKeyWrites keeps encrypting, so that a key-encryption key
	// rotated in the vault takes over new writes. 0 means
	// DefaultContentKeyAge (10 minutes). Ignored when ContentKeyWrites is
	// 0 or 1.
	ContentKeyAge time.Duration
}

func (c Config) withDefaults() Config {
	if c.KeyCache == 0 {
		c.KeyCache = 1024
	}
	return c
}

// Table is a typed view of one table whose protected properties are
// encrypted or signed on the client. It has the methods of entity.Table
// that make sense for encrypted entities, with the same meaning; Merge is
// refused (ErrMerge). It is safe for concurrent use.
type Table[T any] struct {
	base   *entity.Table[T]
	ent    *entity.Table[T] // base, protected at every call (Entity)
	core   *core
	hooks  *protect.Hooks
	fields map[string]protect.Field // nil for entity.DynamicEntity
	// keepsUnknown: T keeps any property (an extra field, DynamicEntity).
	keepsUnknown bool
}

// New returns an encrypting view of tbl. Nothing is sent; the type's tags
// and the Config are checked here: a nil tbl, a nil Config.Key, a table
// whose name is unknown without Config.Table, or Beacons that cannot work
// are a *ConfigError (matching ErrInvalidConfig) naming the field.
func New[T any](tbl *entity.Table[T], cfg Config) (*Table[T], error) {
	if tbl == nil {
		return nil, &ConfigError{Field: "tbl", Reason: "is a nil *entity.Table"}
	}
	if cfg.Key == nil {
		return nil, &ConfigError{Field: "Config.Key", Reason: "is nil: a LocalKey, a keyvault.Key or a Keyring is required"}
	}
	switch {
	case cfg.ContentKeyWrites < 0 || cfg.ContentKeyWrites > MaxContentKeyWrites:
		return nil, &ConfigError{Field: "Config.ContentKeyWrites", Reason: "is " + strconv.Itoa(cfg.ContentKeyWrites) + ", not between 0 and MaxContentKeyWrites (1048576)"}
	case cfg.ContentKeyAge < 0:
		return nil, &ConfigError{Field: "Config.ContentKeyAge", Reason: "is negative"}
	case cfg.ContentKeyWrites > 1 && cfg.KeyCache < 0:
		return nil, &ConfigError{Field: "Config.ContentKeyWrites", Reason: "shares a content key, kept in memory between writes, and Config.KeyCache is negative: no content key may outlive its call"}
	}
	cfg = cfg.withDefaults()
	name := cfg.Table
	if name == "" {
		name = tbl.Name()
	}
	if name == "" {
		return nil, &ConfigError{Field: "Config.Table", Reason: "is empty and the entity table does not know its name, which is bound into every ciphertext: set it"}
	}
	hooks := protect.Entity()
	list, err := hooks.Fields(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	c := &core{
		table:     strings.ToLower(name),
		key:       cfg.Key,
		encrypt:   cfg.Encrypt,
		sign:      cfg.Sign,
		legacy:    cfg.Legacy,
		plaintext: cfg.ReadPlaintext,
		cache:     newKeyCache(cfg.KeyCache),
		sharing:   newSharing(cfg.ContentKeyWrites, cfg.ContentKeyAge),
	}
	_, open, err := entityfields.PropertiesOf(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	t := &Table[T]{base: tbl, core: c, hooks: hooks, keepsUnknown: open}
	if list != nil {
		t.fields = make(map[string]protect.Field, len(list))
		for _, f := range list {
			if strings.HasPrefix(f.Name, ReservedPrefix) || f.Name == legacyKeyProperty || f.Name == legacySetProperty {
				return nil, &entity.TypeError{Type: reflect.TypeFor[T](), Field: f.Name, Reason: "property names starting with " + ReservedPrefix + ", and the .NET client's metadata names, are reserved for encryption metadata"}
			}
			t.fields[f.Name] = f
		}
	}
	if err := c.addTags(hooks, reflect.TypeFor[T](), list, cfg.Types); err != nil {
		return nil, err
	}
	if cfg.Encryptable != nil && cfg.Encrypt != nil {
		c.encryptable = make(map[string]bool, len(cfg.Encryptable))
		for _, n := range cfg.Encryptable {
			if n == "" || systemProperty(n) || strings.HasPrefix(n, ReservedPrefix) {
				return nil, &ConfigError{Field: "Config.Encryptable", Reason: "lists " + strconv.Quote(n) + ", which is never encrypted"}
			}
			c.encryptable[n] = true
		}
	}
	if len(cfg.Beacons) > 0 {
		if len(cfg.BeaconKey) < 32 {
			return nil, &ConfigError{Field: "Config.BeaconKey", Reason: "is " + strconv.Itoa(len(cfg.BeaconKey)) + " bytes; Beacons need one of at least 32"}
		}
		c.beaconKey = append([]byte(nil), cfg.BeaconKey...)
		c.beacons = make(map[string]bool, len(cfg.Beacons))
		for _, b := range cfg.Beacons {
			if keys.UTF16Len(BeaconPrefix+b) > entity.MaxPropertyNameLength {
				return nil, &ConfigError{Field: "Config.Beacons", Reason: "property " + b + ": the name is too long for its beacon " + BeaconPrefix + b + " (255 characters)"}
			}
			if t.fields != nil && !c.mayEncrypt(b) && c.tags[b]&protect.Encrypt == 0 {
				return nil, &ConfigError{Field: "Config.Beacons", Reason: "property " + b + " is not a field tagged encrypt, nor one Config.Encrypt may mark"}
			}
			c.beacons[b] = true
		}
	}
	t.ent = hooks.Guarded(tbl, guard[T]{t}).(*entity.Table[T])
	return t, nil
}

func errMerge(op string) error {
	return &WriteError{Kind: ErrMerge, Reason: op}
}

func checkMode(op string, mode entity.UpdateMode) error {
	if mode == entity.Merge {
		return errMerge(op + " with Merge")
	}
	return nil
}

// Name returns the table name bound into the ciphertexts, in lower case.
func (t *Table[T]) Name() string {
	if t.ok() != nil {
		return ""
	}
	return t.core.table
}

// CreateTableIfNotExists creates the table unless it exists.
func (t *Table[T]) CreateTableIfNotExists(ctx context.Context) error {
	if err := t.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	return t.base.CreateTableIfNotExists(ctx)
}

// Provision creates the table when it is missing, as entity.Table's
// Provision does (a lost reply, a name still being deleted), so that
// account.Provision takes an encrypted table beside the others.
func (t *Table[T]) Provision(ctx context.Context) error {
	if err := t.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	return t.base.Provision(ctx)
}

// Get reads and decrypts one entity; see entity.Table.Get. An entity that
// fails authentication is a *ReadError matching ErrTampered (and
// entity.ErrDecode). Every failing read returns the zero value, never a
// partly filled one (whose keys and ETag would invite a conditional
// overwrite).
func (t *Table[T]) Get(ctx context.Context, partitionKey, rowKey string) (T, error) {
	if err := t.ok(); err != nil {
		return *new(T), err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return *new(T), err
	}
	return zeroOnError(t.ent.Get(ctx, partitionKey, rowKey))
}

// zeroOnError returns the zero value with an error: the codec fills a value
// as it decodes, and a property that fails late (ErrPolicy, a plain value
// of the wrong type, a legacy ciphertext) leaves the keys and the ETag set.
func zeroOnError[T any](v T, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// zeroRowsOnError is zeroOnError for every row of a query.
func zeroRowsOnError[T any](seq iter.Seq2[T, error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for v, err := range seq {
			if !yield(zeroOnError(v, err)) {
				return
			}
		}
	}
}

// Insert encrypts and adds e; see entity.Table.Insert.
func (t *Table[T]) Insert(ctx context.Context, e *T) error {
	if err := t.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	return t.ent.Insert(ctx, e)
}

// Upsert encrypts e and inserts or replaces it (InsertOrReplace); mode
// Merge is refused with ErrMerge before any request.
func (t *Table[T]) Upsert(ctx context.Context, e *T, mode entity.UpdateMode) error {
	if err := t.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := checkMode("Upsert", mode); err != nil {
		return err
	}
	return t.ent.Upsert(ctx, e, mode)
}

// Update encrypts e and replaces the stored entity on condition that its
// ETag is still e's; see entity.Table.Update. Merge is refused.
func (t *Table[T]) Update(ctx context.Context, e *T, mode entity.UpdateMode) error {
	if err := t.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := checkMode("Update", mode); err != nil {
		return err
	}
	return t.ent.Update(ctx, e, mode)
}

// UpdateAny is Update whatever the stored ETag.
func (t *Table[T]) UpdateAny(ctx context.Context, e *T, mode entity.UpdateMode) error {
	if err := t.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := checkMode("UpdateAny", mode); err != nil {
		return err
	}
	return t.ent.UpdateAny(ctx, e, mode)
}

// Modify reads, decrypts, changes, encrypts and replaces one entity under
// its ETag, retrying from the read on a concurrent change; see
// entity.Table.Modify. Encrypted entities are replaced whole: opts.Mode 0
// means entity.Replace here, and Merge is refused.
func (t *Table[T]) Modify(ctx context.Context, partitionKey, rowKey string, change func(*T) error, opts entity.ModifyOptions) (T, error) {
	if err := t.ok(); err != nil {
		return *new(T), err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return *new(T), err
	}
	if opts.Mode == 0 {
		opts.Mode = entity.Replace
	}
	if err := checkMode("Modify", opts.Mode); err != nil {
		var zero T
		return zero, err
	}
	return zeroOnError(t.ent.Modify(ctx, partitionKey, rowKey, change, opts))
}

// Delete removes the entity with these keys if its ETag is still etag.
func (t *Table[T]) Delete(ctx context.Context, partitionKey, rowKey, etag string) error {
	if err := t.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	return t.base.Delete(ctx, partitionKey, rowKey, etag)
}

// DeleteIfExists removes the entity whatever its version.
func (t *Table[T]) DeleteIfExists(ctx context.Context, partitionKey, rowKey string) (bool, error) {
	if err := t.ok(); err != nil {
		return false, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return false, err
	}
	return t.base.DeleteIfExists(ctx, partitionKey, rowKey)
}

// Query runs q and yields its decrypted entities; see entity.Table.Query.
// A row that fails to read is yielded as the zero value with its error.
// A filter that compares an encrypted property is refused (ErrEncryptedFilter),
// unless the property has a beacon and the comparison is eq or ne, which is
// then run on the beacon. $select always brings back the protected
// properties and the metadata, which the signature needs.
func (t *Table[T]) Query(ctx context.Context, q entity.Query) iter.Seq2[T, error] {
	if err := t.ok(); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	return zeroRowsOnError(t.ent.Query(ctx, q))
}

// QueryPage reads one page of q; see entity.Table.QueryPage and Query.
func (t *Table[T]) QueryPage(ctx context.Context, q entity.Query, token string) (entity.Page[T], error) {
	if err := t.ok(); err != nil {
		return entity.Page[T]{}, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return entity.Page[T]{}, err
	}
	p, err := t.ent.QueryPage(ctx, q, token)
	if err != nil {
		return entity.Page[T]{}, err
	}
	return p, nil
}

// QueryPartitions runs q in each partition concurrently; see
// entity.Table.QueryPartitions and Query.
func (t *Table[T]) QueryPartitions(ctx context.Context, partitions []string, q entity.Query, opts entity.FanOutOptions) iter.Seq2[T, error] {
	if err := t.ok(); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	return zeroRowsOnError(t.ent.QueryPartitions(ctx, partitions, q, opts))
}

// BulkWrite encrypts and writes many entities, grouped into transactions by
// partition; see entity.Table.BulkWrite. Mode OpUpsertMerge is refused.
func (t *Table[T]) BulkWrite(ctx context.Context, entities []T, opts entity.BulkOptions) ([]entity.Outcome, error) {
	if err := t.ok(); err != nil {
		return nil, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	if opts.Mode == entity.OpUpsertMerge || opts.Mode == entity.OpMerge {
		return nil, errMerge("BulkWrite with " + opts.Mode.String())
	}
	return t.ent.BulkWrite(ctx, entities, opts)
}

// Marshal returns the encrypted JSON body of e, as Insert would send it:
// for bodies that travel another way (a queue message, a file).
func (t *Table[T]) Marshal(ctx context.Context, e *T) ([]byte, error) {
	if err := t.ok(); err != nil {
		return nil, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	c := t.core.borrow(ctx, "")
	defer c.release()
	return t.hooks.Marshal(e, c)
}

// Unmarshal decrypts and checks a body Marshal made (or the service
// returned, with its annotations: minimal or full metadata) into e. When
// it fails, *e is set to the zero value, never left partly filled.
func (t *Table[T]) Unmarshal(ctx context.Context, data []byte, e *T) error {
	if err := t.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	c := t.core.borrow(ctx, "Unmarshal")
	err := t.hooks.Unmarshal(data, e, c)
	c.release()
	if err != nil && e != nil {
		var zero T
		*e = zero
	}
	return err
}
