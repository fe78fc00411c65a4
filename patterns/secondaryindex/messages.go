package secondaryindex

import "github.com/tablekit/tablekit/patterns/internal/indexset"

// WriteOptions are the options of one write (Insert, Update, Modify,
// Delete), its last, variadic argument: at most one. Its one field,
// Messages, holds the caller's own messages of package eventual (an
// audit record, a follow-up in another table), committed as outbox
// intents in the write's entity group transaction, with the change and
// its index intents: they are sent exactly when the change committed,
// never when it did not (TestUserMessageCrash). It is the shape of
// patterns/denormalize's WriteOptions, and patterns/indexentity's.
//
// Config.Processor sends them and runs their handlers; a Set made
// without one refuses Messages with a *ConfigError (Field
// "WriteOptions.Messages"), before any request. With SamePartition
// indexes only, the messages' intents go in the primary's partition as
// they do for the other placements.
//
// Each must be a message the processor can send (see
// eventual.Processor.CheckSendable) with a payload of 64 KiB at most,
// and distinct IDs; they, the index intent and the change's own
// operations share the transaction's 100 operations (MaxMessages). A
// message that breaks these is refused with an *eventual.MessageError,
// an *eventual.TooManyMessagesError or a *ConfigError before any
// request: nothing is written. Give each an ID derived from the change
// when the call may be repeated (after entity.ErrOutcomeUnknown):
// handlers' eventual.Once steps are keyed by it. The outbox sends at
// once: a message's Delay is not kept.
type WriteOptions = indexset.WriteOptions

// MaxMessages is the most messages of the caller (WriteOptions.Messages)
// one write commits: each is an outbox intent in the write's entity group
// transaction of 100 operations, of which the write itself takes the
// primary's and the intent of the index's own message — hence 98 — and
// two more per SamePartition index (its old entry's delete and its new
// entry's insert): a Set with k SamePartition indexes commits
// MaxMessages - 2k. More is an *eventual.TooManyMessagesError naming the
// count and that limit (matching eventual.ErrInvalidMessage and
// entity.ErrInvalid), before any request (TestTooManyMessages).
const MaxMessages = indexset.MaxMessages
