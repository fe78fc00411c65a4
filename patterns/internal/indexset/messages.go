package indexset

import (
	"strconv"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// OptionsProblem is what is wrong with the WriteOptions of a write op
// before its messages are looked at, for the *ConfigError of the package
// (secondaryindex, indexentity, denormalize): more than one (n), or
// messages on an owner ("Set", "Copies") made without a processor, which
// has no outbox. field is "" when nothing is.
func OptionsProblem(op, owner string, n int, messages, outbox bool) (field, reason string) {
	switch {
	case n > 1:
		return "WriteOptions", op + " takes at most one, got " + strconv.Itoa(n)
	case messages && !outbox:
		return "WriteOptions.Messages", "need an outbox, which needs a processor: " + op + " of a " + owner + " made by New without one cannot commit messages"
	}
	return "", ""
}

// MaxMessages is the most messages of the caller one write of an index
// Set commits: each is an outbox intent, one operation of the write's
// entity group transaction, which holds entity.MaxBatchOperations (100);
// the write itself takes at least two of them — the primary's insert,
// replace or delete, and the intent of the Set's own message that keeps
// its other indexes — hence 98. Each SamePartition index takes two more
// (its old entry or list and its new one, changed in the same
// transaction), so a Set with k of them commits MaxMessages - 2k.
const MaxMessages = entity.MaxBatchOperations - 2

// Room is the most messages of the caller one write of a Set with local
// SamePartition indexes commits: MaxMessages less two per index.
func Room(local int) int { return MaxMessages - 2*local }

// Messages checks the caller's messages of a write op of a Set, before
// any request, and returns them: a *ConfigError for more than one
// WriteOptions (n) or for messages on a Set without an outbox; an
// *eventual.TooManyMessagesError for more messages than room (what the
// write's transaction holds besides the change: Room), which matches
// eventual.ErrInvalidMessage and entity.ErrInvalid; an
// *eventual.MessageError for two with one id, an outbox payload over
// 64 KiB, or a message proc cannot send (eventual.Processor.CheckSendable).
func Messages[P Package](op string, n int, msgs []eventual.Message, outbox bool, room int, proc *eventual.Processor) ([]eventual.Message, error) {
	if field, reason := OptionsProblem(op, "Set", n, len(msgs) > 0, outbox); field != "" {
		return nil, &ConfigError[P]{Field: field, Reason: reason}
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	if len(msgs) > room {
		return nil, &eventual.TooManyMessagesError{Op: op, Count: len(msgs), Limit: room}
	}
	ids := make(map[string]int, len(msgs))
	for i, m := range msgs {
		if j, dup := ids[m.ID]; dup {
			return nil, &eventual.MessageError{Kind: m.Kind, ID: m.ID, Reason: op + ": message " + strconv.Itoa(i) + " has the id of message " + strconv.Itoa(j), Err: eventual.ErrInvalidMessage}
		}
		ids[m.ID] = i
		if len(m.Payload) > entity.MaxBinaryBytes {
			return nil, &eventual.MessageError{Kind: m.Kind, ID: m.ID, Reason: op + ": an outbox payload is over 64 KiB", Err: eventual.ErrTooLarge}
		}
	}
	if err := proc.CheckSendable(msgs...); err != nil {
		return nil, err
	}
	return msgs, nil
}
