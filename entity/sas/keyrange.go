package sas

import (
	"strconv"
	"strings"

	"github.com/tablekit/tablekit/keys"
)

// KeyRange limits a table SAS to the entities whose keys lie between a
// start and an end, both inclusive (spk, srk, epk, erk). An empty field is
// no bound: the zero KeyRange is the whole table. A RowKey bound needs the
// PartitionKey bound on the same side. The REST reference defines the range
// as:
//
//	StartPK alone:         PartitionKey >= StartPK
//	EndPK alone:           PartitionKey <= EndPK
//	StartPK and StartRK:   PartitionKey > StartPK || (PartitionKey == StartPK && RowKey >= StartRK)
//	EndPK and EndRK:       PartitionKey < EndPK   || (PartitionKey == EndPK && RowKey <= EndRK)
//
// Contains evaluates exactly that, in the service's key order
// ([keys.Compare]). Partition, Rows and RowPrefix build the ranges of the
// design guide's scenario (§7): one user's partition, or one user's rows.
type KeyRange struct {
	StartPK, StartRK string
	EndPK, EndRK     string
}

// Partition is the range of one whole partition. An empty PartitionKey
// cannot be a bound (an empty bound is no bound), so Partition("") is the
// zero range, the whole table, which Issuer.Grant refuses.
func Partition(partitionKey string) KeyRange {
	return KeyRange{StartPK: partitionKey, EndPK: partitionKey}
}

// Rows is the range of the rows of one partition from fromRK to toRK, both
// inclusive.
func Rows(partitionKey, fromRK, toRK string) KeyRange {
	return KeyRange{StartPK: partitionKey, StartRK: fromRK, EndPK: partitionKey, EndRK: toRK}
}

// RowPrefix is the range of the rows of one partition whose RowKey starts
// with prefix, such as keys.Compound(userID)+" " for the compound keys
// userID, item: the RowKeys from prefix to prefix+"\uFFFF". U+FFFF is the
// largest UTF-16 code unit, so that bound is above every RowKey starting
// with prefix except those in which U+FFFF itself (a noncharacter) follows
// the prefix and more characters follow it; every key in the range starts
// with prefix. An empty prefix is the whole partition.
func RowPrefix(partitionKey, prefix string) KeyRange {
	if prefix == "" {
		return Partition(partitionKey)
	}
	end := prefix + "\uFFFF"
	if keys.UTF16Len(prefix) >= keys.MaxKeyLength {
		end = prefix // no longer key starts with prefix
	}
	return Rows(partitionKey, prefix, end)
}

// IsZero reports whether r has no bound: the whole table.
func (r KeyRange) IsZero() bool { return r == KeyRange{} }

// Contains reports whether the entity with these keys is inside r, by the
// REST reference's definition and the service's key order.
func (r KeyRange) Contains(partitionKey, rowKey string) bool {
	if r.StartPK != "" {
		c := keys.Compare(partitionKey, r.StartPK)
		if c < 0 || c == 0 && r.StartRK != "" && keys.Compare(rowKey, r.StartRK) < 0 {
			return false
		}
	}
	if r.EndPK != "" {
		c := keys.Compare(partitionKey, r.EndPK)
		if c > 0 || c == 0 && r.EndRK != "" && keys.Compare(rowKey, r.EndRK) > 0 {
			return false
		}
	}
	return true
}

// check validates r: every bound a valid key, a RowKey bound only with its
// PartitionKey bound, and a start not after the end (a range that holds no
// key is refused rather than signed).
func (r KeyRange) check() error {
	for _, b := range [...]struct{ field, v string }{{"spk", r.StartPK}, {"srk", r.StartRK}, {"epk", r.EndPK}, {"erk", r.EndRK}} {
		if err := keys.Validate(b.v); err != nil {
			return &FieldError{Field: b.field, Value: quote(b.v), Reason: "a key range bound must be a valid key", Err: err}
		}
	}
	if r.StartRK != "" && r.StartPK == "" {
		return invalid("srk", r.StartRK, "a start RowKey needs a start PartitionKey (spk)")
	}
	if r.EndRK != "" && r.EndPK == "" {
		return invalid("erk", r.EndRK, "an end RowKey needs an end PartitionKey (epk)")
	}
	if r.StartPK != "" && r.EndPK != "" {
		c := keys.Compare(r.StartPK, r.EndPK)
		if c > 0 || c == 0 && r.StartRK != "" && r.EndRK != "" && keys.Compare(r.StartRK, r.EndRK) > 0 {
			return invalid("spk", r.String(), "the range is empty: its start is after its end")
		}
	}
	return nil
}

// String shows the range's bounds for messages, such as
// [spk="alice" epk="alice"]; [] is the whole table.
func (r KeyRange) String() string {
	var b strings.Builder
	b.WriteString("[")
	for _, f := range [...]struct{ name, v string }{{"spk", r.StartPK}, {"srk", r.StartRK}, {"epk", r.EndPK}, {"erk", r.EndRK}} {
		if f.v == "" {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(' ')
		}
		b.WriteString(f.name)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(f.v))
	}
	b.WriteString("]")
	return b.String()
}
