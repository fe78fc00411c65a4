package indexentity

import (
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/drift"
)

// Sentinel errors, for errors.Is.
var (
	// ErrInvalidConfig reports a declaration or Config that cannot work;
	// nothing was created.
	ErrInvalidConfig = errors.New("indexentity: invalid configuration")
	// ErrUnknownIndex reports a lookup by an index the Set does not have.
	ErrUnknownIndex = errors.New("indexentity: no such index")
	// ErrInvalidToken reports a resume token that this package did not
	// make, or one made by a check of other partitions.
	ErrInvalidToken = errors.New("indexentity: invalid resume token")
	// ErrCorrupt reports an index entity or blob whose content this
	// package cannot read: written by other software, or damaged. Check
	// reports such rows as drift.Stale and Rebuild rewrites them.
	ErrCorrupt = errors.New("indexentity: unreadable index content")
)

// DeclarationError reports an Index that cannot work; it matches
// ErrInvalidConfig.
type DeclarationError struct {
	Index    string // its Name
	Position int    // its position among New's indexes
	Field    string
	Reason   string
}

func (e *DeclarationError) Error() string {
	return fmt.Sprintf("indexentity: index %d (%q): %s %s", e.Position, e.Index, e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *DeclarationError) Is(target error) bool { return target == ErrInvalidConfig }

// ConfigError names the Config setting that is wrong; it matches
// ErrInvalidConfig.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string {
	return "indexentity: invalid configuration: " + e.Field + " " + e.Reason
}

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// KeyError reports an indexed value that makes no valid key: a forbidden
// character, or too long. Nothing was sent. It matches entity.ErrInvalid
// and unwraps to the *keys.KeyError.
type KeyError struct {
	Index string
	Value string
	Err   error
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("indexentity: index %q: value %q makes no valid key: %v", e.Index, shorten(e.Value), e.Err)
}

// Is makes errors.Is(err, entity.ErrInvalid) true.
func (e *KeyError) Is(target error) bool { return target == entity.ErrInvalid }

func (e *KeyError) Unwrap() error { return e.Err }

// RowKeyError reports a primary whose RowKey the Set cannot tell from its
// index entities' (it starts with an index's prefix or tablekit's own),
// or that lacks Config.PrimaryPrefix. Nothing was sent. It matches
// entity.ErrInvalid.
type RowKeyError struct {
	RowKey string
	Reason string
}

func (e *RowKeyError) Error() string {
	return fmt.Sprintf("indexentity: primary RowKey %q %s", shorten(e.RowKey), e.Reason)
}

// Is makes errors.Is(err, entity.ErrInvalid) true.
func (e *RowKeyError) Is(target error) bool { return target == entity.ErrInvalid }

// StepError reports a failed step of an index operation; it names the
// step and the entity, and unwraps to entity's error, so that
// errors.Is(err, entity.ErrPreconditionFailed) and the like still work.
type StepError struct {
	Step         string // "read primary", "read index", "submit", "sync", …
	Index        string // "" when the step is not one index's
	PartitionKey string
	RowKey       string
	Err          error
}

func (e *StepError) Error() string {
	s := "indexentity: " + e.Step
	if e.Index != "" {
		s += " (index " + e.Index + ")"
	}
	return s + " of " + e.PartitionKey + "/" + e.RowKey + ": " + e.Err.Error()
}

func (e *StepError) Unwrap() error { return e.Err }

// CorruptError reports index content that does not decode: it names the
// index entity (or blob) and matches ErrCorrupt.
type CorruptError struct {
	Index  string
	Where  string // "partition/rowkey" of the index entity, or the blob's name
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("indexentity: index %q: %s: %s", e.Index, e.Where, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// raced wraps err as a repair that lost to a writer: it matches
// drift.ErrRaced and still unwraps to err.
func raced(err error) error {
	return fmt.Errorf("%w: %w", drift.ErrRaced, err)
}

func shorten(s string) string {
	if len(s) > 64 {
		return s[:61] + "..."
	}
	return s
}

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
