package indexentity

import (
	"strconv"

	"github.com/tablekit/tablekit/entity"

	"github.com/tablekit/tablekit/patterns/eventual"
)

// WriteOptions is the last, optional argument of Insert, Update, Modify
// and Delete (at most one).
type WriteOptions struct {
	// Messages are the caller's own messages of package eventual (an
	// audit record, a "status changed" event), committed as outbox
	// intents in the write's entity group transaction, with the primary's
	// change, its SamePartition lists and the intent of the message that
	// keeps its other lists: they are sent exactly when the change
	// committed, never when it did not (TestUserMessageCrashAtEveryStep).
	// Config.Processor sends them and runs their handlers;
	// without one (a Set with no outbox), Messages are refused with a
	// *ConfigError before any request.
	//
	// Each must be a message the processor can send (see
	// eventual.Processor.CheckSendable), with an id unique among them;
	// they, the Set's own message and the change's operations share the
	// transaction's 100 operations. A message that breaks these is
	// refused with a *eventual.MessageError before any request: nothing
	// is written. A write retried after a conflict commits them once, in
	// the round that commits. Give each message an ID derived from the
	// change when the call may be repeated (after
	// entity.ErrOutcomeUnknown): handlers' eventual.Once steps are keyed
	// by it. The outbox sends at once: a message's Delay is not kept.
	Messages []eventual.Message
}

// maxMessages is the most messages of the caller's one write commits:
// the transaction's 100 operations, less the primary's, the Set's own
// message's intent and one list entity per SamePartition index changed
// (two for a rename; spilled lists may need more, which the transaction
// then refuses as too large).
func (s *Set[T]) maxMessages() int { return 100 - 2 - 2*len(s.local) }

// messages returns the caller's messages of a write, checked before any
// request: a *ConfigError for more than one WriteOptions or for messages
// on a Set without an outbox, an *eventual.MessageError for a message
// that cannot be committed and sent.
func (s *Set[T]) messages(op string, opts []WriteOptions) ([]eventual.Message, error) {
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
	if n := s.maxMessages(); len(msgs) > n {
		return nil, &eventual.MessageError{Reason: op + ": " + strconv.Itoa(len(msgs)) + " messages, more than the " + strconv.Itoa(n) + " one transaction holds besides the change", Err: eventual.ErrTooLarge}
	}
	ids := make(map[string]int, len(msgs))
	for i, m := range msgs {
		if j, dup := ids[m.ID]; dup && m.ID != "" {
			return nil, &eventual.MessageError{Kind: m.Kind, ID: m.ID, Reason: op + ": message " + strconv.Itoa(i) + " has the id of message " + strconv.Itoa(j), Err: eventual.ErrInvalidMessage}
		}
		ids[m.ID] = i
		if len(m.Payload) > entity.MaxBinaryBytes {
			return nil, &eventual.MessageError{Kind: m.Kind, ID: m.ID, Reason: op + ": an outbox payload is over 64 KiB", Err: eventual.ErrTooLarge}
		}
	}
	if err := s.proc.CheckSendable(msgs...); err != nil {
		return nil, err
	}
	return msgs, nil
}
