package indexentity

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// Placement says where an index keeps its lists: the guide's three
// options (§6.4).
type Placement uint8

const (
	// SamePartition keeps each value's list in an index entity in the
	// primaries' partition (option 2: PartitionKey "Sales", RowKey
	// "lastname_Jones"), written in the primary's entity group transaction
	// on condition of the index entity's ETag: a list always agrees with
	// its primaries.
	SamePartition Placement = iota
	// OtherPartition keeps the index entities in partition
	// Name_PartitionKey ("lastname_Sales") of Config.Entries or the
	// primary's table (option 3), written by patterns/eventual after the
	// primary: a list that catches up.
	OtherPartition
	// Blob keeps each value's list in a block blob of Config.Blobs
	// (option 1), named Name/Compound(PartitionKey, value).keys, written
	// by patterns/eventual after the primary on condition of the blob's
	// ETag: a list that catches up, and has no size limit.
	Blob
	// TableWide keeps each value's list across the whole table: "all
	// employees named Jones, whatever their department". The members are
	// the primaries' keys, keys.Compound(PartitionKey, RowKey), spread
	// over Index.Buckets lists by keys.Bucket of the member; the list of
	// bucket b is index entities in partition Name_Compound(value, b)
	// ("status_pending 07") of Config.Entries or the primary's table,
	// RowKey Name_value as for OtherPartition, spilling the same way.
	// Kept by patterns/eventual after the primary, as OtherPartition
	// lists are; looked up with LookupValueAll, without a PartitionKey.
	TableWide
)

// DefaultBuckets is the bucket count of a TableWide index whose
// Index.Buckets is 0.
const DefaultBuckets = 16

// MaxBuckets is the largest Index.Buckets: a lookup reads every bucket.
const MaxBuckets = 1000

func (p Placement) String() string {
	switch p {
	case SamePartition:
		return "same partition"
	case OtherPartition:
		return "other partition"
	case Blob:
		return "blob"
	case TableWide:
		return "table-wide"
	}
	return "Placement(" + strconv.Itoa(int(p)) + ")"
}

// Index declares one index of entities of type T by a value many entities
// may share (an employee's last name): its name, the value, and where the
// lists of entities holding each value live.
type Index[T any] struct {
	// Name names the index in lookups, errors and findings, and makes the
	// RowKey prefix of its index entities, Name + "_"
	// ("lastname_Jones"). 1 to 32 ASCII letters and digits, unique in the
	// Set.
	Name string
	// Value returns the indexed value of e as it goes into a key ("Jones"),
	// and false when e is not in this index. The value becomes part of a
	// RowKey: it must not contain '/', '\', '#', '?' or control
	// characters (use keys.Escape for values that may). Lookups take
	// values in the same form.
	Value func(e *T) (value string, ok bool)
	// Placement is where the lists live; the zero value is SamePartition.
	Placement Placement
	// Buckets is how many lists a TableWide index spreads each value's
	// members over (each in a partition of its own): 0 means
	// DefaultBuckets, at most MaxBuckets; set only for TableWide indexes.
	// Changing it moves most members: one Rebuild after the change lists
	// them where they now go and removes them from the old lists (see the
	// package documentation), as after any change of the index's layout.
	Buckets int
	// Encrypted names the property of an encrypted primary table (package
	// crypt's Table.Entity) whose value Value returns, or a function of it:
	// the lists are then kept under the value's beacon
	// (entity.Table.Beacon of the property, in lower-case hex) instead of
	// the value, which no index entity, blob, message or error holds, and
	// a lookup checks each member read (decrypted) against the value
	// itself. The property must be tagged encrypt and listed in crypt's
	// Config.Beacons; New refuses one the table stores in clear, encrypts
	// for some entities only or without a beacon, and Encrypted on a
	// table that is not encrypted, with a *DeclarationError (Field
	// "Encrypted"). See the package documentation, section Encrypted
	// tables.
	Encrypted string
}

