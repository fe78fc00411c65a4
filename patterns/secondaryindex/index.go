package secondaryindex

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/internal/entityfields"
	"github.com/tablekit/tablekit/internal/ident"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// Placement says where an index keeps its entries.
type Placement uint8

const (
	// SamePartition keeps the entries in the primary's partition and
	// writes them in the primary's entity group transaction (guide §6.1):
	// an index always agrees with its primaries.
	SamePartition Placement = iota
	// OtherPartition keeps the entries in partition Name_PartitionKey
	// ("email_Sales"), in Config.Entries or the primary's table (guide
	// §6.2), written by patterns/eventual after the primary: an index that
	// catches up, read with LookupOptions.Verify where that matters.
	OtherPartition
	// TableWide keeps the entries in partitions derived from the indexed
	// value, not from the primary's: Name + "_" + keys.Bucket(value,
	// Index.Buckets) ("email_07"), in Config.Entries or the primary's
	// table. A lookup needs no PartitionKey (LookupValue,
	// LookupValueAll, LookupValuePrefix), and a unique value is one
	// entity's in the whole table. The entries are kept as
	// OtherPartition ones are (the outbox and patterns/eventual, fenced
	// reservations for unique values): an index that catches up.
	TableWide
)

// DefaultBuckets is the bucket count of a TableWide index whose
// Index.Buckets is 0.
const DefaultBuckets = 16

// MaxBuckets is the largest Index.Buckets: a prefix lookup costs one query
// per bucket.
const MaxBuckets = 1000

func (p Placement) String() string {
	switch p {
	case SamePartition:
		return "same partition"
	case OtherPartition:
		return "other partition"
	case TableWide:
		return "table-wide"
	}
	return "Placement(" + string(rune('0'+p)) + ")"
}

// Index declares one secondary index of entities of type T: which value of
// the entity it indexes, whether a value may be held by one entity only,
// what its entries copy, and where they live.
type Index[T any] struct {
	// Name names the index in lookups, errors and findings, and makes the
	// RowKey prefix of its entries, Name + "_" ("email_jonesj@contoso.com").
	// 1 to 32 ASCII letters and digits, unique in the Set.
	Name string
	// Key returns the indexed value of e as it goes into a key
	// ("jonesj@contoso.com" for an index of lower-cased emails), and false
	// when e has no entry in this index. The value becomes part of a
	// RowKey: it must not contain '/', '\', '#', '?' or control characters
	// (use keys.Escape for values that may). Lookups take values in the
	// same form.
	Key func(e *T) (value string, ok bool)
	// Unique makes the value one entity's at most: a write that gives it
	// to a second entity fails with a *UniqueError. A non-unique entry's
	// RowKey is the value and the primary's RowKey as one compound key
	// (keys.Compound), so that any number of entities may share a value.
	// Uniqueness holds within the partition of the entries: the primary's
	// partition (SamePartition), or Name_PartitionKey (OtherPartition);
	// for TableWide, in the whole table (the entry's partition derives
	// from the value). A non-unique TableWide entry's RowKey is the value
	// and both of the primary's keys as one compound key.
	Unique bool
	// Properties are the properties an entry copies from its primary; nil
	// means all of them (on an encrypted table, all it stores in clear:
	// see the package documentation, section Encrypted tables). A lookup that reads entries fills only these
	// fields of T. Each names a property T stores ("Total_Cents" for
	// field Cents of a flattened struct field Total) or the Go path of
	// its field ("Total.Cents"); New refuses any other name with a
	// *DeclarationError (Field "Properties"), since an entry would
	// silently copy nothing for it. A T that stores any property
	// (entity.DynamicEntity, or a struct with an extra map) accepts any
	// name.
	Properties []string
	// Placement is where the entries live; the zero value is
	// SamePartition.
	Placement Placement
	// Buckets is how many partitions a TableWide index spreads its
	// entries over (keys.Bucket of the value): its write throughput is
	// about Buckets × 2,000 entities/s (the service's target per
	// partition), and a LookupValuePrefix costs Buckets queries. 0 means
	// DefaultBuckets; at most MaxBuckets; set only for TableWide indexes.
	// Changing it moves most entries: one Rebuild after the change writes
	// them where they now go and deletes the old ones (see the package
	// documentation), as after any change of the index's layout.
	Buckets int
	// Encrypted names the property of an encrypted primary table (package
	// crypt's Table.Entity) whose value Key returns, or a function of it
	// (its lower-cased form): the entries are then keyed by the value's
	// beacon (entity.Table.Beacon of the property, in lower-case hex)
	// instead of the value, which no entry, message or error holds. The
	// property must be encrypted in every entity with a beacon (tagged
	// encrypt and listed in crypt's Config.Beacons); New refuses one the
	// table stores in clear, encrypts for some entities only or without a
	// beacon, and Encrypted on a table that is not encrypted, with a
	// *DeclarationError (Field "Encrypted"). A beacon answers equality
	// only: the prefix lookups of such an index are refused with
	// ErrEncrypted. Key cannot be seen into: declare Encrypted for every
	// index of an encrypted value (see the package documentation, section
	// Encrypted tables).
	Encrypted string
}

