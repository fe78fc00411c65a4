package rotation

import (
	"errors"
	"strings"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/errline"
)

// ErrExpired reports a write to a period that Expire has deleted (or is
// deleting). The period's table is never created again: its data stays
// gone.
var ErrExpired = errors.New("rotation: period expired")

// ConfigError reports a Config or argument that cannot work, found before any
// request. It matches entity.ErrInvalid.
type ConfigError struct {
	Field  string // "Name", "Period", "Time", …
	Reason string
}

func (e *ConfigError) Error() string { return "rotation: invalid " + e.Field + ": " + e.Reason }

// Is makes errors.Is(err, entity.ErrInvalid) true.
func (e *ConfigError) Is(target error) bool { return target == entity.ErrInvalid }

// PeriodError reports a failed step on one period's table or catalog entry.
// It unwraps to the cause: an entity error such as *entity.ServiceError, or
// ErrExpired.
type PeriodError struct {
	Op    string    // "claim", "create table", "write", "query", "expire", …
	Start time.Time // the period's start
	Table string    // the period's table, when known
	Err   error
}

func (e *PeriodError) Error() string {
	s := "rotation: " + e.Op
	if !e.Start.IsZero() {
		s += ", period " + e.Start.UTC().Format(time.RFC3339)
	}
	if e.Table != "" {
		s += ", table " + e.Table
	}
	// The package's own errors say "rotation:" once.
	return s + ": " + strings.TrimPrefix(e.Err.Error(), "rotation: ")
}

func (e *PeriodError) Unwrap() error { return e.Err }

// errCatalogChanged makes entity.RetryPolicy.Retry start a catalog step again
// from a fresh read: another writer claimed a period or moved the expiry
// mark first, or a lost reply left the outcome of ours unknown.
var errCatalogChanged = errline.Join(errors.New("rotation: catalog changed"), entity.ErrPreconditionFailed)