const (
	internalPrefix = indexset.InternalPrefix // RowKeys of tablekit's own entities (outbox intents, Once markers)
	blobSuffix     = ".keys"
	maxBlobName    = 1024
)

// index is a checked declaration with what its keys need.
type index[T any] struct {
	Index[T]
	pos    int
	prefix string // Name + "_"
	// beacon keys the lists of an Encrypted index (nil: in clear).
	beacon *indexset.Beacon
}

// keyText is the text of an indexed value in the index's keys: value
// itself, or the hex of its beacon for an Encrypted index.
func (ix *index[T]) keyText(value string) (string, error) {
	return indexset.KeyText[pkg](ix.beacon, ix.Name, value)
}

// text is e's value in ix as it goes into keys; has is false when e is
// not in the index or its value has no text.
func (ix *index[T]) text(e *T) (string, bool) {
	v, has := ix.Value(e)
	if !has {
		return "", false
	}
	v, err := ix.keyText(v)
	return v, err == nil
}

func compile[T any](i int, d Index[T], prot *entity.Table[T]) (*index[T], error) {
	bad := func(field, reason string) error {
		return &DeclarationError{Index: d.Name, Position: i, Field: field, Reason: reason}
	}
	if err := indexset.CheckName[pkg](i, d.Name); err != nil {
		return nil, err
	}
	if d.Value == nil {
		return nil, bad("Value", "is nil")
	}
	if d.Placement > TableWide {
		return nil, bad("Placement", "is not SamePartition, OtherPartition, Blob or TableWide")
	}
	var err error
	if d.Buckets, err = indexset.Buckets[pkg](i, d.Name, d.Buckets, d.Placement == TableWide, DefaultBuckets, MaxBuckets); err != nil {
		return nil, err
	}
	ix := &index[T]{Index: d, pos: i, prefix: d.Name + "_"}
	if d.Encrypted != "" {
		var reason string
		if ix.beacon, reason = indexset.NewBeacon(prot, d.Encrypted); reason != "" {
			return nil, bad("Encrypted", reason)
		}
	}
	return ix, nil
}

// Remote reports an index kept by patterns/eventual.
func (ix *index[T]) Remote() bool { return ix.Placement != SamePartition }

// IndexName is the index's Name.
func (ix *index[T]) IndexName() string { return ix.Name }

// entryPK is the PartitionKey of the index entities of primaries in
// partition pk (not for Blob indexes).
func (ix *index[T]) entryPK(pk string) string {
	if ix.Placement == OtherPartition {
		return ix.prefix + pk
	}
	return pk
}

// wideMember is primary pk/rk as a TableWide list names it.
func wideMember(pk, rk string) string { return keys.Compound(pk, rk) }

// splitMember is the inverse of wideMember.
func splitMember(m string) (pk, rk string, ok bool) { return split2(m) }

