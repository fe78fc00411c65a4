package secondaryindex

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
	ErrInvalidConfig = errors.New("secondaryindex: invalid configuration")
	// ErrUnknownIndex reports a lookup by an index the Set does not have.
	ErrUnknownIndex = errors.New("secondaryindex: no such index")
	// ErrDuplicate reports a write that would give a unique index's value
	// to a second entity. Nothing was written. It is matched by every
	// *UniqueError.
	ErrDuplicate = errors.New("secondaryindex: value held by another entity")
	// ErrNotUnique reports Lookup on an index that is not unique: use
	// LookupAll.
	ErrNotUnique = errors.New("secondaryindex: index is not unique")
	// ErrInvalidToken reports a resume token that this package did not
	// make.
	ErrInvalidToken = errors.New("secondaryindex: invalid resume token")
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
	return fmt.Sprintf("secondaryindex: index %d (%q): %s %s", e.Position, e.Index, e.Field, e.Reason)
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
	return "secondaryindex: invalid configuration: " + e.Field + " " + e.Reason
}

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// KeyError reports an entity whose indexed value makes no valid key:
// a forbidden character, or too long. Nothing was sent. It matches
// entity.ErrInvalid and unwraps to the *keys.KeyError.
type KeyError struct {
	Index string
	Value string
	Err   error
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("secondaryindex: index %q: value %q makes no valid key: %v", e.Index, shorten(e.Value), e.Err)
}

// Is makes errors.Is(err, entity.ErrInvalid) true.
func (e *KeyError) Is(target error) bool { return target == entity.ErrInvalid }

func (e *KeyError) Unwrap() error { return e.Err }

// UniqueError reports a write refused because a unique index's value is
// held, or being claimed, by another entity. Nothing of the write was
// applied. It matches ErrDuplicate, and entity.ErrAlreadyExists when the
// service refused the entry's insert.
type UniqueError struct {
	Index  string
	Value  string
	Holder drift.Key // the entity holding or claiming the value
	// Pending reports that the holder does not hold the value yet but a
	// write of it may be under way (OtherPartition indexes): try again
	// after Config.Grace.
	Pending bool
	Err     error // the service's answer, when there was one
}

func (e *UniqueError) Error() string {
	what := "held"
	if e.Pending {
		what = "being claimed"
	}
	return fmt.Sprintf("secondaryindex: index %q: value %q is %s by %s/%s", e.Index, shorten(e.Value), what, e.Holder.PartitionKey, e.Holder.RowKey)
}

// Is makes errors.Is(err, ErrDuplicate) true.
func (e *UniqueError) Is(target error) bool { return target == ErrDuplicate }

func (e *UniqueError) Unwrap() error { return e.Err }

// RowKeyError reports a primary whose RowKey the Set cannot tell from its
// entries' (it starts with an index's prefix or tablekit's own), or that
// lacks Config.PrimaryPrefix. Nothing was sent. It matches
// entity.ErrInvalid.
type RowKeyError struct {
	RowKey string
	Reason string
}

func (e *RowKeyError) Error() string {
	return fmt.Sprintf("secondaryindex: primary RowKey %q %s", shorten(e.RowKey), e.Reason)
}

// Is makes errors.Is(err, entity.ErrInvalid) true.
func (e *RowKeyError) Is(target error) bool { return target == entity.ErrInvalid }

// StepError reports a failed step of an index operation; it names the
// step and the entity, and unwraps to entity's error, so that
// errors.Is(err, entity.ErrPreconditionFailed) and the like still work.
type StepError struct {
	Step         string // "read primary", "reserve", "submit", "sync", …
	Index        string // "" when the step is not one index's
	PartitionKey string
	RowKey       string
	Err          error
}

func (e *StepError) Error() string {
	s := "secondaryindex: " + e.Step
	if e.Index != "" {
		s += " (index " + e.Index + ")"
	}
	return s + " of " + e.PartitionKey + "/" + e.RowKey + ": " + e.Err.Error()
}

func (e *StepError) Unwrap() error { return e.Err }

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
