package indexentity

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// Sentinel errors, for errors.Is.
var (
	// ErrInvalidConfig reports a declaration or Config that cannot work;
	// nothing was created.
	ErrInvalidConfig = errors.New("indexentity: invalid configuration")
	// ErrUnknownIndex reports a lookup by an index the Set does not have.
	// Like ErrPlacement and ErrInvalidToken, a refusal made before any
	// request, it also matches entity.ErrInvalid.
	ErrUnknownIndex = indexset.Refusal("indexentity: no such index")
	// ErrPlacement reports a lookup of a kind the index's placement does
	// not serve: LookupAll or Members (one partition) of a TableWide
	// index, LookupValueAll or ValueMembers of another.
	ErrPlacement = indexset.Refusal("indexentity: lookup not served by the index's placement")
	// ErrInvalidToken reports a resume token that this package did not
	// make, or one made by a check of other partitions, or a finding given
	// to Repair that is not of the Set's index entities or blobs.
	ErrInvalidToken = indexset.Refusal("indexentity: invalid resume token")
	// ErrCorrupt reports an index entity or blob whose content this
	// package cannot read: written by other software, or damaged. Check
	// reports such rows as drift.Stale and Rebuild rewrites them.
	ErrCorrupt = errors.New("indexentity: unreadable index content")
)

// pkg ties the error types this package shares with patterns/secondaryindex
// (package indexset) to this package's name and ErrInvalidConfig.
type pkg struct{}

func (pkg) Name() string            { return "indexentity" }
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
	// its index entities' (it starts with an index's prefix or tablekit's
	// own), or that lacks Config.PrimaryPrefix. Nothing was sent. It
	// matches entity.ErrInvalid.
	RowKeyError = indexset.RowKeyError[pkg]
	// ModeError reports a Modify whose ModifyOptions.Mode is Merge (or
	// unknown): a Set writes the whole primary, from which its lists are
	// computed, so only entity.Replace (or 0) is accepted. Nothing was
	// sent. It matches entity.ErrInvalid.
	ModeError = indexset.ModeError[pkg]
	// StepError reports a failed step of an index operation (Step, Index,
	// PartitionKey, RowKey) and unwraps to entity's error, so that
	// errors.Is(err, entity.ErrPreconditionFailed) and the like still
	// work.
	StepError = indexset.StepError[pkg]
)

// CorruptError reports index content that does not decode: it names the
// index entity (or blob) and matches ErrCorrupt.
type CorruptError struct {
	Index string
	// The index entity's keys, or (Blob index) the blob's name.
	PartitionKey, RowKey string
	Blob                 string
	Reason               string
}

func (e *CorruptError) Error() string {
	where := "index entity " + indexset.Keys(e.PartitionKey, e.RowKey)
	if e.Blob != "" {
		where = "blob " + strconv.Quote(indexset.Shorten(e.Blob))
	}
	return fmt.Sprintf("indexentity: index %q: %s: %s", e.Index, where, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// wrap names the step err failed in, unless it names one already (or is
// a CorruptError, which names the entity).
func wrap(err error, step, index, pk, rk string) error {
	var se *StepError
	var ce *CorruptError
	if err == nil || errors.As(err, &se) || errors.As(err, &ce) {
		return err
	}
	return &StepError{Step: step, Index: index, PartitionKey: pk, RowKey: rk, Err: err}
}
