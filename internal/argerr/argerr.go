// Package argerr is the one rule of tablekit for an argument refused
// before any request: a Config field, a constructor's argument, an option
// that cannot work. Every package reports one as its own *ConfigError{Field,
// Reason}, whose text is Message's and which matches Err with errors.Is.
//
// Err is entity.ErrInvalid (entity declares ErrInvalid = argerr.Err). It is
// declared here, below entity, so that packages that do not import entity
// (account, bloblog) match the same sentinel: one errors.Is(err,
// entity.ErrInvalid) then tells "nothing was sent, an argument or a value
// broke a rule" for the whole library, as it already did for invalid
// entities, keys and filters' callers. A package's older sentinel
// (bloblog.ErrInvalid, eventual.ErrInvalidConfig, …) stays matched too.
package argerr

import (
	"context"
	"errors"
	"strconv"
	"unicode/utf8"
)

// Err is entity.ErrInvalid: a value or an argument that breaks a rule,
// refused before any request.
var Err = errors.New("entity: invalid entity")

// Message is the text of a package's *ConfigError: "<pkg>: invalid
// <field>: <reason>". field names what the caller wrote: "Config.Kind",
// "OutboxConfig.Prefix", "table", "queues[2]"; reason says what is wrong
// and what is wanted.
func Message(pkg, field, reason string) string {
	if reason == "" {
		return pkg + ": invalid " + field
	}
	return pkg + ": invalid " + field + ": " + reason
}

// Reasons that more than one package gives; each package exports the ones
// it uses as its own Reason constants, with these values.
const (
	Nil       = "is nil"
	ZeroValue = "is nil or the zero value: make it with New"
	Negative  = "is negative"
	// NilContext is the reason, for Field CtxField, of a nil
	// context.Context given to an exported function or method.
	NilContext = "is nil: pass a context (context.Background() when there is none)"
)

// CtxField is the Field every package's error names for a nil context.
const CtxField = "ctx"

// Ctx is the one check of a context argument at every exported entry
// point of tablekit: nil when ctx can be used; for a nil ctx, the
// package's own error made by mk from CtxField and NilContext, returned
// before anything is started or sent (a nil context would panic where it
// is first used, often in a goroutine).
func Ctx(ctx context.Context, mk func(field, reason string) error) error {
	if ctx != nil {
		return nil
	}
	return mk(CtxField, NilContext)
}

// Keys is how every error of tablekit names an entity's keys:
// `PartitionKey "p", RowKey "r"`, or `PartitionKey "p"` alone for a
// partition (rk ""), each quoted with Quote.
func Keys(pk, rk string) string {
	return keys(pk, rk, rk != "")
}

// EntityKeys is Keys for one entity whose RowKey may be empty (the service
// allows it): both keys always, `PartitionKey "p", RowKey ""`.
func EntityKeys(pk, rk string) string {
	return keys(pk, rk, true)
}

// keys is the one text of a pair of keys, the RowKey named when withRK.
func keys(pk, rk string, withRK bool) string {
	s := "PartitionKey " + Quote(pk)
	if withRK {
		s += ", RowKey " + Quote(rk)
	}
	return s
}

// Quote is how an error quotes a key or a value it names: strconv.Quote,
// cut on a rune boundary to 64 bytes and then marked with "…", so that a
// 64 KiB value keeps the message readable.
func Quote(s string) string {
	const max = 64
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}
