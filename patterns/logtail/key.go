package logtail

import (
	"strconv"
	"time"

	"github.com/tablekit/tablekit/keys"
)

// Key is a log entry's RowKey read back by ParseKey.
type Key struct {
	// Time is the entry's instant, truncated to the 100 ns tick, in UTC.
	Time time.Time
	// Seq orders the entries one writer made in the same tick: a larger Seq
	// is newer. 0 for a plain key.
	Seq uint32
	// Writer is the writer id; "" for a plain key (PlainKeys, or a key
	// written by another program with the guide's C# formula).
	Writer string
}

// MaxWriterIDLength is the longest writer id Config accepts.
const MaxWriterIDLength = 32

// seqKeyLength is the length of keys.InvertedTicksSeq's keys.
const seqKeyLength = keys.TicksLength + 1 + 10

// rowKey is the RowKey of an entry: the guide's 19 digits
// (DateTime.MaxValue.Ticks - t.Ticks, "D19"), then, unless plain, "_", the
// inverted sequence number (keys.InvertedTicksSeq) and "_" writer, so that
// entries of one tick stay unique across writers and sort newest first.
func rowKey(t time.Time, seq uint32, writer string) string {
	if writer == "" {
		return keys.InvertedTicks(t)
	}
	return keys.InvertedTicksSeq(t, seq) + "_" + writer
}

// ParseKey reads a log RowKey back: the 19-digit key of the guide's C#
// formula (what PlainKeys writes, and what a .NET writer writes), or the
// sequenced form "<19 digits>_<10 digits>_<writer id>" a Log writes by
// default. Anything else is an *ArgError matching ErrInvalid.
func ParseKey(rowKey string) (Key, error) {
	if len(rowKey) == keys.TicksLength {
		t, err := keys.ParseInvertedTicks(rowKey)
		if err != nil {
			return Key{}, badKey(rowKey, "not 19 digits of inverted ticks", err)
		}
		return Key{Time: t}, nil
	}
	if len(rowKey) < seqKeyLength+2 || rowKey[seqKeyLength] != '_' {
		return Key{}, badKey(rowKey, "want 19 digits, or 19 digits_10 digits_writer id", nil)
	}
	t, seq, err := keys.ParseInvertedTicksSeq(rowKey[:seqKeyLength])
	if err != nil {
		return Key{}, badKey(rowKey, "malformed ticks or sequence number", err)
	}
	w := rowKey[seqKeyLength+1:]
	if err := checkWriterID(w); err != nil {
		return Key{}, badKey(rowKey, "malformed writer id", err)
	}
	return Key{Time: t, Seq: seq, Writer: w}, nil
}

func badKey(rowKey, reason string, err error) error {
	return &ArgError{Op: "ParseKey", Arg: "row key", Value: strconv.Quote(rowKey), Reason: reason, Err: err}
}

// checkWriterID accepts 1 to MaxWriterIDLength ASCII letters, digits and
// '-': valid in a key, and never mistaken for the separator.
func checkWriterID(id string) error {
	if id == "" || len(id) > MaxWriterIDLength {
		return &ConfigError{Field: "Config.WriterID", Reason: strconv.Quote(id) + ": want 1 to " + strconv.Itoa(MaxWriterIDLength) + " characters"}
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-') {
			return &ConfigError{Field: "Config.WriterID", Reason: strconv.Quote(id) + ": want ASCII letters, digits and '-' only"}
		}
	}
	return nil
}

// sinceKey is the RowKey bound below which lie exactly the entries at tick
// `ticks` or later: every key of an earlier tick, plain or sequenced, is at
// least the plain key of tick ticks-1. For ticks = 0 it is
// MaxTicks+1 in 19 digits, above every key.
func sinceKey(ticks int64) string {
	return keys.Pad(keys.MaxTicks-(ticks-1), keys.TicksLength)
}
