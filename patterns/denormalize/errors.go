package denormalize

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/errline"
)

var (
	// ErrPlacement reports a SamePartition relation whose source and
	// target are not in one partition of one table: no transaction can
	// hold both. Nothing was written.
	ErrPlacement = errors.New("denormalize: source and target are not in one partition")
	// ErrTooManyCopies reports a SamePartition change that would write
	// more targets than one entity group transaction holds besides the
	// source: see CopiesError for what counts. Nothing was written.
	ErrTooManyCopies = errors.New("denormalize: too many copies for one transaction")
	// ErrFanOutTooLarge reports a change whose OtherPartition targets
	// (what Relation.Targets names, before and after the change) take
	// more fan-out messages than one transaction commits with it: see
	// FanOutError. Nothing was written.
	ErrFanOutTooLarge = errors.New("denormalize: fan-out too large for one change")
	// ErrCopyUnverified reports an InsertTarget or ModifyTarget whose
	// write was applied — the target returned is what was written — but
	// whose second read of an OtherPartition source, which makes sure no
	// change of that source was missed meanwhile, failed: the copy may be
	// behind. Do not apply the change again; Refresh the target (a Check
	// finds it Stale otherwise). It comes joined with the cause.
	ErrCopyUnverified = errors.New("denormalize: target written; its copy of an OtherPartition source was not verified")
	// ErrKeysChanged reports a change function that changed the entity's
	// keys. Nothing was written.
	ErrKeysChanged = errors.New("denormalize: the change moved the entity to other keys")
	// ErrInvalidToken reports a resume token that this package did not
	// make (or not in the one form it writes), or that another scan made;
	// refused before any request, it matches entity.ErrInvalid too.
	ErrInvalidToken error = &tokenError{"denormalize: invalid resume token"}
)

// tokenError is ErrInvalidToken: a sentinel that matches entity.ErrInvalid.
type tokenError struct{ msg string }

func (e *tokenError) Error() string { return e.msg }

// Is makes errors.Is(ErrInvalidToken, entity.ErrInvalid) true.
func (*tokenError) Is(target error) bool { return target == argerr.Err }

// ConfigError reports a Config, a Relation or an argument that cannot work,
// found before any request: "denormalize: invalid <Field>: <Reason>",
// where Field is preceded by the relation when it is about one
// (`relation "manager" (#0) Fields`) and is a Config field as
// "Config.Kind". It matches entity.ErrInvalid, as every package's
// ConfigError does.
type ConfigError struct {
	Relation string // the relation's name, "" when not about one
	Position int    // the relation's position among New's arguments
	Field    string // "Name", "Fields", "Source", …, "Config.Kind", "tables"
	Reason   string
}

func (e *ConfigError) Error() string {
	field := e.Field
	if e.Relation != "" || e.Field == "Name" {
		field = "relation " + strconv.Quote(e.Relation) + " (#" + strconv.Itoa(e.Position) + ") " + field
	}
	return argerr.Message("denormalize", field, e.Reason)
}

// Is makes errors.Is(err, entity.ErrInvalid) true.
func (e *ConfigError) Is(target error) bool { return target == argerr.Err }

// Reasons a *ConfigError of this package gives that callers may compare.
const (
	ReasonNil       = "is nil"
	ReasonZeroValue = "is nil or the zero value: make it with New"
)

// ModeError reports a ModifySource or ModifyTarget whose
// entity.ModifyOptions.Mode is Merge (or unknown), refused before any
// request and before the change function runs. Copies writes sources and
// targets whole: a copy is computed from the source as written, and a
// copy whose source is gone is removed, which a merge cannot do; use
// entity.Replace (or 0). It matches entity.ErrInvalid.
type ModeError struct {
	Op   string // "ModifySource" or "ModifyTarget"
	Mode entity.UpdateMode
}

func (e *ModeError) Error() string {
	mode := "Merge"
	if e.Mode != entity.Merge {
		mode = "mode " + strconv.Itoa(int(e.Mode))
	}
	return "denormalize: " + e.Op + " with " + mode + ": Copies writes sources and targets whole; use Replace"
}

// Is makes errors.Is(err, entity.ErrInvalid) true.
func (e *ModeError) Is(target error) bool { return target == entity.ErrInvalid }

// checkMode returns a *ModeError unless mode is 0 or entity.Replace.
func checkMode(op string, mode entity.UpdateMode) error {
	if mode == 0 || mode == entity.Replace {
		return nil
	}
	return &ModeError{Op: op, Mode: mode}
}

// CopiesError reports a SamePartition change of a source whose
// transaction would write more targets than it holds besides the source
// (99, less one per fan-out message of OtherPartition relations and per
// message of the caller's, WriteOptions.Messages). What
// counts, among the targets that Relation.Targets names and that exist:
//
//   - Copies: each that refers to the source and whose copy changes;
//   - Fences: for InsertSource only, each other one. An insert writes a
//     change of nothing into every target it read, conditional on the
//     version read, so that a writer making one of them refer to the new
//     source meanwhile (having read it missing) fails and reads again,
//     rather than leave a target that refers to it without its copy.
//
// So an InsertSource fails when the targets Relation.Targets names hold
// 100 or more entities, whichever source they refer to; narrow
// Relation.Targets (a Range per source rather than per partition) to
// insert there. It matches ErrTooManyCopies; nothing was written.
type CopiesError struct {
	Copies int // targets whose copy the change writes
	Fences int // other targets an insert fences
	Limit  int // the most the transaction holds besides the source
}

