package indexset

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/patterns/drift"
)

// Package is implemented by a zero-size type of each index package: the
// name its errors start with, and the sentinel its configuration errors
// match.
type Package interface {
	Name() string
	ErrInvalidConfig() error
}

// DeclarationError reports an Index that cannot work, refused before any
// request; it matches the package's ErrInvalidConfig and entity.ErrInvalid.
// Its text reads "<package>: invalid index <position> ("<name>"): <field>
// <reason>".
type DeclarationError[P Package] struct {
	Index    string // its Name
	Position int    // its position among New's indexes
	Field    string
	Reason   string
}

func (e *DeclarationError[P]) Error() string {
	var p P
	return fmt.Sprintf("%s: invalid index %d (%q): %s %s", p.Name(), e.Position, e.Index, e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidConfig) and errors.Is(err,
// entity.ErrInvalid) true.
func (e *DeclarationError[P]) Is(target error) bool {
	var p P
	return target == p.ErrInvalidConfig() || target == entity.ErrInvalid
}

// ConfigError names the argument refused before any request: a Config
// field ("Config.Grace"), a constructor's argument ("primary") or an
// option. Its text is argerr.Message's, "<package>: invalid <field>:
// <reason>"; it matches the package's ErrInvalidConfig and
// entity.ErrInvalid.
type ConfigError[P Package] struct {
	Field  string
	Reason string
}

func (e *ConfigError[P]) Error() string {
	var p P
	return argerr.Message(p.Name(), e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidConfig) and errors.Is(err,
// entity.ErrInvalid) true.
func (e *ConfigError[P]) Is(target error) bool {
	var p P
	return target == p.ErrInvalidConfig() || target == entity.ErrInvalid
}

// KeyError reports an indexed value that makes no valid key: a forbidden
// character, or too long. Nothing was sent. It matches entity.ErrInvalid
// and unwraps to the *keys.KeyError.
type KeyError[P Package] struct {
	Index string
	Value string
	Err   error
}

func (e *KeyError[P]) Error() string {
	var p P
	return fmt.Sprintf("%s: index %q: value %q makes no valid key: %v", p.Name(), e.Index, Shorten(e.Value), e.Err)
}

// Is makes errors.Is(err, entity.ErrInvalid) true.
func (e *KeyError[P]) Is(target error) bool { return target == entity.ErrInvalid }

func (e *KeyError[P]) Unwrap() error { return e.Err }

// RowKeyError reports a primary whose RowKey the Set cannot tell from its
// indexes' (it starts with an index's prefix or tablekit's own), or that
// lacks Config.PrimaryPrefix. Nothing was sent. It matches
// entity.ErrInvalid.
type RowKeyError[P Package] struct {
	RowKey string
	Reason string
}

func (e *RowKeyError[P]) Error() string {
	var p P
	return fmt.Sprintf("%s: primary RowKey %q %s", p.Name(), Shorten(e.RowKey), e.Reason)
}

// Is makes errors.Is(err, entity.ErrInvalid) true.
func (e *RowKeyError[P]) Is(target error) bool { return target == entity.ErrInvalid }

// ModeError reports a write refused before any request because of its
// update mode: an index Set writes the whole primary, since its entries
// are computed from all of it, so Merge (or an unknown mode) is refused;
// use entity.Replace (or 0). It matches entity.ErrInvalid.
type ModeError[P Package] struct {
	Op   string // "Modify"
	Mode entity.UpdateMode
}

func (e *ModeError[P]) Error() string {
	var p P
	mode := "Merge"
	if e.Mode != entity.Merge {
		mode = "mode " + strconv.Itoa(int(e.Mode))
	}
	return p.Name() + ": " + e.Op + " with " + mode + ": a Set writes its primaries whole; use Replace"
}

// Is makes errors.Is(err, entity.ErrInvalid) true.
func (e *ModeError[P]) Is(target error) bool { return target == entity.ErrInvalid }

// CheckMode returns a *ModeError unless mode is 0 or entity.Replace.
func CheckMode[P Package](op string, mode entity.UpdateMode) error {
	if mode == 0 || mode == entity.Replace {
		return nil
	}
	return &ModeError[P]{Op: op, Mode: mode}
}

// StepError reports a failed step of an index operation; it names the
// step and the entity, and unwraps to entity's error, so that
// errors.Is(err, entity.ErrPreconditionFailed) and the like still work.
type StepError[P Package] struct {
	Step         string // "read primary", "submit", "sync", …
	Index        string // "" when the step is not one index's
	PartitionKey string
	RowKey       string
	Err          error
}

// Error reads "<package>: <step> (index "<name>") of PartitionKey "<pk>",
// RowKey "<rk>": <cause>", the keys as argerr.Keys writes them, the parts
// that do not apply left out (`of PartitionKey "<pk>"` without a RowKey),
// and the
// cause without the package's name when it starts with it, so that the
// name is said once.
func (e *StepError[P]) Error() string {
	var p P
	var b strings.Builder
	b.WriteString(p.Name())
	b.WriteString(": ")
	b.WriteString(e.Step)
	if e.Index != "" {
		b.WriteString(" (index ")
		b.WriteString(strconv.Quote(e.Index))
		b.WriteString(")")
	}
	switch {
	case e.RowKey != "":
		b.WriteString(" of ")
		b.WriteString(Keys(e.PartitionKey, e.RowKey))
	case e.PartitionKey != "":
		b.WriteString(" of ")
		b.WriteString(Keys(e.PartitionKey, ""))
	}
	b.WriteString(": ")
	cause := "<nil>"
	if e.Err != nil {
		cause = e.Err.Error()
	}
	b.WriteString(strings.TrimPrefix(cause, p.Name()+": "))
	return b.String()
}

// Refusal returns a sentinel error of a refusal made before any request
// (an unknown index, a lookup the index's placement does not serve, a
// token the package did not make): errors.Is matches it by identity, as
// any sentinel, and entity.ErrInvalid too, for it and every error that
// wraps it, so that entity.ErrInvalid matches any argument refused before
// a request, whichever package refused it.
func Refusal(msg string) error { return &refusal{msg} }

type refusal struct{ msg string }

func (e *refusal) Error() string { return e.msg }

// Is makes errors.Is(err, entity.ErrInvalid) true.
func (e *refusal) Is(target error) bool { return target == entity.ErrInvalid }

// Keys is an entity's keys as every error of tablekit prints them,
// argerr.Keys: `PartitionKey "pk", RowKey "rk"`, or `PartitionKey "pk"`
// alone when rk is "".
func Keys(pk, rk string) string {
	return argerr.Keys(pk, rk)
}

func (e *StepError[P]) Unwrap() error { return e.Err }

// Raced wraps err as a repair that lost to a writer: it matches
// drift.ErrRaced and still unwraps to err.
func Raced(err error) error {
	return fmt.Errorf("%w: %w", drift.ErrRaced, err)
}

// Shorten cuts a value quoted in an error to 64 bytes: at most 61 of
// its bytes, cut at a rune boundary so that a UTF-8 sequence is never
// split, then "...".
func Shorten(s string) string {
	if len(s) <= 64 {
		return s
	}
	cut := 61
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
