package eventual

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/steps"
	"github.com/tablekit/tablekit/keys"
)

// OutboxPrefix is the RowKey prefix of intent entities unless
// OutboxConfig says otherwise.
const OutboxPrefix = "tablekit.outbox_"

// OutboxConfig tunes an Outbox.
type OutboxConfig struct {
	// Prefix is the RowKey prefix of intent entities; "" means
	// OutboxPrefix. No other entity of the table's partitions may have a
	// RowKey that starts with it.
	Prefix string
	// Grace is how old an intent must be before Relay sends it: younger ones
	// are being sent by the Submit that wrote them. 0 means 30 s; NoGrace
	// (any negative duration) means no wait, for tests and for a Relay
	// known to run after every writer stopped.
	Grace time.Duration
}

// NoGrace, as OutboxConfig.Grace, makes Relay send intents however young.
const NoGrace time.Duration = -1

// Outbox writes a local change and the intent to do the rest (messages)
// in one entity group transaction, so that the rest can never be lost:
// the intents are entities of the changed partition, moved to the queue
// by a relay and deleted once enqueued.
type Outbox[T any] struct {
	p    *Processor
	t    *entity.Table[T]
	rows *entity.Table[intent]
	cfg  OutboxConfig
}

// intent is one message waiting in a partition to be enqueued.
type intent struct {
	PartitionKey string
	RowKey       string    // prefix + message id
	Timestamp    time.Time `table:",timestamp"`
	Kind         string
	ID           string
	Created      time.Time
	Key          string `table:",omitempty"`
	Payload      []byte
	Attempt      string // the Submit call that wrote it
}

// NewOutbox returns the outbox of table t, sending through p.
func NewOutbox[T any](p *Processor, t *entity.Table[T], cfg OutboxConfig) (*Outbox[T], error) {
	if p == nil || t == nil {
		return nil, &ConfigError{Field: "NewOutbox", Reason: "needs a processor and a table"}
	}
	if cfg.Prefix == "" {
		cfg.Prefix = OutboxPrefix
	}
	switch {
	case cfg.Grace == 0:
		cfg.Grace = 30 * time.Second
	case cfg.Grace < 0:
		cfg.Grace = 0
	}
	if err := keys.Validate(cfg.Prefix); err != nil {
		return nil, &ConfigError{Field: "OutboxConfig.Prefix", Reason: err.Error()}
	}
	rows, err := entity.NewTable[intent](t.Client())
	if err != nil {
		return nil, err
	}
	return &Outbox[T]{p: p, t: t, rows: rows, cfg: cfg}, nil
}

// Submit runs one entity group transaction in partition partitionKey of
// the outbox's table: the insert of one intent per message, then the
// operations change adds to b (the local change; nil for none). When it
// commits, the messages are enqueued at once and their intents deleted;
// if that fails, or the process dies first, Relay sends them later. Either
// way a committed Submit's messages are delivered at least once, and the
// handlers' idempotence (Once is keyed by the message ID) makes them count
// once.
//
// Submit returns the transaction's error, or nil once it committed —
// also when azcore resent it after a lost reply (the intents carry this
// call's attempt id, read back when the answer is a conflict or unknown)
// and also when the immediate send failed (reported to Hooks.Error; Relay
// will send). An error matching entity.ErrOutcomeUnknown means neither
// could be told.
//
// Before the transaction every message is checked as Processor.CheckSendable
// checks it: a message that could never be sent — invalid, or too large
// for a queue message when the processor has no blob container — is
// refused with a *MessageError (matching ErrInvalidMessage or ErrTooLarge)
// and nothing is committed. A payload is at most 64 KiB (an intent's
// binary property) in any case.
func (o *Outbox[T]) Submit(ctx context.Context, partitionKey string, change func(b *entity.Batch) error, msgs ...Message) error {
	if len(msgs) == 0 {
		return &MessageError{Reason: "Submit has no message; use the table's Submit", Err: ErrInvalidMessage}
	}
	attempt := uuid.NewString()
	rows := make([]*intent, len(msgs))
	b := o.t.NewBatch()
	for i, m := range msgs {
		if err := m.check(); err != nil {
			return err
		}
		if len(m.Payload) > entity.MaxBinaryBytes {
			return &MessageError{Kind: m.Kind, ID: m.ID, Reason: "an outbox payload is over 64 KiB", Err: ErrTooLarge}
		}
		if m.Created.IsZero() {
			m.Created = o.p.cfg.Clock.Now()
		}
		if _, err := o.p.prepare(m); err != nil {
			return err // never sendable: commit nothing
		}
		rows[i] = &intent{
			PartitionKey: partitionKey,
			RowKey:       o.cfg.Prefix + m.ID,
			Kind:         m.Kind,
			ID:           m.ID,
			Created:      m.Created.UTC(),
			Key:          m.Key,
			Payload:      m.Payload,
			Attempt:      attempt,
		}
		b.Insert(rows[i])
	}
	if change != nil {
		if err := change(b); err != nil {
			return err
		}
	}
	if _, err := o.t.Submit(ctx, b); err != nil && !o.committed(ctx, err, rows[0], attempt) {
		return err
	}
	if err := o.relay(ctx, partitionKey, rows); err != nil {
		o.p.onError(fmt.Errorf("eventual: outbox: committed; the relay will send: %w", err))
	}
	return nil
}

