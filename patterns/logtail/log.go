package logtail

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
)

// Config tunes a Log. The zero Config is a sorted Azure Table Storage log
// with sequenced keys, a random writer id and the system clock.
type Config struct {
	// WriterID ends every RowKey this Log writes, so that entries that several
	// writers (processes, or Logs) make in the same 100 ns tick stay distinct
	// and a retried write can only ever meet its own entry. 1 to
	// MaxWriterIDLength ASCII letters, digits and '-'; "" means a random
	// 12-digit hex id drawn by New. Give each concurrent writer its own.
	WriterID string
	// PlainKeys writes RowKeys that are exactly the guide's C# formula,
	// (DateTime.MaxValue.Ticks - t.Ticks).ToString("D19"), with no suffix,
	// for logs that .NET code reads back as ticks. The entries of one Log get
	// strictly increasing ticks (an entry in the tick of the previous one
	// moves to the next tick), but nothing tells two writers apart: use one
	// writer per partition, whose inserts then never collide.
	PlainKeys bool
	// Now gives an appended entry its instant; nil means time.Now. The
	// RowKey keeps it to the 100 ns tick. Every Config of tablekit names
	// its clock Now, a func() time.Time.
	Now func() time.Time
	// Clock is Now's former name, used when Now is nil.
	//
	// Deprecated: set Now.
	Clock func() time.Time
	// Unsorted declares a backend that does not return entities in key order:
	// the Cosmos DB Table API. Tail, Since and Between then read every
	// matching entity of the partition and sort on the client (keep such
	// partitions small, for example one per day); Page is refused with
	// ErrUnsorted. false means Azure Table Storage (and Azurite), which sort.
	Unsorted bool
}

func (c Config) withDefaults() (Config, error) {
	if c.WriterID == "" && !c.PlainKeys {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return c, err
		}
		c.WriterID = hex.EncodeToString(b[:])
	}
	if c.PlainKeys {
		c.WriterID = ""
	} else if err := checkWriterID(c.WriterID); err != nil {
		return c, err
	}
	if c.Now == nil {
		c.Now = c.Clock
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}

// Log is an append-only log per partition of one table whose entries are
// T, newest first (design guide §6.7). It is safe for concurrent use; one
// Log is one writer.
type Log[T any] struct {
	tbl  *entity.Table[T]
	rows *entity.Table[entity.DynamicEntity] // the same table, for Trim's key-only reads
	cfg  Config

	seq keys.Sequencer // sequenced keys: (tick, seq) strictly increasing

	mu        sync.Mutex // plain keys: the last tick handed out
	lastPlain int64
	usedPlain bool

	trimPage int // the page size of Trim's listings; 0 means the service's 1,000
}

// New returns a log over tbl, whose type T must have PartitionKey and
// RowKey fields: Append sets them.
func New[T any](tbl *entity.Table[T], cfg Config) (*Log[T], error) {
	if tbl == nil {
		return nil, &ConfigError{Field: "table", Reason: ReasonNil}
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	rows, err := entity.NewTable[entity.DynamicEntity](tbl.Client())
	if err != nil {
		return nil, err
	}
	return &Log[T]{tbl: tbl, rows: rows, cfg: cfg}, nil
}

// WriterID returns the id that ends this Log's RowKeys ("" with PlainKeys).
func (l *Log[T]) WriterID() string {
	if l.ok() != nil {
		return ""
	}
	return l.cfg.WriterID
}

// nextKey returns the RowKey of the next entry made at now.
func (l *Log[T]) nextKey(now time.Time) string {
	if !l.cfg.PlainKeys {
		t, s := l.seq.Next(now)
		return rowKey(t, s, l.cfg.WriterID)
	}
	ticks := keys.Ticks(now)
	l.mu.Lock()
	if l.usedPlain && ticks <= l.lastPlain {
		ticks = min(l.lastPlain+1, keys.MaxTicks)
	}
	l.lastPlain, l.usedPlain = ticks, true
	l.mu.Unlock()
	return rowKey(keys.FromTicks(ticks), 0, "")
}

// firstKey is the smallest key of the log, the plain key of the newest
// possible tick. Every key rowKey makes lies in [firstKey, sinceKey(0)), so
// the log may share its partition with entities whose RowKeys do not start
// with a digit.
var firstKey = keys.InvertedTicks(keys.FromTicks(keys.MaxTicks)) // "0000000000000000000"

// rangeFilter selects the entries of partition whose tick is at least from
// and below to; to > keys.MaxTicks means no upper bound.
func rangeFilter(partition string, from, to int64) filter.Expr {
	lo := firstKey
	if to <= keys.MaxTicks {
		lo = sinceKey(to)
	}
	return filter.PK(partition).And(filter.RowKeyRange(lo, sinceKey(from)))
}

// checkPartition refuses a partition that is not a valid key.
func checkPartition(op, partition string) error {
	if err := keys.Validate(partition); err != nil {
		return &ArgError{Op: op, Arg: "partition", Value: quoteShort(partition), Reason: "not a valid PartitionKey", Err: err}
	}
	return nil
}

func quoteShort(s string) string {
	if r := []rune(s); len(r) > 64 {
		s = string(r[:64]) + "…"
	}
	return strconv.Quote(s)
}

// wrap names the operation and partition of a storage error.
func wrap(op, partition string, err error) error {
	if err == nil {
		return nil
	}
	var ae *ArgError
	if errors.As(err, &ae) {
		return err
	}
	return &Error{Op: op, Partition: partition, Err: err}
}
