package denormalize

import (
	"encoding/json"
	"strconv"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// WriteOptions tunes one write of a source or a target (InsertSource,
// ModifySource, DeleteSource, InsertTarget, ModifyTarget): give at most
// one; none is the zero value.
type WriteOptions struct {
	// Messages are the caller's own messages of package eventual (an
	// audit record, a "manager changed" event), committed as outbox
	// intents in the write's entity group transaction, with the change
	// and its fan-out intents: they are sent exactly when the change
	// committed, never when it did not (TestUserMessageCrashMatrix).
	// Config.Processor sends them and runs their handlers; without one, Messages are refused with a *ConfigError.
	//
	// Each must be a valid message (Kind, ID, JSON Payload) whose
	// envelope fits one queue message once base64-encoded, without a
	// claim-check blob: a payload of about 46 KiB at most (less the kind
	// and id). They, the fan-out messages and the change's own operations
	// share the transaction's 100 operations, and its 4 MiB. A message
	// that breaks these is refused with a *MessageError before any
	// request: nothing is written (TestUserMessageRefused).
	//
	// A write that writes nothing commits nothing: a DeleteSource that
	// finds no source (deleted already, by this call's earlier round after
	// a lost reply, or by another) sends no message. Give each message an
	// ID derived from the change rather than a random one when the call may
	// be repeated (after entity.ErrOutcomeUnknown): handlers' eventual.Once
	// steps are keyed by it. The outbox sends at once: a message's Delay is
	// not kept.
	Messages []eventual.Message
}

// messageLimit is the longest envelope (JSON) of a caller's message: its
// base64 text fits a queue message with eventual's poison reserve, so
// that it is sent without a blob whatever the processor's encoding
// (eventual.Processor.Enqueue refuses longer ones when it has no blob
// container).
const messageLimit = (eventual.MaxMessageBytes - eventual.PoisonReserve) / 4 * 3

// sizedEnvelope is eventual's envelope as far as its size goes: the
// creation time is written with a fixed width.
type sizedEnvelope struct {
	Kind    string          `json:"kind"`
	ID      string          `json:"id"`
	Created string          `json:"created"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// writeOptions returns the one WriteOptions of a call, after checking its
// messages, before any request: a *ConfigError without an outbox, a
// *MessageError for a message that cannot be committed and sent.
func (c *Copies[T, S]) writeOptions(op string, key Key, opts []WriteOptions) ([]eventual.Message, error) {
	var msgs []eventual.Message
	if len(opts) > 0 {
		msgs = opts[0].Messages
	}
	if field, reason := indexset.OptionsProblem(op, "Copies", len(opts), len(msgs) > 0, c.outbox != nil); field != "" {
		return nil, &ConfigError{Field: field, Reason: reason}
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	// The change itself is at least one operation of the transaction.
	if len(msgs) > maxMessages {
		return nil, &MessageError{Op: op, Key: key, Index: maxMessages, Reason: strconv.Itoa(len(msgs)) + " messages, more than the " + strconv.Itoa(maxMessages) + " one transaction holds besides the change", Err: eventual.ErrTooLarge}
	}
	ids := make(map[string]int, len(msgs))
	for i, m := range msgs {
		bad := func(reason string, err error) error {
			return &MessageError{Op: op, Key: key, Index: i, Kind: m.Kind, ID: m.ID, Reason: reason, Err: err}
		}
		if why := checkKind(m.Kind); m.Kind == "" || why != "" {
			if why == "" {
				why = "the kind is empty"
			}
			return nil, bad(why, eventual.ErrInvalidMessage)
		}
		switch {
		case m.ID == "":
			return nil, bad("the id is empty", eventual.ErrInvalidMessage)
		case len(m.ID) > eventual.MaxIDLength:
			return nil, bad("the id is longer than "+strconv.Itoa(eventual.MaxIDLength)+" bytes", eventual.ErrInvalidMessage)
		case keys.Validate(m.ID) != nil:
			return nil, bad("the id is not a valid key: "+keys.Validate(m.ID).Error(), eventual.ErrInvalidMessage)
		case !json.Valid(m.Payload):
			return nil, bad("the payload is not valid JSON", eventual.ErrInvalidMessage)
		case !m.Created.IsZero() && (m.Created.UTC().Year() < 1601 || m.Created.UTC().Year() > 9999):
			return nil, bad("the creation time is outside years 1601 to 9999", eventual.ErrInvalidMessage)
		}
		if j, dup := ids[m.ID]; dup {
			return nil, bad("the id is that of message "+strconv.Itoa(j)+" too", eventual.ErrInvalidMessage)
		}
		ids[m.ID] = i
		env, err := json.Marshal(sizedEnvelope{Kind: m.Kind, ID: m.ID, Created: "0001-01-01T00:00:00.0000000Z", Payload: m.Payload})
		if err != nil {
			return nil, bad("the envelope does not encode: "+err.Error(), eventual.ErrInvalidMessage)
		}
		if len(env) > messageLimit {
			return nil, bad("its envelope takes "+strconv.Itoa(len(env))+" bytes of JSON, more than the "+strconv.Itoa(messageLimit)+" that fit a queue message once base64-encoded", eventual.ErrTooLarge)
		}
	}
	return msgs, nil
}

// maxMessages is the most messages of the caller's one write commits: the
// transaction's operations, less the change's own.
const maxMessages = 99

// checkModify checks, before any request, what ModifySource and
// ModifyTarget are asked: a usable Copies, a mode they honour, a change
// function, valid keys and write options; it returns the messages of the
// write options.
func (c *Copies[T, S]) checkModify(op string, key Key, opts entity.ModifyOptions, noChange bool, wopts []WriteOptions) ([]eventual.Message, error) {
	if err := c.ok(); err != nil {
		return nil, err
	}
	if err := checkMode(op, opts.Mode); err != nil {
		return nil, err
	}
	if noChange {
		return nil, &entity.ValidationError{Rule: "change function", Limit: "non-nil", Value: "nil"}
	}
	if err := validKey(key); err != nil {
		return nil, err
	}
	return c.writeOptions(op, key, wopts)
}