// Properties every entry carries besides its copy of the primary.
const (
	// PropPrimaryPK and PropPrimaryRK hold the keys of the entry's primary.
	PropPrimaryPK = "TkPrimaryPK"
	PropPrimaryRK = "TkPrimaryRK"
	// PropClaim holds, on the entry of a unique OtherPartition index, the
	// write the value is reserved for while it is in flight: the ETag the
	// primary's write is conditional on, or ClaimInsert. It is absent once
	// the primary holds the value (see the package documentation).
	PropClaim = "TkClaim"
	// ClaimInsert is the claim of a write that inserts its primary.
	ClaimInsert = "insert"

	propWriteToken = indexset.WriteToken     // entity's write token chain, never copied
	internalPrefix = indexset.InternalPrefix // RowKeys of tablekit's own entities (outbox intents, Once markers)
)

// index is a checked declaration with what its keys need.
type index[T any] struct {
	Index[T]
	prefix  string   // Name + "_"
	props   []string // sorted; nil: all
	buckets int      // TableWide: the bucket count
	// beacon keys the entries of an Encrypted index (nil: in clear).
	beacon *indexset.Beacon
	// hidden reports a property of an encrypted table that entries do
	// not copy (one the table may encrypt, or the scheme's own); nil for
	// a plain table.
	hidden func(name string) bool
}

// keyText is the text of an indexed value in the index's keys: value
// itself, or the hex of its beacon for an Encrypted index.
func (ix *index[T]) keyText(value string) (string, error) {
	return indexset.KeyText[pkg](ix.beacon, ix.Name, value)
}

// copied reports a property of the primary that the entries copy when
// Properties is nil.
func (ix *index[T]) copied(name string) bool {
	return !reserved(name) && (ix.hidden == nil || !ix.hidden(name))
}

// reserved reports a property an entry keeps for itself, never copied
// from the primary.
func reserved(name string) bool {
	switch name {
	case PropPrimaryPK, PropPrimaryRK, PropClaim, propWriteToken:
		return true
	}
	return false
}

func compile[T any](i int, d Index[T], st *entityfields.Stored, prot *entity.Table[T]) (*index[T], error) {
	bad := func(field, reason string) error {
		return &DeclarationError{Index: d.Name, Position: i, Field: field, Reason: reason}
	}
	if err := indexset.CheckName[pkg](i, d.Name); err != nil {
		return nil, err
	}
	if d.Key == nil {
		return nil, bad("Key", "is nil")
	}
	if d.Placement > TableWide {
		return nil, bad("Placement", "is not SamePartition, OtherPartition or TableWide")
	}
	ix := &index[T]{Index: d, prefix: d.Name + "_"}
	if prot != nil {
		ix.hidden = func(name string) bool {
			_, maybe := prot.Encrypts(name)
			return maybe || strings.HasPrefix(name, crypt.ReservedPrefix)
		}
	}
	if d.Encrypted != "" {
		var reason string
		if ix.beacon, reason = indexset.NewBeacon(prot, d.Encrypted); reason != "" {
			return nil, bad("Encrypted", reason)
		}
	}
	var err error
	if ix.buckets, err = indexset.Buckets[pkg](i, d.Name, d.Buckets, d.Placement == TableWide, DefaultBuckets, MaxBuckets); err != nil {
		return nil, err
	}
	if d.Properties != nil {
		ix.props = make([]string, 0, len(d.Properties))
		for _, p := range d.Properties {
			switch {
			case reserved(p) || p == "PartitionKey" || p == "RowKey" || p == "Timestamp":
				return nil, bad("Properties", "names "+strconv.Quote(p)+", which an entry keeps for itself")
			}
			name, why := st.Resolve(p)
			switch {
			case why != "":
				return nil, bad("Properties", why)
			case ident.Check(name) != "":
				return nil, bad("Properties", "names "+strconv.Quote(p)+", which is not a property name")
			case ix.hidden != nil && ix.hidden(name):
				return nil, bad("Properties", "names "+strconv.Quote(p)+", which the encrypted table encrypts (or keeps for its scheme): an entry holds no copy of an encrypted value, and a lookup reads it from the primary")
			}
			ix.props = append(ix.props, name)
		}
		slices.Sort(ix.props)
		ix.props = slices.Compact(ix.props)
	}
	return ix, nil
}

