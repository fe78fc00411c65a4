package secondaryindex

import (
	"strconv"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// WriteOptions are the options of one write (Insert, Update, Modify,
// Delete), its last, variadic argument: at most one.
type WriteOptions struct {
	// Messages are the caller's own messages of package eventual (an
	// audit record, a follow-up in another table), committed as outbox
	// intents in the write's entity group transaction, with the change
	// and its index intents: they are sent exactly when the change
	// committed, never when it did not (TestUserMessageCrash). It is the
	// shape of patterns/denormalize's WriteOptions.
	//
	// Config.Processor sends them and runs their handlers; a
	// Set made without one refuses Messages with a *ConfigError (Field
	// "WriteOptions.Messages"), before any request. With SamePartition
	// indexes only, the messages' intents go in the primary's partition as
	// they do for the other placements.
	//
	// Each must be a message the processor can send (see
	// eventual.Processor.CheckSendable) with a payload of 64 KiB at most,
	// and distinct IDs; they, the index intent and the change's own
	// operations share the transaction's 100 operations. A message that
	// breaks these is refused with an *eventual.MessageError or a
	// *ConfigError before any request: nothing is written. Give each an ID
	// derived from the change when the call may be repeated (after
	// entity.ErrOutcomeUnknown): handlers' eventual.Once steps are keyed
	// by it. The outbox sends at once: a message's Delay is not kept.
	Messages []eventual.Message
}

// writeMessages returns the messages of a write's options, checked before
// any request.
func (s *Set[T]) writeMessages(op string, opts []WriteOptions) ([]eventual.Message, error) {
	switch len(opts) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, &ConfigError{Field: "WriteOptions", Reason: op + " takes at most one, got " + strconv.Itoa(len(opts))}
	}
	msgs := opts[0].Messages
	if len(msgs) == 0 {
		return nil, nil
	}
	if s.outbox == nil {
		return nil, &ConfigError{Field: "WriteOptions.Messages", Reason: "need an outbox, which needs a processor: " + op + " of a Set made by New without one cannot commit messages"}
	}
	// The change: the primary, two operations per SamePartition index, and
	// the index message's intent.
	if room := entity.MaxBatchOperations - 2 - 2*len(s.local); len(msgs) > room {
		return nil, &ConfigError{Field: "WriteOptions.Messages", Reason: strconv.Itoa(len(msgs)) + " messages, more than the " + strconv.Itoa(room) + " one transaction holds besides the change"}
	}
	ids := make(map[string]bool, len(msgs))
	for _, m := range msgs {
		if ids[m.ID] {
			return nil, &eventual.MessageError{Kind: m.Kind, ID: m.ID, Reason: "two messages of one write have this id", Err: eventual.ErrInvalidMessage}
		}
		ids[m.ID] = true
		if len(m.Payload) > entity.MaxBinaryBytes {
			return nil, &eventual.MessageError{Kind: m.Kind, ID: m.ID, Reason: "an outbox payload is over 64 KiB", Err: eventual.ErrTooLarge}
		}
	}
	if err := s.proc.CheckSendable(msgs...); err != nil {
		return nil, err
	}
	return msgs, nil
}