// split2 splits a compound of two parts (keys.Compound); ok is false for
// anything else.
func split2(s string) (a, b string, ok bool) {
	parts, err := keys.SplitCompound(s)
	if err != nil || len(parts) != 2 {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// wideBucket is the bucket of a TableWide list member.
func (ix *index[T]) wideBucket(member string) string { return keys.Bucket(member, ix.Buckets) }

// widePK is the PartitionKey of the index entities of value's list in
// bucket b of a TableWide index.
func (ix *index[T]) widePK(value, b string) string { return ix.prefix + keys.Compound(value, b) }

// buckets lists the bucket names of a TableWide index, in key order.
func (ix *index[T]) buckets() []string {
	return slices.Collect(keys.Buckets(ix.Buckets))
}

// parseWidePK is the inverse of widePK.
func (ix *index[T]) parseWidePK(epk string) (value, b string, ok bool) {
	rest, ok := strings.CutPrefix(epk, ix.prefix)
	if !ok {
		return "", "", false
	}
	return split2(rest)
}

// ownerPartition is the inverse of entryPK.
func (ix *index[T]) ownerPartition(epk string) (string, bool) {
	if ix.Placement != OtherPartition {
		return epk, true
	}
	return strings.CutPrefix(epk, ix.prefix)
}

// headRK is the RowKey of value's first index entity.
func (ix *index[T]) headRK(value string) string { return ix.prefix + keys.Compound(value) }

// chunkRK is the RowKey of value's continuation entity number id.
func (ix *index[T]) chunkRK(value string, id int64) string {
	return ix.prefix + keys.Compound(value, strconv.FormatInt(id, 10))
}

// valueRange is the RowKey range of all of value's index entities.
func (ix *index[T]) valueRange(value string) (from, to string) {
	from, to = keys.CompoundPrefix(value)
	return ix.prefix + from, ix.prefix + to
}

// parseRK splits an index entity's RowKey into the value and, for a
// continuation entity, its number (0 for the first entity). ok is false
// for a RowKey this index did not make.
func (ix *index[T]) parseRK(rk string) (value string, id int64, ok bool) {
	rest, ok := strings.CutPrefix(rk, ix.prefix)
	if !ok {
		return "", 0, false
	}
	parts, err := keys.SplitCompound(rest)
	if err != nil {
		return "", 0, false
	}
	switch len(parts) {
	case 1:
		return parts[0], 0, true
	case 2:
		id, err := strconv.ParseInt(parts[1], 10, 64)
		if err != nil || id < 1 || strconv.FormatInt(id, 10) != parts[1] {
			return "", 0, false
		}
		return parts[0], id, true
	}
	return "", 0, false
}

// blobName is the name of the blob of value's list for partition pk.
func (ix *index[T]) blobName(pk, value string) string {
	return ix.Name + "/" + keys.Compound(pk, value) + blobSuffix
}

// blobPrefix is the name prefix of the blobs of partition pk, or of every
// blob of the index when all is set.
func (ix *index[T]) blobPrefix(pk string, all bool) string {
	if all {
		return ix.Name + "/"
	}
	return ix.Name + "/" + keys.Compound(pk) + " "
}

// parseBlobName is the inverse of blobName.
func (ix *index[T]) parseBlobName(name string) (pk, value string, ok bool) {
	rest, ok := strings.CutPrefix(name, ix.Name+"/")
	if !ok {
		return "", "", false
	}
	rest, ok = strings.CutSuffix(rest, blobSuffix)
	if !ok {
		return "", "", false
	}
	return split2(rest)
}

// checkValue reports a value that makes no valid key for partition pk:
// its index entities' keys (the longest, a continuation's) or its blob's
// name.
func (ix *index[T]) checkValue(pk, value string) error {
	bad := func(err error) error { return &KeyError{Index: ix.Name, Value: value, Err: err} }
	if err := keys.Validate(value); err != nil {
		return bad(err)
	}
	if ix.Placement == Blob {
		if n := utf8.RuneCountInString(ix.blobName(pk, value)); n > maxBlobName {
			return bad(&keys.KeyError{Func: "indexentity", Rule: keys.RuleTooLong, Value: value, Pos: -1, Part: -1, Limit: maxBlobName, Got: n})
		}
		return nil
	}
	epk := ix.entryPK(pk)
	if ix.Placement == TableWide {
		epk = ix.widePK(value, keys.Bucket("", ix.Buckets))
	}
	if err := keys.Validate(epk); err != nil {
		return bad(err)
	}
	// A continuation's RowKey is the longest: allow numbers of 19 digits.
	if err := keys.Validate(ix.chunkRK(value, 1<<62)); err != nil {
		return bad(err)
	}
	return nil
}

// valueOf returns e's value in ix; has is false when e is nil or not in
// the index. The value is checked.
func (ix *index[T]) valueOf(e *T, pk string) (value string, has bool, err error) {
	if e == nil {
		return "", false, nil
	}
	value, has = ix.Value(e)
	if !has {
		return "", false, nil
	}
	if value, err = ix.keyText(value); err != nil {
		return "", false, err
	}
	if err := ix.checkValue(pk, value); err != nil {
		return "", false, err
	}
	return value, true, nil
}