// committed tells whether a transaction that failed with err was in fact
// applied: azcore resent it after a lost reply, and the resend failed at
// the first intent's insert because the first send had written it, or its
// outcome is unknown. The first intent, carrying this call's attempt id,
// tells.
func (o *Outbox[T]) committed(ctx context.Context, err error, first *intent, attempt string) bool {
	var te *entity.TransactionError
	resentInsert := errors.As(err, &te) && te.Index == 0 && errors.Is(err, entity.ErrAlreadyExists)
	if !resentInsert && !errors.Is(err, entity.ErrOutcomeUnknown) {
		return false
	}
	got, gerr := o.rows.Get(ctx, first.PartitionKey, first.RowKey)
	return gerr == nil && got.Attempt == attempt
}

// Relay sends the intents older than the grace period, in the given
// partitions or, with none, in the whole table (a table scan limited to
// the intents' RowKey range: run it in the background, now and then, to
// finish what crashed writers left). It returns how many it sent.
func (o *Outbox[T]) Relay(ctx context.Context, partitions ...string) (int, error) {
	q := entity.Query{Filter: filter.RowKeyPrefix(o.cfg.Prefix)}
	var found func(yield func(intent, error) bool)
	if len(partitions) == 0 {
		found = o.rows.Query(ctx, q)
	} else {
		found = o.rows.QueryPartitions(ctx, partitions, q, entity.FanOutOptions{})
	}
	cutoff := o.p.cfg.Clock.Now().Add(-o.cfg.Grace)
	sent := 0
	var group []*intent
	flush := func() error {
		if len(group) == 0 {
			return nil
		}
		err := o.relay(ctx, group[0].PartitionKey, group)
		if err == nil {
			sent += len(group)
		}
		group = group[:0]
		return err
	}
	for row, err := range found {
		if err != nil {
			return sent, err
		}
		if row.Timestamp.After(cutoff) {
			continue
		}
		if len(group) > 0 && group[0].PartitionKey != row.PartitionKey {
			if err := flush(); err != nil {
				return sent, err
			}
		}
		group = append(group, &row)
	}
	return sent, flush()
}

// relay enqueues the intents of one partition, then deletes them: a crash
// between the two sends them again later (the same message IDs).
func (o *Outbox[T]) relay(ctx context.Context, partitionKey string, rows []*intent) error {
	msgs := make([]Message, len(rows))
	rks := make([]string, len(rows))
	for i, r := range rows {
		msgs[i] = Message{Kind: r.Kind, ID: r.ID, Created: r.Created, Key: r.Key, Payload: r.Payload}
		rks[i] = r.RowKey
	}
	if err := o.p.Enqueue(ctx, msgs...); err != nil {
		return err
	}
	return steps.DeleteAll(ctx, o.rows, partitionKey, rks)
}
