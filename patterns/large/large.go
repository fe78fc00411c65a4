package large

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"time"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// Config tunes a Table. The zero value is ready to use.
type Config struct {
	// Processor is the queue processor (patterns/eventual) whose workers
	// delete the blobs that fall out of use: those of a replaced or
	// deleted version, after DeleteDelay, and those of a failed write, at
	// once. New registers a handler on it for a message kind of its own
	// (one per container and prefix; Tables that share both share it):
	// every process that runs its workers must build its Table so, or
	// those messages are poisoned as of an unknown kind. nil means none:
	// the writes send no message, and every blob that falls out of use is
	// left to Sweep, which deletes it once it is older than Grace — run
	// Sweep often enough for the garbage you can afford. Without a
	// processor nothing keeps a replaced version's blobs for DeleteDelay
	// (Sweep cannot tell them from a crash's orphans): a Get that meets one
	// gone reads the entity again (ReadAttempts), a Stream opened later
	// fails with ErrBlobMissing. An inline processor (eventual.NewInline)
	// is refused: it cannot hold a disposal for DeleteDelay.
	Processor *eventual.Processor
	// Prefix starts the name of every blob of the table's entities, so that
	// several tables can share a container and Sweep lists only its own.
	// "" means the table's name and "/". At most 200 characters. Two
	// tables must not share a prefix in one container: the Sweep of one
	// would take the other's blobs for orphans, since it reads references
	// in its own table only.
	Prefix string
	// ReadAttempts is how many times Get reads the entity again when a
	// blob it names is gone because a writer replaced the entity between
	// the two reads; 0 means 5.
	ReadAttempts int
	// Retry bounds the read-and-write rounds of Upsert, and of Replace and
	// Delete with entity.AnyETag, lost to concurrent writers; the zero
	// value means entity.RetryPolicy's defaults.
	Retry entity.RetryPolicy
	// DeleteDelay is how long the Processor's workers keep the blobs of a
	// replaced or deleted version, so that a reader that read that version
	// just before can still read them (Stream.Open in particular); 0 means
	// 1 minute, negative means none. At most eventual.MaxDelay. A blob
	// younger than Grace is kept until it is that old, whatever
	// DeleteDelay says. Sweep does not wait for it: it deletes any blob
	// older than Grace that its entity does not reference.
	DeleteDelay time.Duration
	// Grace is how old a blob that no entity references must be before
	// Sweep or the processor's workers delete it: a younger one may belong
	// to a write under way, or be referenced again by an insert that
	// azcore resends after a lost reply. A write sends no request for its
	// entity later than Grace/2 after starting its uploads: it gives up
	// with ErrUploadExpired, or an error matching entity.ErrOutcomeUnknown
	// when a request may have left. Keep Grace/2 well above the Table
	// service's 30 s server timeout, the longest a request may travel and
	// the clocks' skew. 0 means 1 hour; negative means no wait and no
	// limit, for maintenance while no writer runs, and tests: with writers
	// running, a blob may then be deleted that a resent write references.
	Grace time.Duration
	// BlockSize is the size of the blocks a Stream's value is uploaded in
	// when it is larger than one block (a value of at most one block, and
	// a []byte or string of up to 256 MiB, is one Put Blob request);
	// 0 means 8 MiB. At most 4,000 MiB.
	BlockSize int64
	// Concurrency is how many blocks of one Stream are uploaded at once;
	// 0 means entity.DefaultConcurrency. A Stream upload holds up to Concurrency+1 blocks in memory.
	Concurrency int
	// Hints is how many entities' blob names the Table remembers from its
	// last reads and writes, so that a Get of one of them starts reading
	// its blobs while it reads the entity instead of after; 0 means 1,000,
	// negative means none. A hint that has gone stale (the entity was
	// replaced elsewhere) costs a Get Blob that is cancelled.
	Hints int
	// Checksum is what the entity records of each value it writes, and a
	// read checks: ChecksumSHA256 (the zero value) finds any change of a
	// blob, tampering included; ChecksumCRC32C finds corruption and
	// mix-ups at a tenth of the CPU, not tampering (see Checksum). Values
	// are read by the checksum their entity recorded, whatever this says:
	// a Table reads what a Table of the other Checksum wrote.
	Checksum Checksum
	// Now is the clock that Sweep and the processor's workers compare
	// with the blobs' creation times (the service's clock) to judge their
	// age against Grace; nil means time.Now. A clock ahead of the
	// service's by d makes every blob look d older — keep d well below
	// Grace/2 (see Grace) —, one behind defers deletions by d. Writers do
	// not use it: their Grace/2 deadline runs on the real clock, whatever
	// Now says.
	Now func() time.Time
}

// Limits of Config.
const (
	maxPrefix    = 200
	maxBlockSize = 4000 << 20
)

