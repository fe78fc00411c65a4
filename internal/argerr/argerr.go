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

import "errors"

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
)
