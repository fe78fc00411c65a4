package large

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

var (
	// ErrBlobMissing reports an entity whose reference names a blob that
	// is not there, on two reads of the same version of the entity (a
	// blob superseded by a write between the entity's read and the blob's
	// is read again, not reported). It comes as a *BlobError.
	ErrBlobMissing = errors.New("large: blob missing")
	// ErrBlobCorrupt reports a blob whose size or SHA-256 differs from
	// what its entity recorded: the bytes are not returned. It comes as a
	// *BlobError.
	ErrBlobCorrupt = errors.New("large: blob corrupt")
	// ErrBadReference reports a property where a blob reference should be
	// that is not one this package wrote. It comes as a *BlobError.
	ErrBadReference = errors.New("large: not a blob reference")
	// ErrUploadExpired reports a write that could not send its entity's
	// request within half of Config.Grace of starting its uploads (slow
	// uploads, or a request held up before it left): Sweep may take its
	// blobs for orphans, so the entity is not written. Nothing was
	// changed; the blobs are deleted. (When a request may have left before
	// the deadline cut it off, the error matches entity.ErrOutcomeUnknown
	// instead, and the blobs are left to Sweep.)
	ErrUploadExpired = errors.New("large: upload took longer than half the grace period")
	// ErrStaleStream reports a write of a Stream field that keeps its
	// stored value (it has no new reader) when the entity no longer holds
	// that value, or holds none: the Stream was read from another version
	// or another entity. Read the entity again. Nothing was changed.
	ErrStaleStream = errors.New("large: a Stream keeps a value the entity no longer holds")
	// ErrInvalidConfig reports a Config or an argument of New that cannot
	// work.
	ErrInvalidConfig = errors.New("large: invalid configuration")
)

// Error reports a failed operation on one entity. It unwraps to the
// cause, so errors.Is(err, entity.ErrNotFound), entity.ErrAlreadyExists,
// entity.ErrPreconditionFailed, entity.ErrOutcomeUnknown,
// entity.ErrInvalid and the sentinels of this package work through it.
type Error struct {
	Op           string // "get", "open", "insert", "replace", "upsert", "delete"
	PartitionKey string
	RowKey       string
	Err          error
}

func (e *Error) Error() string {
	return fmt.Sprintf("large: %s %s: %v", e.Op, argerr.Keys(e.PartitionKey, e.RowKey), e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// BlobError reports a blob that cannot be read as its entity recorded it:
// missing, corrupt, or a reference that does not parse.
type BlobError struct {
	Field  string // the Go field
	Blob   string // the blob's name, "" when the reference did not parse
	Reason string
	Err    error // ErrBlobMissing, ErrBlobCorrupt or ErrBadReference
	Cause  error // the storage error, if any
}

func (e *BlobError) Error() string {
	s := "large: field " + e.Field
	if e.Blob != "" {
		s += ", blob " + strconv.Quote(e.Blob)
	}
	s += ": " + e.Reason
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Is makes errors.Is(err, e.Err) true.
func (e *BlobError) Is(target error) bool { return target == e.Err }

// Unwrap returns the storage error, if any.
func (e *BlobError) Unwrap() error { return e.Cause }

// ConfigError names the argument refused before any request: a Config
// field ("Config.BlockSize") or an argument of New ("table"). Its text is
// argerr.Message's, "large: invalid <field>: <reason>"; it matches
// ErrInvalidConfig and entity.ErrInvalid.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string { return argerr.Message("large", e.Field, e.Reason) }

// Is makes errors.Is(err, ErrInvalidConfig) and errors.Is(err,
// entity.ErrInvalid) true.
func (e *ConfigError) Is(target error) bool {
	return target == ErrInvalidConfig || target == entity.ErrInvalid
}

// invalid reports a value refused before any request; it matches
// entity.ErrInvalid.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{entity.ErrInvalid}, args...)...)
}
