package drift

import (
	"errors"
	"fmt"
)

// Kind says how an index entry disagrees with its primary.
type Kind uint8

// The kinds of drift.
const (
	Missing Kind = iota + 1 // the primary holds a value the index does not list
	Stale                   // the entry exists but its copy differs from the primary
	Orphan                  // the entry's primary is gone or holds another value
	// Duplicate: two or more primaries hold one value of a unique index,
	// which only writes around the index can do. The index keeps one
	// entry, for the holder its package's rule picks; the finding names a
	// holder left without it (Primary) and the entry (Entry), and no
	// repair changes it: a person changes one of the primaries.
	Duplicate
)

func (k Kind) String() string {
	switch k {
	case Missing:
		return "missing"
	case Stale:
		return "stale"
	case Orphan:
		return "orphan"
	case Duplicate:
		return "duplicate"
	}
	return fmt.Sprintf("drift.Kind(%d)", uint8(k))
}

// Key addresses one entity.
type Key struct {
	Table        string // "" when it is the primary's table
	PartitionKey string
	RowKey       string
}

// Finding is one disagreement between an index and its primaries.
type Finding struct {
	Kind    Kind
	Index   string // the index's declared name
	Primary Key    // the primary the entry belongs or belonged to
	Entry   Key    // the index entry (for Missing: where it should be)
	Detail  string // what differs, for people
	// Resume is the token of the scan page the finding came from: a check
	// started from it again reports this finding (if it still holds) and
	// everything after it.
	Resume string
}

func (f Finding) String() string {
	if f.Primary == (Key{}) {
		// A finding about an entry alone (an unreadable one): no primary.
		return fmt.Sprintf("%s %s entry %s/%s: %s", f.Index, f.Kind, f.Entry.PartitionKey, f.Entry.RowKey, f.Detail)
	}
	return fmt.Sprintf("%s %s entry %s/%s for primary %s/%s: %s",
		f.Index, f.Kind, f.Entry.PartitionKey, f.Entry.RowKey, f.Primary.PartitionKey, f.Primary.RowKey, f.Detail)
}

// Summary counts what a check or rebuild saw.
type Summary struct {
	Scanned int // primaries and entries read
	Missing int
	Stale   int
	Orphans int
	// Duplicates counts Duplicate findings, which no repair changes.
	Duplicates int
	Repaired   int
	// Next resumes the scan where it stopped; "" once it is complete.
	Next string
}

// Count adds f to the summary's counts.
func (s *Summary) Count(f Finding) {
	switch f.Kind {
	case Missing:
		s.Missing++
	case Stale:
		s.Stale++
	case Orphan:
		s.Orphans++
	case Duplicate:
		s.Duplicates++
	}
}

// Drift is the number of findings counted.
func (s Summary) Drift() int { return s.Missing + s.Stale + s.Orphans + s.Duplicates }

// ErrRaced reports a repair that found the entity changed since the check
// read it: a writer got there first. Check again.
var ErrRaced = errors.New("drift: entity changed since it was checked")

// CheckOptions chooses what a Check or Rebuild scans; the packages that
// check copies (secondaryindex, indexentity, denormalize) take it as their
// CheckOptions.
type CheckOptions struct {
	// Partitions are the partitions to check: the primaries' of an index,
	// the targets' of denormalized copies. Nil means the whole table (one
	// scan of it, then of whatever the package keeps elsewhere, for entries
	// whose partition has no primaries).
	Partitions []string
	// Resume continues a scan from a token: a Finding's Resume, a
	// Summary's Next, or one passed to Checkpoint. The other options must
	// be those of the scan that made it.
	Resume string
	// Checkpoint, if set, is called with a resume token each time the scan
	// passes a point it can resume from (after each partition or page), so
	// that a long scan killed half-way can be continued.
	Checkpoint func(token string)
}