func (e *CopiesError) Error() string {
	s := "denormalize: the change writes " + strconv.Itoa(e.Copies) + " copies"
	if e.Fences > 0 {
		s += " and fences " + strconv.Itoa(e.Fences) + " other targets (an insert fences every existing target Relation.Targets names, whichever source it refers to, so that none is made to refer to the new source unseen: narrow Relation.Targets)"
	}
	return s + ", more than the " + strconv.Itoa(e.Limit) + " targets one transaction holds besides the source"
}

// Is makes errors.Is(err, ErrTooManyCopies) true.
func (e *CopiesError) Is(target error) bool { return target == ErrTooManyCopies }

// FanOutError reports a change whose fan-out needs more messages than
// one transaction commits with it. A fan-out message names at most 40 KiB
// of targets (about 1,000 keys); a change commits at most 48 of them, and
// at most as many as its transaction has room for besides its own
// writes and the caller's messages (100 operations in all). Name targets by Range rather than by
// key: a range is one entry however many targets it holds. It matches
// ErrFanOutTooLarge; nothing was written.
type FanOutError struct {
	Messages int // the messages the fan-out needs
	Limit    int // the most this change can commit
}

func (e *FanOutError) Error() string {
	return "denormalize: the fan-out needs " + strconv.Itoa(e.Messages) + " messages of 40 KiB of target keys, more than the " +
		strconv.Itoa(e.Limit) + " one change can commit: name the targets by Range"
}

// Is makes errors.Is(err, ErrFanOutTooLarge) true.
func (e *FanOutError) Is(target error) bool { return target == ErrFanOutTooLarge }

// StepError reports a failed step of a write or a fan-out: which step,
// on which entity, for which relation. It unwraps to the cause, an entity
// error (entity.ErrPreconditionFailed, entity.ErrOutcomeUnknown, …) or one
// of this package's sentinels.
type StepError struct {
	Step     string // "read source", "read target", "submit", "write copy", …
	Relation string // "" when the step serves every relation
	Key      Key
	Err      error
}

func (e *StepError) Error() string {
	s := "denormalize: " + e.Step
	if e.Relation != "" {
		s += " (relation " + e.Relation + ")"
	}
	s += " (" + argerr.Keys(e.Key.PartitionKey, e.Key.RowKey) + ")"
	return s + ": " + strings.TrimPrefix(e.Err.Error(), "denormalize: ")
}

func (e *StepError) Unwrap() error { return e.Err }

// errAgain makes entity.RetryPolicy.Retry start a write again from a fresh
// read: an entity it depends on changed since it was read.
var errAgain = errline.Join(errors.New("denormalize: changed since read"), entity.ErrPreconditionFailed)

// unsettled is an outcome left unknown by one round of a write that the
// rounds after it could not settle: it says both, and unwraps to both.
type unsettled struct{ unknown, last error }

func (e *unsettled) Error() string {
	line := func(err error) string {
		s, _, _ := strings.Cut(err.Error(), "\n")
		return strings.TrimPrefix(s, "denormalize: ")
	}
	return line(e.unknown) + "; then " + line(e.last)
}

func (e *unsettled) Unwrap() []error { return []error{e.unknown, e.last} }

// MessageError reports a message of WriteOptions.Messages that cannot be
// committed with the change and sent, found before any request: nothing
// was written. It names the write, its entity and the message (its
// position, kind and id), and matches entity.ErrInvalid and its cause:
// eventual.ErrInvalidMessage (a kind, id, payload or creation time that
// breaks eventual's rules, an id given twice), or eventual.ErrTooLarge (an
// envelope that does not fit a queue message without a blob, or more
// messages than the transaction holds).
type MessageError struct {
	Op       string // "ModifySource", …
	Key      Key    // the entity written
	Index    int    // the message's position in WriteOptions.Messages
	Kind, ID string
	Reason   string
	Err      error // eventual.ErrInvalidMessage or eventual.ErrTooLarge
}

func (e *MessageError) Error() string {
	s := "denormalize: " + e.Op + " (" + argerr.Keys(e.Key.PartitionKey, e.Key.RowKey) + "): message " + strconv.Itoa(e.Index)
	if e.ID != "" || e.Kind != "" {
		s += " (id " + strconv.Quote(e.ID) + ", kind " + strconv.Quote(e.Kind) + ")"
	}
	return s + ": " + e.Reason
}

// Is makes errors.Is(err, entity.ErrInvalid) true.
func (e *MessageError) Is(target error) bool { return target == entity.ErrInvalid }

// Unwrap returns the cause: eventual.ErrInvalidMessage or
// eventual.ErrTooLarge.
func (e *MessageError) Unwrap() error { return e.Err }
