// Package keys builds PartitionKey and RowKey strings that sort the way the
// values they encode sort.
//
// The Table service returns entities sorted by PartitionKey, then RowKey,
// and both are strings, so every sort order and every range query of the
// design guide depends on encoding values as keys correctly. This package
// implements the guide's key techniques:
//
//   - §2 [Design for querying]: numbers as fixed-width, zero-padded strings
//     ([Pad], [PadChecked]; [OrderedInt] for negative and positive numbers
//     together), and range queries by key prefix ([PrefixRange]; package entity/filter turns a
//     range into a typed filter with
//     [github.com/tablekit/tablekit/entity/filter.RowKeyRange]).
//   - §6.1 [Intra-partition secondary index]: prefixed RowKeys such as
//     "email_jonesj@contoso.com", queried with
//     "RowKey ge 'email_' and RowKey lt 'email`'" (PrefixRange("email_")).
//   - §6.6 [Compound key]: several values in one key that keeps tuple order
//     and splits back unambiguously ([Compound], [SplitCompound], [CompoundPrefix];
//     [Join] for the guide's readable "empid_000123_2012" when the parts are
//     known to be safe).
//   - §6.7 [Log tail]: RowKeys that sort newest first, the .NET inverted ticks
//     DateTime.MaxValue.Ticks - t.Ticks in 19 digits ([InvertedTicks],
//     [ParseInvertedTicks], [Ticks]), their oldest-first counterpart ([TicksKey]),
//     and unique keys for entities written in the same 100 ns tick
//     ([InvertedTicksSeq], [TicksKeySeq], [Sequencer]).
//   - §6.12 [Prepend/append anti-pattern]: a stable hash bucket to spread
//     writes over partitions, and the list of buckets for fan-out reads
//     ([Bucket], [Buckets]).
//   - §1 [Key rules]: [Validate] checks the forbidden characters ('/', '\',
//     '#', '?', U+0000–U+001F, U+007F–U+009F), valid UTF-8 and the length
//     limit ([MaxKeyLength], 512 UTF-16 code units = 1 KiB); [Escape] and
//     [Unescape] turn any string into a valid key and back, preserving order.
//
// # Order
//
// The service compares keys by UTF-16 code units ([Compare]). Go compares
// strings by UTF-8 bytes, which is code point order. The two agree except
// between supplementary characters (U+10000 and up) and U+E000–U+FFFF:
// Go sorts the supplementary character last, the service first. The
// builders of this package produce ASCII structure around the caller's
// values, so their order guarantees hold in both orders; PrefixRange is
// computed in the service's order, since that is where ranges are
// evaluated. To sort or range-check keys in Go as the service would, use
// Compare.
//
// # Compound keys
//
// Compound joins parts with a SPACE (U+0020) and escapes, inside a part,
// every space as "! " and every '!' (U+0021) as "!!". Nothing else changes:
//
//	Compound("empid", "000123", "2012")   = "empid 000123 2012"
//	Compound("New York", "a!b")           = "New! York a!!b"
//
// Why order holds. A key cannot contain U+0000–U+001F, so the space is the
// smallest character a valid part can contain, and '!' the next one. After
// escaping, every character of a part is written as a code that begins
// with a character of at least '!': the character itself, or "! " and "!!"
// for the two escaped ones. "! " < "!!" < '"' and every other character is
// at least '"', so the codes keep the order of the characters they stand
// for, and none is a prefix of another: escaping preserves the order of
// parts. The separator sorts below the first
// character of every code, so when one part is a proper prefix of the other,
// the key whose part ends (followed by the separator or by the end of the
// key) sorts first, as the shorter part does. Hence Compound(a...) <
// Compound(b...) exactly when a comes before b element by element, and a
// shorter tuple that is a prefix of a longer one sorts first. (Parts that
// contain control characters below U+0020, which no key may contain, sort
// below the separator and get no order guarantee; they still round-trip.)
//
// The argument only uses the fact that ' ' and '!' are single units below
// every other character of a valid part, which is true for UTF-8 bytes and
// for UTF-16 code units alike: the order holds in Go's byte order, with
// parts compared by bytes, and in the service's UTF-16 order (Compare), with
// parts compared by Compare.
//
// Round trip: SplitCompound(Compound(p...)) returns p for every non-empty
// list of parts, whatever they contain. The one exception is the empty
// list: Compound() is "", the same key as Compound(""), and SplitCompound("")
// returns [""]. The key is valid (Validate) whenever the parts contain no
// forbidden character and it is not too long; [CompoundChecked] checks both.
//
// # Escaping
//
// Escape turns any string into one that contains no character a key
// forbids, reversibly (Unescape) and preserving order: for valid UTF-8 a
// and b, a < b exactly when Escape(a) < Escape(b), in Go's byte order and
// in the service's UTF-16 order (Compare) alike.
//
// Order decides the design. A forbidden character must be replaced by a
// code that sorts where the character did, between its neighbours; the
// code must start with an allowed character not above the forbidden one,
// and that allowed character must then be escaped too, so that codes stay
// unambiguous. The forbidden characters fall into six runs, each escaped
// together with the allowed character just below it (the "lead"), as the
// lead followed by one ASCII character that numbers the run's members:
//
//	lead ' ' : U+0000 … U+0020      -> " 0" … " 9", " A" … " W"
//	           (the controls, and the space itself: " W" is a space)
//	lead '"' : '"' '#'              -> "\"0" "\"1"
//	lead '.' : '.' '/'              -> ".0" ".1"
//	lead '>' : '>' '?'              -> ">0" ">1"
//	lead '[' : '[' '\'              -> "[0" "[1"
//	lead '~' : '~' U+007F U+0080 … U+009F -> "~0" "~1" "~2" … "~X"
//
// The numbering characters (0-9, then A-Z) increase with the characters
// they stand for, so each code sorts exactly where its character did, and
// no code is a prefix of another. Every other character is copied
// unchanged: letters, digits, most punctuation, and everything from U+00A0
// up, so ordinary text stays readable apart from spaces and the six leads:
// Escape("a/b c") is "a.1b Wc", Escape("x.y") is "x.0y".
//
// A byte that is not valid UTF-8 is written as "~~" and two upper-case hex
// digits ("~~FF"), so any Go string round-trips; strings with invalid UTF-8
// are not text and get no order guarantee.
//
// Escaping lengthens the string (an escaped character takes two bytes, an
// invalid byte four), so the result can be longer than MaxKeyLength:
// Validate it if the input is not known to be short.
//
// # Unique time keys
//
// Two keys made in the same 100 ns tick are equal, and an entity written
// with the second one replaces (or conflicts with) the first. The Seq
// variants append a sequence number that orders keys within one tick:
//
//	InvertedTicksSeq(t, seq) = InvertedTicks(t) + "_" + 10 digits of (4294967295 - seq)
//	TicksKeySeq(t, seq)      = TicksKey(t)      + "_" + 10 digits of seq
//
// Both are 30 characters. With the same t, a larger seq sorts first in the
// inverted form (newest first, as the ticks do) and last in the forward form
// (oldest first). The 19-digit time part is unchanged, so these keys
// interleave by time with plain 19-digit keys from .NET services; a plain
// key sorts before every suffixed key of the same tick.
//
// A Sequencer hands out (time, seq) pairs that increase strictly, even when
// calls come faster than one per tick or the clock steps back. It makes
// keys unique per writer; with several writers, add a writer id after the
// key (or in the PartitionKey) as well.
//
// A Sequencer is for events stamped as they happen (time.Now()): it never
// goes back, so a time earlier than one it already gave comes back as that
// later time. Do not key given timestamps with it — an order dated last
// week, a replayed import — or they are keyed "now". For those, use
// InvertedTicks(t) (or TicksKey(t)) followed by something unique to the
// record, such as its id: keys.Compound(keys.InvertedTicks(order.Placed),
// order.ID).
//
// # Key length
//
// MaxKeyLength is 512 UTF-16 code units (1 KiB of UTF-16): the REST
// reference says a key "may be up to 1 KiB in size", the service stores
// strings as UTF-16, and Azurite rejects longer keys. See MaxKeyLength for
// the sources, and [ValidateLimit] for another limit.
//
// # Errors
//
// Functions that can fail return a [*KeyError], which matches [ErrInvalidKey]
// with errors.Is and names the rule broken ([Rule]), the offending value and
// position, and the limit. Functions that cannot return an error (Pad,
// Bucket, InvertedTicks, …) document what they do with out-of-range input
// and have a Checked variant that reports it instead. No function panics.
//
// # Example
//
// A log tail, newest first, in a partition per device:
//
//	pk := keys.Compound("device", deviceID)
//	rk := keys.InvertedTicks(time.Now())    // "2519954711999999999" for 2014-07-31T18:00:00Z
//	// query PartitionKey eq pk with $top=10 for the ten newest entries
//
// An employee's reviews by year, one prefix range for all of them:
//
//	rk := keys.Compound("empid", keys.Pad(123, 6), "2012") // "empid 000123 2012"
//	from, to := keys.CompoundPrefix("empid", keys.Pad(123, 6))
//	f := filter.PK("Sales").And(filter.RowKeyRange(from, to)) // package entity/filter
//
// [Design for querying]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-for-query
// [Intra-partition secondary index]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#intra-partition-secondary-index-pattern
// [Compound key]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#compound-key-pattern
// [Log tail]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#log-tail-pattern
// [Prepend/append anti-pattern]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#prepend-append-anti-pattern
// [Key rules]: https://learn.microsoft.com/rest/api/storageservices/understanding-the-table-service-data-model
package keys