func (c Config) withDefaults() (Config, error) {
	switch {
	case utf8.RuneCountInString(c.Prefix) > maxPrefix || !utf8.ValidString(c.Prefix):
		return c, &ConfigError{Field: "Config.Prefix", Reason: fmt.Sprintf("%q is longer than %d characters or not UTF-8", c.Prefix, maxPrefix)}
	case c.ReadAttempts < 0:
		return c, &ConfigError{Field: "Config.ReadAttempts", Reason: argerr.Negative}
	case c.DeleteDelay > eventual.MaxDelay:
		return c, &ConfigError{Field: "Config.DeleteDelay", Reason: fmt.Sprintf("%v is more than %v", c.DeleteDelay, eventual.MaxDelay)}
	case c.BlockSize < 0 || c.BlockSize > maxBlockSize:
		return c, &ConfigError{Field: "Config.BlockSize", Reason: fmt.Sprintf("%d is not between 1 and %d bytes", c.BlockSize, int64(maxBlockSize))}
	case c.Concurrency < 0:
		return c, &ConfigError{Field: "Config.Concurrency", Reason: argerr.Negative}
	case !c.Checksum.valid():
		return c, &ConfigError{Field: "Config.Checksum", Reason: fmt.Sprintf("%v is not ChecksumSHA256 or ChecksumCRC32C", c.Checksum)}
	}
	if c.ReadAttempts == 0 {
		c.ReadAttempts = 5
	}
	if c.DeleteDelay == 0 {
		c.DeleteDelay = time.Minute
	}
	if c.Grace == 0 {
		c.Grace = time.Hour
	}
	if c.BlockSize == 0 {
		c.BlockSize = 8 << 20
	}
	if c.Concurrency == 0 {
		c.Concurrency = entity.DefaultConcurrency
	}
	if c.Hints == 0 {
		c.Hints = 1000
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}

// Table stores entities of type T whose fields tagged blob live in blob
// storage (design guide §6.11). It is safe for concurrent use.
type Table[T any] struct {
	rows *entity.Table[entity.DynamicEntity] // through table's protection, if any
	refs *entity.Table[entity.DynamicEntity] // without it: reads of references only
	// codec converts T: the table given to New, which converts the fields
	// it encrypts (package crypt) too, for rows to encrypt them.
	codec  *entity.Table[T]
	blobs  *container.Client
	proc   *eventual.Processor // nil: Sweep alone disposes of blobs
	kind   eventual.Kind[disposal]
	fields []field
	props  []string // the properties holding references, in field order
	prefix string
	cfg    Config
	hints  *hints
}

// New returns a Table storing T's entities in table's table and their
// blob fields in blobs, deleting blobs no longer needed through
// cfg.Processor when there is one (see Config.Processor) and by Sweep.
//
// T is a struct with `table` tags whose blob fields — a []byte, a string
// or a Stream, tagged `table:",blob"` — are fields of T itself.
func New[T any](table *entity.Table[T], blobs *container.Client, cfg Config) (*Table[T], error) {
	switch {
	case table == nil:
		return nil, &ConfigError{Field: "table", Reason: argerr.Nil}
	case blobs == nil:
		return nil, &ConfigError{Field: "blobs", Reason: "is a nil container client"}
	case cfg.Processor.Inline():
		// Its messages run at once: a disposal could not wait DeleteDelay.
		return nil, &ConfigError{Field: "Config.Processor", Reason: "is inline (eventual.NewInline), which cannot hold a disposal for Config.DeleteDelay: give a queued processor (eventual.New), or none and run Sweep"}
	}
	fields, err := fieldsOf(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	prefix := cfg.Prefix
	if prefix == "" {
		if table.Name() == "" {
			return nil, &ConfigError{Field: "Config.Prefix", Reason: "is empty, and the table's name is unknown (a client built without entity.ClientOptions): set one"}
		}
		prefix = table.Name() + "/"
	}
	for _, f := range fields {
		if _, maybe := table.Encrypts(f.Name); maybe {
			return nil, &ConfigError{Field: "table", Reason: "may encrypt property " + f.Name + " (package crypt's Config.Encrypt), which holds the reference of blob field " + f.GoName +
				": this package stores blob values in clear, so a value meant to be encrypted would not be; list the properties Config.Encrypt may choose in Config.Encryptable, without the blob fields, or keep the value in an encrypted property of the entity"}
		}
	}
	// A protected table's view encrypts what it writes and decrypts what
	// it reads; the references are never encrypted (checked above), so
	// the disposal's reads of them need no key.
	rows, err := entity.ViewAs[entity.DynamicEntity](table)
	if err != nil {
		return nil, err
	}
	refs, err := entity.NewTable[entity.DynamicEntity](table.Client())
	if err != nil {
		return nil, err
	}
	t := &Table[T]{
		// Write tokens settle a conditional write whose reply was lost.
		rows:   rows.WithWriteTokens(),
		refs:   refs,
		codec:  table,
		blobs:  blobs,
		proc:   cfg.Processor,
		kind:   eventual.NewKind[disposal](kindName(blobs.URL(), prefix)),
		fields: fields,
		prefix: prefix,
		cfg:    cfg,
		hints:  newHints(cfg.Hints),
	}
	for _, f := range fields {
		t.props = append(t.props, f.Name)
	}
	if t.proc == nil {
		return t, nil
	}
	err = eventual.Handle(t.proc, t.kind, t.dispose, eventual.HandleOptions{})
	if err != nil && !errors.Is(err, eventual.ErrDuplicateKind) {
		return nil, err
	}
	return t, nil
}

// kindName names the disposal kind of a container and prefix: readable,
// and distinct for two accounts with a container of the same name.
func kindName(containerURL, prefix string) string {
	name := "container"
	if parts, err := blob.ParseURL(containerURL); err == nil && parts.ContainerName != "" {
		name = parts.ContainerName
	}
	sum := sha256.Sum256([]byte(containerURL + "\n" + prefix))
	return "tablekit.large.v1." + name + "." + hex.EncodeToString(sum[:4])
}