// entryPK is the PartitionKey of the entry for value held by a primary in
// partition pk.
func (ix *index[T]) entryPK(value, pk string) string {
	switch ix.Placement {
	case OtherPartition:
		return ix.prefix + pk
	case TableWide:
		return ix.prefix + keys.Bucket(value, ix.buckets)
	}
	return pk
}

// ownerPartition is the inverse of entryPK for OtherPartition and
// SamePartition: the primaries' partition of the entries in partition
// epk, and false when no partition maps to it (or the index is
// TableWide, whose entries' partitions say nothing of their primaries').
func (ix *index[T]) ownerPartition(epk string) (string, bool) {
	switch ix.Placement {
	case OtherPartition:
		return strings.CutPrefix(epk, ix.prefix)
	case TableWide:
		return "", false
	}
	return epk, true
}

// entryRK is the RowKey of the entry for value held by the primary with
// keys pk, rk.
func (ix *index[T]) entryRK(value, pk, rk string) string {
	switch {
	case ix.Unique:
		return ix.prefix + value
	case ix.Placement == TableWide:
		return ix.prefix + keys.Compound(value, pk, rk)
	}
	return ix.prefix + keys.Compound(value, rk)
}

// entryAt returns the keys of the entry for value held by primary pk/rk.
func (ix *index[T]) entryAt(value, pk, rk string) (epk, erk string) {
	return ix.entryPK(value, pk), ix.entryRK(value, pk, rk)
}

// entryKeys returns the keys of e's entry in this index, or ok false when
// e has none. The keys are checked (keys.Validate).
func (ix *index[T]) entryKeys(e *T, pk, rk string) (epk, erk, value string, ok bool, err error) {
	value, ok = ix.Key(e)
	if !ok {
		return "", "", "", false, nil
	}
	if value, err = ix.keyText(value); err != nil {
		return "", "", "", false, err
	}
	epk, erk = ix.entryAt(value, pk, rk)
	if err := keys.Validate(epk); err != nil {
		return "", "", "", false, &KeyError{Index: ix.Name, Value: value, Err: err}
	}
	if err := keys.Validate(erk); err != nil {
		return "", "", "", false, &KeyError{Index: ix.Name, Value: value, Err: err}
	}
	return epk, erk, value, true, nil
}

// parseEntryRK splits an entry's RowKey into the value and, for a
// non-unique index, the primary's keys (pk "" unless the index is
// TableWide: the entry's partition tells it, see ownerPartition). ok is
// false for a RowKey this index did not make.
func (ix *index[T]) parseEntryRK(erk string) (value, pk, rk string, ok bool) {
	rest, ok := strings.CutPrefix(erk, ix.prefix)
	if !ok {
		return "", "", "", false
	}
	if ix.Unique {
		return rest, "", "", true
	}
	parts, err := keys.SplitCompound(rest)
	switch {
	case err != nil:
		return "", "", "", false
	case ix.Placement == TableWide && len(parts) == 3:
		return parts[0], parts[1], parts[2], true
	case ix.Placement != TableWide && len(parts) == 2:
		return parts[0], "", parts[1], true
	}
	return "", "", "", false
}

// Remote reports an index kept through the outbox and patterns/eventual.
func (ix *index[T]) Remote() bool { return ix.Placement != SamePartition }

// IndexName is the index's Name.
func (ix *index[T]) IndexName() string { return ix.Name }

// exactRange is the RowKey range of the entries of a non-unique index
// holding value (a unique index's entry is read by a point query).
func (ix *index[T]) exactRange(value string) (from, to string) {
	from, to = keys.CompoundPrefix(value)
	return ix.prefix + from, ix.prefix + to
}

// prefixRange is the RowKey range of the entries whose value starts with
// prefix.
func (ix *index[T]) prefixRange(prefix string) (from, to string) {
	if ix.Unique {
		return keys.PrefixRange(ix.prefix + prefix)
	}
	return keys.PrefixRange(ix.prefix + keys.Compound(prefix))
}
