package secondaryindex

import (
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// Sentinel errors, for errors.Is.
var (
	// ErrInvalidConfig reports a declaration or Config that cannot work;
	// nothing was created.
	ErrInvalidConfig = errors.New("secondaryindex: invalid configuration")
	// ErrUnknownIndex reports a lookup by an index the Set does not have.
	// Like ErrNotUnique, ErrPlacement and ErrInvalidToken, a refusal made
	// before any request, it also matches entity.ErrInvalid.
	ErrUnknownIndex = indexset.Refusal("secondaryindex: no such index")
	// ErrDuplicate reports a write that would give a unique index's value
	// to a second entity. Nothing was written. It is matched by every
	// *UniqueError.
	ErrDuplicate = errors.New("secondaryindex: value held by another entity")
	// ErrNotUnique reports Lookup on an index that is not unique: use
	// LookupAll.
	ErrNotUnique = indexset.Refusal("secondaryindex: index is not unique")
	// ErrPlacement reports a lookup that does not fit the index's
	// placement: Lookup, LookupAll and LookupPrefix (which take a
	// PartitionKey) of a TableWide index, or LookupValue, LookupValueAll
	// and LookupValuePrefix of another. Nothing was sent.
	ErrPlacement = indexset.Refusal("secondaryindex: lookup does not fit the index's placement")
	// ErrInvalidToken reports a resume token that this package did not
	// make, or a finding given to Repair that names a table other than
	// the Set's.
	ErrInvalidToken = indexset.Refusal("secondaryindex: invalid resume token")
	// ErrEncrypted reports a prefix lookup (LookupPrefix,
	// LookupValuePrefix) of an index whose entries are keyed by beacons
	// (Index.Encrypted), which answer equality only. Nothing was sent.
	ErrEncrypted = indexset.Refusal("secondaryindex: the index's values are encrypted, its entries keyed by beacons")
)

// pkg ties the error types this package shares with patterns/indexentity
// (package indexset) to this package's name and ErrInvalidConfig.
type pkg struct{}

func (pkg) Name() string            { return "secondaryindex" }
func (pkg) ErrInvalidConfig() error { return ErrInvalidConfig }

// The typed errors of a Set, for errors.As.
type (
	// DeclarationError reports an Index that cannot work (Index, Position,
	// Field, Reason); it matches ErrInvalidConfig.
	DeclarationError = indexset.DeclarationError[pkg]
	// ConfigError names the Config setting that is wrong (Field, Reason);
	// it matches ErrInvalidConfig.
	ConfigError = indexset.ConfigError[pkg]
	// KeyError reports an indexed value (Index, Value) that makes no valid
	// key: a forbidden character, or too long. Nothing was sent. It matches
	// entity.ErrInvalid and unwraps to the *keys.KeyError.
	KeyError = indexset.KeyError[pkg]
	// RowKeyError reports a primary whose RowKey the Set cannot tell from
	// its entries' (it starts with an index's prefix or tablekit's
	// own), or that lacks Config.PrimaryPrefix. Nothing was sent. It
	// matches entity.ErrInvalid.
	RowKeyError = indexset.RowKeyError[pkg]
	// ModeError reports a Modify whose ModifyOptions.Mode is Merge (or
	// unknown): a Set writes the whole primary, from which its entries are
	// computed, so only entity.Replace (or 0) is accepted. Nothing was
	// sent. It matches entity.ErrInvalid.
	ModeError = indexset.ModeError[pkg]
	// StepError reports a failed step of an index operation (Step, Index,
	// PartitionKey, RowKey) and unwraps to entity's error, so that
	// errors.Is(err, entity.ErrPreconditionFailed) and the like still
	// work.
	StepError = indexset.StepError[pkg]
)

// UniqueError reports a write refused because a unique index's value is
// held, or being claimed, by another entity. Nothing of the write was
// applied. It matches ErrDuplicate, and entity.ErrAlreadyExists when the
// service refused the entry's insert.
type UniqueError struct {
	Index string
	// Value is the value held: for an Encrypted index, its beacon in hex.
	Value string
	// Holder is the entity holding the value or, when Pending is set,
	// the entity whose write claims it: a claimant, which does not hold
	// the value (yet), and may never.
	Holder drift.Key
	// Pending reports that Holder does not hold the value yet but a
	// write of it may be under way (OtherPartition and TableWide
	// indexes): try again after Config.Grace.
	Pending bool
	Err     error // the service's answer, when there was one
}

func (e *UniqueError) Error() string {
	what := "held"
	if e.Pending {
		what = "being claimed"
	}
	return fmt.Sprintf("secondaryindex: index %q: value %q is %s by %s", e.Index, indexset.Shorten(e.Value), what, indexset.Keys(e.Holder.PartitionKey, e.Holder.RowKey))
}

// Is makes errors.Is(err, ErrDuplicate) true.
func (e *UniqueError) Is(target error) bool { return target == ErrDuplicate }

func (e *UniqueError) Unwrap() error { return e.Err }
