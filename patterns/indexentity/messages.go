package indexentity

import "github.com/tablekit/tablekit/patterns/internal/indexset"

// WriteOptions is the last, optional argument of Insert, Update, Modify
// and Delete (at most one). Its one field, Messages, holds the caller's
// own messages of package eventual (an audit record, a "status changed"
// event), committed as outbox intents in the write's entity group
// transaction, with the primary's change, its SamePartition lists and
// the intent of the message that keeps its other lists: they are sent
// exactly when the change committed, never when it did not
// (TestUserMessageCrashAtEveryStep). Config.Processor sends them and runs
// their handlers; without one (a Set with no outbox), Messages are
// refused with a *ConfigError before any request. It is the shape of
// patterns/secondaryindex's WriteOptions.
//
// Each must be a message the processor can send (see
// eventual.Processor.CheckSendable), with an id unique among them; they,
// the Set's own message and the change's operations share the
// transaction's 100 operations (MaxMessages). A message that breaks
// these is refused with an *eventual.MessageError or an
// *eventual.TooManyMessagesError before any request: nothing is written.
// A write retried after a conflict commits them once, in the round that
// commits. Give each message an ID derived from the change when the call
// may be repeated (after entity.ErrOutcomeUnknown): handlers'
// eventual.Once steps are keyed by it. The outbox sends at once: a
// message's Delay is not kept.
type WriteOptions = indexset.WriteOptions

// MaxMessages is the most messages of the caller (WriteOptions.Messages)
// one write commits: each is an outbox intent in the write's entity group
// transaction of 100 operations, of which the write itself takes the
// primary's and the intent of the Set's own message — hence 98 — and two
// more per SamePartition index (the old value's list and the new one's,
// for a rename): a Set with k SamePartition indexes commits
// MaxMessages - 2k (spilled lists may need more, which the transaction
// then refuses as too large). More is an *eventual.TooManyMessagesError
// naming the count and that limit (matching eventual.ErrInvalidMessage
// and entity.ErrInvalid), before any request (TestTooManyMessages).
const MaxMessages = indexset.MaxMessages
