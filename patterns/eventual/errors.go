package eventual

import (
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// Sentinel errors, for errors.Is.
var (
	// ErrInvalidConfig reports a Config, HandleOptions or OutboxConfig
	// that cannot work; nothing was started. Every *ConfigError matches
	// it and entity.ErrInvalid, the sentinel of every package's
	// ConfigError: prefer that one.
	ErrInvalidConfig = errors.New("eventual: invalid configuration")
	// ErrInvalidMessage reports a message that cannot be sent: a kind or id
	// that breaks the rules, a payload that is not JSON. Nothing was sent.
	ErrInvalidMessage = errors.New("eventual: invalid message")
	// ErrTooLarge reports a message that does not fit a queue message
	// (64 KiB) when there is no blob container to hold its payload, or an
	// outbox intent over 64 KiB. Nothing was sent.
	ErrTooLarge = errors.New("eventual: message too large")
	// ErrDuplicateKind reports a second handler for one kind.
	ErrDuplicateKind = errors.New("eventual: kind already has a handler")
	// ErrNoDelivery reports a step that needs the message being handled
	// (Once) called with a context that is not a handler's.
	ErrNoDelivery = errors.New("eventual: not called from a handler")
	// ErrRunning reports a second Run of a processor that is running.
	ErrRunning = errors.New("eventual: processor already running")
	// ErrUndecodable reports a queue message that is not an envelope.
	ErrUndecodable = errors.New("eventual: message does not decode")
	// ErrUnsendable reports an outbox intent that can never be sent, which
	// Relay set aside (a *RelayError with SetAside true).
	ErrUnsendable = errors.New("eventual: intent can never be sent")
	// ErrPoisoned reports an outbox intent of an inline processor
	// (NewInline) whose handler was started Config.MaxDeliveries times
	// without succeeding, which Relay set aside as a queued processor
	// would poison its message (a *RelayError with SetAside and Poisoned
	// true). It does not match ErrUnsendable: the intent could be run,
	// its handler failed.
	ErrPoisoned = errors.New("eventual: intent's handler failed on every run")
	// ErrStaleReplay reports a poison message that Replay left where it
	// is because it was created Config.MarkerTTL ago or more: the markers
	// of its Once steps may have been swept (SweepMarkers), so running it
	// again could apply a change a second time. ReplayOptions.Stale sends
	// it anyway.
	ErrStaleReplay = errors.New("eventual: message older than its Once markers")
)

// RelayError reports an outbox intent that Relay did not send, or a
// partition whose intents it could not read (RowKey ""): it names the
// partition, the intent's RowKey and, when they were read, its message's
// kind and id. SetAside reports an intent moved to its set-aside row
// (UnsendablePrefix) with Err as the reason: one that can never be sent,
// matching ErrUnsendable, or, with Poisoned also true, an inline
// processor's intent whose handler was started Config.MaxDeliveries
// times without succeeding, matching ErrPoisoned (Err then wraps the
// handler's last error, when that run's error is known). Any other
// intent stays where it is for the next Relay.
type RelayError struct {
	Partition string
	RowKey    string
	Kind, ID  string
	SetAside  bool
	Poisoned  bool
	Err       error
}

func (e *RelayError) Error() string {
	what := "eventual: relay: outbox partition (" + argerr.Keys(e.Partition, "") + ")"
	if e.RowKey != "" {
		what = fmt.Sprintf("eventual: relay: intent (%s), message %q of kind %q", argerr.Keys(e.Partition, e.RowKey), e.ID, e.Kind)
	}
	switch {
	case e.Poisoned:
		return fmt.Sprintf("%s: its handler failed on every run, set aside: %v", what, e.Err)
	case e.SetAside:
		return fmt.Sprintf("%s: can never be sent, set aside: %v", what, e.Err)
	}
	return fmt.Sprintf("%s: %v", what, e.Err)
}

// Is makes errors.Is(err, ErrUnsendable) true for an intent set aside as
// unsendable, and errors.Is(err, ErrPoisoned) for one set aside because
// its handler kept failing.
func (e *RelayError) Is(target error) bool {
	switch {
	case e.Poisoned:
		return e.SetAside && target == ErrPoisoned
	case e.SetAside:
		return target == ErrUnsendable
	}
	return false
}

// Unwrap returns the cause.
func (e *RelayError) Unwrap() error { return e.Err }

// ConfigError names the setting or argument that is wrong: "eventual:
// invalid <Field>: <Reason>", Field as the caller wrote it
// ("Config.BatchSize", "OutboxConfig.Prefix", "queues[1]"). It matches
// entity.ErrInvalid, as every package's ConfigError does, and
// ErrInvalidConfig.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string { return argerr.Message("eventual", e.Field, e.Reason) }

// Is makes errors.Is(err, entity.ErrInvalid) and errors.Is(err,
// ErrInvalidConfig) true.
func (e *ConfigError) Is(target error) bool {
	return target == ErrInvalidConfig || target == argerr.Err
}

// ReasonNil is the Reason of a *ConfigError about a nil argument.
const ReasonNil = "is nil"

// MessageError reports a message that cannot be sent: it names the kind,
// the id and the rule broken, and matches ErrInvalidMessage (or
// ErrTooLarge).
type MessageError struct {
	Kind   string
	ID     string
	Reason string
	Err    error // ErrInvalidMessage, ErrTooLarge, or a cause
}

func (e *MessageError) Error() string {
	if e.ID == "" && e.Kind == "" && e.Reason != "" {
		return "eventual: " + e.Reason // about the call, not one message
	}
	return fmt.Sprintf("eventual: message %q of kind %q: %s", e.ID, e.Kind, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidMessage) true, and ErrTooLarge for a
// message over the size limit; every MessageError, refused before any
// request, matches entity.ErrInvalid too.
func (e *MessageError) Is(target error) bool {
	switch target {
	case ErrInvalidMessage:
		return e.Err != ErrTooLarge
	case entity.ErrInvalid:
		return true
	}
	return target == e.Err
}

// Unwrap returns the cause.
func (e *MessageError) Unwrap() error { return e.Err }

// MaxSubmitMessages is the most messages one Outbox.Submit commits: each
// is an intent entity inserted in the change's entity group transaction,
// which holds at most 100 operations (entity.MaxBatchOperations), so a
// change of n operations leaves room for MaxSubmitMessages - n. A pattern
// whose writes carry the caller's messages in their transaction leaves
// room for 100 less the operations the write itself takes.
const MaxSubmitMessages = 100

// TooManyMessagesError reports a write given more messages than its one
// entity group transaction holds: each message is an intent, one of the
// transaction's 100 operations (MaxSubmitMessages), beside the write's
// own. It names the write, how many messages it was given and how many
// fit, and matches ErrInvalidMessage and entity.ErrInvalid. Nothing was
// sent.
type TooManyMessagesError struct {
	Op    string // the write: "Submit", "Insert", "Replace", …
	Count int    // messages given
	Limit int    // the most that fit: MaxSubmitMessages less the write's own operations
}

func (e *TooManyMessagesError) Error() string {
	what := "the change"
	if e.Op != "Submit" {
		what = "the write itself"
	}
	return fmt.Sprintf("eventual: %s: %d messages, more than the %d its entity group transaction holds (%d operations, less %d for %s)",
		e.Op, e.Count, e.Limit, MaxSubmitMessages, MaxSubmitMessages-e.Limit, what)
}

// Is makes errors.Is(err, ErrInvalidMessage) and errors.Is(err,
// entity.ErrInvalid) true.
func (e *TooManyMessagesError) Is(target error) bool {
	return target == ErrInvalidMessage || target == argerr.Err
}

// EnqueueError reports one message of an Enqueue call that was not sent;
// Enqueue joins one per failed message, in one line; errors.Is and errors.As reach each.
type EnqueueError struct {
	Index int // position in the call's arguments
	Kind  string
	ID    string
	Queue string // "" when it failed before a queue was chosen
	Err   error
}

func (e *EnqueueError) Error() string {
	if e.Queue == "" {
		return fmt.Sprintf("eventual: enqueue message %d (%q): %v", e.Index, e.ID, e.Err)
	}
	return fmt.Sprintf("eventual: enqueue message %d (%q) into %s: %v", e.Index, e.ID, e.Queue, e.Err)
}

// Unwrap returns the cause.
func (e *EnqueueError) Unwrap() error { return e.Err }

// DecodeError reports a queue message that is not a valid envelope; it
// matches ErrUndecodable. Such a message is poisoned at once.
type DecodeError struct {
	Reason string
	Err    error
}

func (e *DecodeError) Error() string {
	if e.Err == nil {
		return "eventual: message does not decode: " + e.Reason
	}
	return fmt.Sprintf("eventual: message does not decode: %s: %v", e.Reason, e.Err)
}

// Is makes errors.Is(err, ErrUndecodable) true.
func (e *DecodeError) Is(target error) bool { return target == ErrUndecodable }

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }
