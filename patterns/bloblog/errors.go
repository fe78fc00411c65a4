package bloblog

import (
	"errors"
	"github.com/tablekit/tablekit/internal/argerr"
	"strconv"
)

var (
	// ErrInvalid reports a configuration or record that cannot be written:
	// nothing was sent. ConfigError and RecordError match it, and match
	// entity.ErrInvalid too, as every package's ConfigError does.
	ErrInvalid = errors.New("bloblog: invalid argument")
	// ErrClosed reports an Append to a Logger that was closed, or whose
	// context ended.
	ErrClosed = errors.New("bloblog: logger closed")
	// ErrCorrupt reports blob content that is not a sequence of records.
	// CorruptError matches it.
	ErrCorrupt = errors.New("bloblog: corrupt log blob")
)

// ConfigError reports a Config or argument that cannot work, found before
// any request: "bloblog: invalid <Field>: <Reason>", Field naming it
// ("Config.Period", "container", "range").
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string { return argerr.Message("bloblog", e.Field, e.Reason) }

// Is makes errors.Is(err, ErrInvalid) and errors.Is(err,
// entity.ErrInvalid) true.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalid || target == argerr.Err }

// Reasons a *ConfigError of this package gives that callers may compare.
const (
	ReasonNil      = "is nil"
	ReasonNegative = "is negative"
)

// RecordError reports a record that cannot be written: too large for a
// block, or a time outside the years 0001 to 9999. Nothing was buffered.
type RecordError struct {
	Reason string
}

func (e *RecordError) Error() string { return "bloblog: invalid record: " + e.Reason }

// Is makes errors.Is(err, ErrInvalid) and errors.Is(err,
// entity.ErrInvalid) true.
func (e *RecordError) Is(target error) bool { return target == ErrInvalid || target == argerr.Err }

// CorruptError reports bytes of a blob that are not a record.
type CorruptError struct {
	Blob   string
	Offset int64 // where the bad record starts
	Err    error // io.ErrUnexpectedEOF for a truncated record
}

func (e *CorruptError) Error() string {
	s := "bloblog: corrupt log blob"
	if e.Blob != "" {
		s += " " + e.Blob
	}
	return s + " at offset " + strconv.FormatInt(e.Offset, 10) + ": " + e.Err.Error()
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

func (e *CorruptError) Unwrap() error { return e.Err }

// BlobError reports a failed storage step on one blob. It unwraps to the
// cause, usually an *azcore.ResponseError.
type BlobError struct {
	Op   string // "create", "append", "set metadata", "list", "read", …
	Blob string // the blob, or the listing prefix
	Err  error
}

func (e *BlobError) Error() string { return "bloblog: " + e.Op + " " + e.Blob + ": " + e.Err.Error() }

func (e *BlobError) Unwrap() error { return e.Err }

// FlushError reports records that a Logger could not write before it
// stopped: they are lost. Err is the last failure.
type FlushError struct {
	Records int
	Bytes   int
	Err     error
}

func (e *FlushError) Error() string {
	return "bloblog: " + strconv.Itoa(e.Records) + " records (" + strconv.Itoa(e.Bytes) + " bytes) not written: " + e.Err.Error()
}

func (e *FlushError) Unwrap() error { return e.Err }
