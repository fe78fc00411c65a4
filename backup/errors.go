package backup

import (
	"errors"
	"fmt"
	"github.com/tablekit/tablekit/internal/argerr"
)

// ErrInvalid reports options or a token that cannot work, found before any
// request is sent.
var ErrInvalid = errors.New("backup: invalid argument")

// ErrFormat reports input that is not a backup or a typed CSV this package
// reads: a bad header, an undecodable line, an unknown type name.
var ErrFormat = errors.New("backup: malformed input")

// ErrBlobChanged reports that ExportBlob's blob was written by someone
// else while the export ran: the export stopped without committing over
// it.
var ErrBlobChanged = errors.New("backup: the blob was changed by another writer")

// ConfigError names the option or argument that cannot work: "backup:
// invalid <Field>: <Reason>". It matches ErrInvalid and entity.ErrInvalid,
// as every package's ConfigError does.
type ConfigError struct {
	Field, Reason string
}

func (e *ConfigError) Error() string {
	if e == nil {
		return "backup: invalid argument: <nil>"
	}
	return argerr.Message("backup", e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrInvalid) and errors.Is(err, entity.ErrInvalid)
// true.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalid || target == argerr.Err }

// ReasonNil is the Reason of a *ConfigError about a nil argument.
const ReasonNil = "is nil"

// LineError is input that could not be read, at a line (a backup's line or
// a CSV record, counting from 1). It matches ErrFormat and unwraps to the
// cause.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string {
	if e == nil {
		return "backup: malformed input: <nil>"
	}
	return fmt.Sprintf("backup: line %d: %v", e.Line, e.Err)
}

func (e *LineError) Is(target error) bool { return target == ErrFormat }
func (e *LineError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// EntityError is one entity that Import did not write, with its keys.
type EntityError struct {
	Line                 int
	PartitionKey, RowKey string
	Err                  error
}

func (e *EntityError) Error() string {
	if e == nil {
		return "backup: entity not written: <nil>"
	}
	return fmt.Sprintf("backup: line %d (PartitionKey %q, RowKey %q) not written: %v", e.Line, e.PartitionKey, e.RowKey, e.Err)
}

func (e *EntityError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}
