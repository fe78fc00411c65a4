// Package keys builds PartitionKey and RowKey strings that sort the way the
// values they encode sort.
//
// The Table service returns entities sorted by PartitionKey, then RowKey,
// and both are strings, so every sort order and every range query of the
// design guide depends on encoding values as keys correctly. This package
// implements the guide's key techniques:
//
//   - §2 Design for querying: numbers as fixed-width, zero-padded strings
//     (Pad, PadChecked; OrderedInt for negative and positive numbers
//     together), and range queries by key prefix (PrefixRange, RangeFilter).
//   - §6.1 Intra-partition secondary index: prefixed RowKeys such as
//     "email_jonesj@contoso.com", queried with
//     "RowKey ge 'email_' and RowKey lt 'email`'" (PrefixRange("email_")).
//   - §6.6 Compound key: several values in one key that keeps tuple order
//     and splits back unambiguously (Compound, SplitCompound, CompoundPrefix;
//     Join for the guide's readable "empid_000123_2012" when the parts are
//     known to be safe).
//   - §6.7 Log tail: RowKeys that sort newest first, the .NET inverted ticks
//     DateTime.MaxValue.Ticks - t.Ticks in 19 digits (InvertedTicks,
//     ParseInvertedTicks, Ticks), their oldest-first counterpart (TicksKey),
//     and unique keys for entities written in the same 100 ns tick
//     (InvertedTicksSeq, TicksKeySeq, Sequencer).
//   - §6.12 Prepend/append anti-pattern: a stable hash bucket to spread
//     writes over partitions, and the list of buckets for fan-out reads
//     (Bucket, Buckets).
//   - §1 Key rules: Validate checks the forbidden characters ('/', '\',
//     '#', '?', U+0000–U+001F, U+007F–U+009F), valid UTF-8 and the length
//     limit (MaxKeyLength, 512 UTF-16 code units = 1 KiB); Escape and
//     Unescape turn any string into a valid key and back, preserving order.
//
// # Order
//
// The service compares keys by UTF-16 code units (Compare). Go compares
// strings by UTF-8 bytes, which is code point order. The two agree except
// between supplementary characters (U+10000 and up) and U+E000–U+FFFF:
// Go sorts the supplementary character last, the service first. The
// builders of this package produce ASCII structure around the caller's
// values, so their order guarantees hold in both orders; PrefixRange is
// computed in the service's order, since that is where ranges are
// evaluated. To sort or range-check keys in Go as the service would, use
// Compare.
//
// # Errors
//
// Functions that can fail return a *KeyError, which matches ErrInvalidKey
// with errors.Is and names the rule broken (Rule), the offending value and
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
//	filter := "PartitionKey eq 'Sales' and " + keys.RangeFilter("RowKey", from, to)
package keys
