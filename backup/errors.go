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

// ErrTooLarge reports an export to a blob that needs more blocks than a
// block blob holds (50,000, one per segment).
var ErrTooLarge = errors.New("backup: the export needs more blocks than a block blob holds")

// ErrUnordered reports a service whose query pages did not come in key
// order from one page to the next, so that an export of it could not be
// resumed after its last key: see OrderError.
var ErrUnordered = errors.New("backup: the service returned keys out of order across pages")

// OrderError is a page of range Range whose first key (in the service's
// key order, after sorting the page) is not above the last key the range
// had handed over: Export stops before writing any of that page, since a
// checkpoint's "after the last key written" would then skip it or write
// it twice. It matches ErrUnordered.
type OrderError struct {
	Range                          int
	PartitionKey, RowKey           string // the page's first key
	AfterPartitionKey, AfterRowKey string // the last key before it
}

func (e *OrderError) Error() string {
	if e == nil {
		return "backup: keys out of order: <nil>"
	}
	return fmt.Sprintf("backup: read range %d: a page starts at %s, not above %s, the end of the page before: the service returns pages out of key order (as Cosmos DB may), and a checkpoint after the last key written would lose or repeat entities; export it without Checkpoint and Resume",
		e.Range, entityKeys(e.PartitionKey, e.RowKey), entityKeys(e.AfterPartitionKey, e.AfterRowKey))
}

func (e *OrderError) Is(target error) bool { return target == ErrUnordered }

// entityKeys names an entity's keys as every tablekit error does
// (argerr.Keys), an empty RowKey included: `PartitionKey "p", RowKey ""`.
func entityKeys(pk, rk string) string {
	if rk == "" {
		return argerr.Keys(pk, "") + `, RowKey ""`
	}
	return argerr.Keys(pk, rk)
}

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
	return fmt.Sprintf("backup: line %d (%s) not written: %v", e.Line, entityKeys(e.PartitionKey, e.RowKey), e.Err)
}

func (e *EntityError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// errEncrypted refuses to export an encrypted table (package crypt's
// Table.Entity) in clear unless asked to by the option named (none:
// ExportCSV has no such option).
func errEncrypted(option string) error {
	reason := "is encrypted (package crypt's Table.Entity), and its export would hold every encrypted property in clear: " +
		"export the table through a plain entity.Table of the same client for a backup of the ciphertexts"
	if option != "" {
		reason += ", or set " + option + " to export the plaintext on purpose"
	} else {
		reason += ", or use Export with ExportOptions.Decrypted to export the plaintext on purpose"
	}
	return &ConfigError{Field: "table", Reason: reason}
}
