package eventual

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/errline"
	"github.com/tablekit/tablekit/keys"
)

// OutboxPrefix is the RowKey prefix of intent entities unless
// OutboxConfig says otherwise.
const OutboxPrefix = "tablekit.outbox_"

// UnsendablePrefix is the RowKey prefix of the intents Relay set aside
// because they can never be sent, unless OutboxConfig says otherwise.
const UnsendablePrefix = "tablekit.unsendable_"

// OutboxConfig tunes an Outbox.
type OutboxConfig struct {
	// Prefix is the RowKey prefix of intent entities; "" means
	// OutboxPrefix. No other entity of the table's partitions may have a
	// RowKey that starts with it.
	Prefix string
	// UnsendablePrefix is the RowKey prefix of intents set aside as
	// unsendable (see Relay); "" means UnsendablePrefix. Neither prefix may
	// start with the other.
	UnsendablePrefix string
	// Grace is how old an intent must be before Relay sends it: younger ones
	// are being sent by the Submit that wrote them. 0 means 30 s; NoGrace
	// (any negative duration) means no wait, for tests and for a Relay
	// known to run after every writer stopped. An intent's age is its
	// Timestamp (the service's clock) read with the processor's clock
	// (Config.Now or Clock): a clock ahead of the service's by d relays
	// intents up to d younger than Grace, sending a message its Submit
	// may still be sending (a second delivery, which at-least-once
	// handlers absorb); one behind delays relays by d. With NoGrace the
	// clock plays no part (TestNoGraceIgnoresClockSkew).
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
	bags *entity.Table[entity.DynamicEntity]
	cfg  OutboxConfig
}

// intent is one message waiting in a partition to be enqueued.
type intent struct {
	PartitionKey string
	RowKey       string // prefix + message id
	Kind         string
	ID           string
	Created      time.Time
	Key          string `table:",omitempty"`
	Payload      []byte
	Attempt      string // the Submit call that wrote it
}

// The properties of an intent entity (see "Wire format" in the package
// documentation), the runs an inline processor counts on it, and the two
// a set-aside intent adds.
const (
	propKind     = "Kind"
	propID       = "ID"
	propCreated  = "Created"
	propKey      = "Key"
	propPayload  = "Payload"
	propAttempt  = "Attempt"
	propRuns     = "Runs"
	propReason   = "Reason"
	propSetAside = "SetAside"
)

// NewOutbox returns the outbox of table t, sending through p. The outbox
// keeps its intents in t, the caller's table, beside the entities they go
// with, and has no storage of its own: it has no Provision method; create t
// with t.Provision and p's queues with p.Provision (or both with
// account.Provision).
func NewOutbox[T any](p *Processor, t *entity.Table[T], cfg OutboxConfig) (*Outbox[T], error) {
	if p == nil {
		return nil, &ConfigError{Field: "processor", Reason: ReasonNil}
	}
	if t == nil {
		return nil, &ConfigError{Field: "table", Reason: ReasonNil}
	}
	if cfg.Prefix == "" {
		cfg.Prefix = OutboxPrefix
	}
	if cfg.UnsendablePrefix == "" {
		cfg.UnsendablePrefix = UnsendablePrefix
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
	if err := keys.Validate(cfg.UnsendablePrefix); err != nil {
		return nil, &ConfigError{Field: "OutboxConfig.UnsendablePrefix", Reason: err.Error()}
	}
	if strings.HasPrefix(cfg.Prefix, cfg.UnsendablePrefix) || strings.HasPrefix(cfg.UnsendablePrefix, cfg.Prefix) {
		return nil, &ConfigError{Field: "OutboxConfig.UnsendablePrefix", Reason: fmt.Sprintf("%q and the intents' prefix %q start one another", cfg.UnsendablePrefix, cfg.Prefix)}
	}
	// Views of t: intents are written in t's transactions, so through t's
	// protection when it has one (package crypt), and read through it.
	rows, err := entity.ViewAs[intent](t)
	if err != nil {
		return nil, err
	}
	bags, err := entity.ViewAs[entity.DynamicEntity](t)
	if err != nil {
		return nil, err
	}
	return &Outbox[T]{p: p, t: t, rows: rows, bags: bags, cfg: cfg}, nil
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
// Submit returns the transaction's error, prefixed "eventual: outbox" and
// naming the partition (a *entity.TransactionError's Index counts the
// intents first: the change's first operation is len(msgs);
// TestSubmitErrorsNameTheOutboxAndCommitNothing), or nil once
// it committed —
// also when azcore resent it after a lost reply (the intents carry this
// call's attempt id, read back when the answer is a conflict or unknown)
// and also when the immediate send failed (reported to Hooks.Error; Relay
// will send). An error matching entity.ErrOutcomeUnknown means neither
// could be told.
//
// Before the transaction every message is checked as Processor.CheckSendable
// checks it. Submit needs at least one message — a change alone is the
// table's own Submit — and refuses none with a *MessageError
// (ErrInvalidMessage). A message that could never be sent — invalid, or too large
// for a queue message when the processor has no blob container — is
// refused with a *MessageError (matching ErrInvalidMessage or ErrTooLarge)
// and nothing is committed. A payload is at most 64 KiB (an intent's
// binary property) in any case. The intents and the change share the
// transaction's 100 operations: more than MaxSubmitMessages less the
// change's own is a *TooManyMessagesError (matching ErrInvalidMessage and
// entity.ErrInvalid) naming both counts, before any request
// (TestSubmitRefusesMoreMessagesThanItsTransactionHolds).
func (o *Outbox[T]) Submit(ctx context.Context, partitionKey string, change func(b *entity.Batch) error, msgs ...Message) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := o.usable(); err != nil {
		return err
	}
	if len(msgs) == 0 {
		return &MessageError{Reason: "Submit has no message (a change alone is the table's Submit)", Err: ErrInvalidMessage}
	}
	if len(msgs) > MaxSubmitMessages {
		return &TooManyMessagesError{Op: "Submit", Count: len(msgs), Limit: MaxSubmitMessages}
	}
	attempt := uuid.NewString()
	rows := make([]*intent, len(msgs))
	todo := make([]ready, len(msgs))
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
		out, err := o.p.prepare(m)
		if err != nil {
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
		todo[i] = ready{rowKey: rows[i].RowKey, etag: entity.AnyETag, kind: m.Kind, id: m.ID, out: out}
		b.Insert(rows[i])
	}
	if change != nil {
		if err := change(b); err != nil {
			return fmt.Errorf("eventual: outbox: Submit in partition (%s): the change: %w", argerr.Keys(partitionKey, ""), err)
		}
	}
	if own := b.Len() - len(msgs); b.Len() > MaxSubmitMessages && own <= MaxSubmitMessages {
		// The change fits a transaction alone; with the intents it does not.
		return &TooManyMessagesError{Op: "Submit", Count: len(msgs), Limit: MaxSubmitMessages - own}
	}
	etags, err := o.t.Submit(ctx, b)
	if err != nil && !o.committed(ctx, err, rows[0], attempt) {
		return fmt.Errorf("eventual: outbox: Submit in partition (%s): %w", argerr.Keys(partitionKey, ""), err)
	}
	for i := range todo {
		if i < len(etags) && etags[i] != "" {
			todo[i].etag = etags[i] // delete this very intent, not a later one with the same id
			if o.p.inline && o.p.cfg.MaxDeliveries <= 1 {
				// Its one run is this one: a failure sets it aside.
				todo[i].row = rowOf(rows[i], etags[i])
			}
		}
	}
	if _, errs := o.send(ctx, partitionKey, todo); len(errs) > 0 {
		what := "the relay will send"
		if o.p.inline {
			what = "the relay will run what is not set aside"
		}
		o.p.onError(fmt.Errorf("eventual: outbox: committed; %s: %w", what, errline.Join(errs...)))
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
//
// One intent never holds up another: Relay goes on past every failure
// and returns, besides the count, one *RelayError per intent it did not
// send (or per partition it could not read), joined; errors.As finds
// them, each naming the partition and the intent. An intent that can
// never be sent — its row does not decode as an intent, or its message is
// invalid, or too large for a queue message when the processor has no
// blob container — is set aside: moved, in one entity group transaction,
// to the RowKey UnsendablePrefix + message id of its partition, with the
// reason (see "Wire format" in the package documentation), where tools
// and Unsendable list it; Revive puts it back once the cause is fixed.
// Its *RelayError has SetAside true and matches ErrUnsendable. Any other
// failure (a send or delete that failed) leaves the intent for the next
// Relay.
//
// An inline processor's Relay (NewInline) runs each intent's handler
// instead of sending it, having first counted the run on the intent: it
// replaces the intent with its Runs one higher, on condition of the ETag
// it read (one more request per run), and the handler's DequeueCount is
// that count. A Relay whose count fails on the ETag, another Relay having
// counted that run first, leaves the intent to it and reports nothing for
// it. When run Config.MaxDeliveries fails — or that run was counted and
// never ended — the intent is set aside as above, with the handler's
// error as its reason; its *RelayError has SetAside and Poisoned true and
// matches ErrPoisoned. See "Inline processor" and "Wire format" in the
// package documentation.
func (o *Outbox[T]) Relay(ctx context.Context, partitions ...string) (int, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return 0, err
	}
	if err := o.usable(); err != nil {
		return 0, err
	}
	if err := checkPartitions(partitions); err != nil {
		return 0, err
	}
	q := entity.Query{Filter: filter.RowKeyPrefix(o.cfg.Prefix)}
	cutoff := o.p.cfg.Clock.Now().Add(-o.cfg.Grace)
	sent := 0
	var errs []error
	var pk string
	var group []entity.DynamicEntity
	flush := func() {
		if len(group) > 0 {
			n, gerrs := o.relayRows(ctx, pk, group)
			sent += n
			errs = append(errs, gerrs...)
		}
		group = group[:0]
	}
	scan := func(rows iter.Seq2[entity.DynamicEntity, error], partition string) {
		for row, err := range rows {
			if err != nil {
				flush()
				errs = append(errs, &RelayError{Partition: partition, Err: fmt.Errorf("reading intents: %w", err)})
				return
			}
			// With NoGrace no row is skipped: the server's Timestamp may
			// run ahead of this clock (Azurite adds up to 1 ms; the
			// service's clock is not ours).
			if o.cfg.Grace > 0 && row.Timestamp.After(cutoff) {
				continue
			}
			if len(group) > 0 && row.PartitionKey != pk {
				flush()
			}
			pk = row.PartitionKey
			group = append(group, row)
		}
		flush()
	}
	if len(partitions) == 0 {
		scan(o.bags.Query(ctx, q), "")
	} else {
		seen := map[string]bool{}
		for _, p := range partitions {
			if seen[p] {
				continue
			}
			seen[p] = true
			scan(o.bags.Query(ctx, entity.Query{Filter: filter.PK(p).And(q.Filter)}), p)
		}
	}
	return sent, errline.Join(errs...)
}

// ready is an intent whose message is prepared for sending.
type ready struct {
	rowKey, etag string
	kind, id     string
	out          outgoing
	// Inline processors only. relay: the run is a Relay's, counted on
	// the intent before it starts; prior: the runs counted before it;
	// row: the intent as stored (its ETag is etag), which a last run that
	// fails sets aside (nil: it is not set aside here).
	relay bool
	prior int64
	row   *entity.DynamicEntity
}

// rowOf is the stored row of an intent Submit wrote, whose ETag is etag.
func rowOf(in *intent, etag string) *entity.DynamicEntity {
	row := &entity.DynamicEntity{PartitionKey: in.PartitionKey, RowKey: in.RowKey, ETag: etag}
	row.Set(propKind, in.Kind).Set(propID, in.ID).Set(propCreated, in.Created).Set(propPayload, in.Payload).Set(propAttempt, in.Attempt)
	if in.Key != "" {
		row.Set(propKey, in.Key)
	}
	return row
}

// runsOf is how many runs of its handler an inline processor has counted
// on an intent row: its Runs property, 1 when it has none (the Submit's
// own run, as for an intent written before runs were counted).
func runsOf(row *entity.DynamicEntity) int64 {
	switch v := row.Properties[propRuns].(type) {
	case int32:
		return int64(max(v, 0))
	case int64:
		return max(v, 0)
	}
	return 1
}

// relayRows sends the intents rows of one partition, setting aside those
// that can never be sent.
func (o *Outbox[T]) relayRows(ctx context.Context, pk string, rows []entity.DynamicEntity) (int, []error) {
	var errs []error
	var todo []ready
	for i := range rows {
		row := &rows[i]
		m, err := o.messageOf(row)
		var out outgoing
		if err == nil {
			out, err = o.p.prepare(m)
		}
		if err == nil {
			r := ready{rowKey: row.RowKey, etag: row.ETag, kind: m.Kind, id: m.ID, out: out}
			if o.p.inline {
				r.relay, r.prior, r.row = true, runsOf(row), row
			}
			todo = append(todo, r)
			continue
		}
		re := &RelayError{Partition: pk, RowKey: row.RowKey, Kind: m.Kind, ID: m.ID, Err: err}
		switch serr := o.setAside(ctx, row, err); {
		case serr == nil:
			re.SetAside = true
		case errors.Is(serr, errGone):
			continue // sent or set aside by another relay meanwhile
		default:
			re.Err = fmt.Errorf("%w; setting it aside failed: %w", err, serr)
		}
		errs = append(errs, re)
	}
	sent, serrs := o.send(ctx, pk, todo)
	return sent, append(errs, serrs...)
}

// messageOf reads the message of an intent row.
func (o *Outbox[T]) messageOf(row *entity.DynamicEntity) (Message, error) {
	var m Message
	var missing []string
	str := func(name string, dst *string, optional bool) {
		v, present := row.Properties[name]
		s, ok := v.(string)
		switch {
		case ok:
			*dst = s
		case present || !optional:
			missing = append(missing, name)
		}
	}
	str(propKind, &m.Kind, false)
	str(propID, &m.ID, false)
	str(propKey, &m.Key, true)
	created, ok := entity.Prop[time.Time](row, propCreated)
	if !ok {
		missing = append(missing, propCreated+" (DateTime)")
	}
	m.Created = created
	payload, ok := entity.Prop[[]byte](row, propPayload)
	if !ok {
		missing = append(missing, propPayload+" (Binary)")
	}
	m.Payload = payload
	switch {
	case len(missing) > 0:
		return m, &MessageError{Kind: m.Kind, ID: m.ID, Reason: "the intent entity does not decode: missing or mistyped " + strings.Join(missing, ", "), Err: ErrInvalidMessage}
	case row.RowKey != o.cfg.Prefix+m.ID:
		return m, &MessageError{Kind: m.Kind, ID: m.ID, Reason: fmt.Sprintf("the intent's RowKey %q does not name its message id", row.RowKey), Err: ErrInvalidMessage}
	}
	return m, nil
}

// errGone reports an intent that is no longer there as it was read.
var errGone = errors.New("eventual: the intent is gone")

// maxReason is the most bytes of a set-aside intent's reason kept.
const maxReason = 1 << 10

// setAside moves an intent that can never be sent to its unsendable row,
// with the reason, in one entity group transaction that deletes the
// intent on condition that it is still the version read. errGone means
// another relay sent or set it aside first.
func (o *Outbox[T]) setAside(ctx context.Context, row *entity.DynamicEntity, reason error) error {
	dead := entity.DynamicEntity{
		PartitionKey: row.PartitionKey,
		RowKey:       o.cfg.UnsendablePrefix + strings.TrimPrefix(row.RowKey, o.cfg.Prefix),
		Properties:   maps.Clone(row.Properties),
	}
	dead.Set(propReason, truncate(strings.ToValidUTF8(reason.Error(), "\uFFFD"), maxReason))
	dead.Set(propSetAside, o.p.cfg.Clock.Now().UTC())
	b := o.bags.NewBatch().Upsert(&dead, entity.Replace).Delete(row.PartitionKey, row.RowKey, row.ETag)
	_, err := o.bags.Submit(ctx, b)
	if err == nil {
		return nil
	}
	// A lost reply, or another relay first: the intent as read tells.
	got, gerr := o.bags.Get(ctx, row.PartitionKey, row.RowKey)
	switch {
	case errors.Is(gerr, entity.ErrNotFound):
		if d, derr := o.bags.Get(ctx, dead.PartitionKey, dead.RowKey); derr == nil && d.Properties[propAttempt] == row.Properties[propAttempt] {
			return nil // set aside (by this call, or another relay's)
		}
		return errGone
	case gerr == nil && got.ETag != row.ETag:
		return errGone // a new intent with the same id: the next Relay judges it
	}
	return err
}

// send enqueues the ready messages of one partition, each on its own,
// then deletes the intents of those sent, each on condition that it is
// still the version read (a crash between the two sends them again later,
// with the same message ids). It returns how many it sent.
func (o *Outbox[T]) send(ctx context.Context, pk string, todo []ready) (int, []error) {
	if len(todo) == 0 {
		return 0, nil
	}
	var errs []error
	var done []ready
	if o.p.inline {
		ran := make([]bool, len(todo))
		for i, err := range o.p.each(len(todo), func(i int) (err error) {
			ran[i], err = o.runIntent(ctx, pk, &todo[i])
			return err
		}) {
			if err != nil {
				errs = append(errs, err)
			}
			if ran[i] {
				done = append(done, todo[i])
			}
		}
	} else {
		outs := make([]outgoing, len(todo))
		for i := range todo {
			outs[i] = todo[i].out
		}
		for i, err := range o.p.sendAll(ctx, outs) {
			if err != nil {
				r := todo[i]
				errs = append(errs, &RelayError{Partition: pk, RowKey: r.rowKey, Kind: r.kind, ID: r.id, Err: fmt.Errorf("enqueue into %s: %w", o.p.queueName(r.out.queue), err)})
				continue
			}
			done = append(done, todo[i])
		}
	}
	for chunk := range slices.Chunk(done, entity.MaxBatchOperations) {
		for i, err := range o.deleteSent(ctx, pk, chunk) {
			if err != nil {
				r := chunk[i]
				errs = append(errs, &RelayError{Partition: pk, RowKey: r.rowKey, Kind: r.kind, ID: r.id, Err: fmt.Errorf("sent; deleting the intent (it will be sent again): %w", err)})
			}
		}
	}
	return len(done), errs
}

// runIntent runs the handler of one intent of an inline processor: run
// number r.prior + 1. A Relay's run is first counted on the intent — its
// Runs replaced, on condition of the ETag read, so that of two Relays
// that read one version only one runs it — and an intent whose counted
// runs reached Config.MaxDeliveries is set aside instead of run. A last
// run that fails sets the intent aside (poison). It reports whether the
// handler succeeded (the intent, now r.etag, is then to be deleted) and
// the intent's *RelayError; neither for an intent another Relay counted
// first, or that is gone.
func (o *Outbox[T]) runIntent(ctx context.Context, pk string, r *ready) (bool, error) {
	limit := int64(o.p.cfg.MaxDeliveries)
	count := r.prior + 1
	if r.relay {
		if r.prior >= limit {
			// Run MaxDeliveries was started and did not end, or its
			// setting aside failed: no run more, as a queued message
			// delivered more than MaxDeliveries times.
			reason := fmt.Errorf("%s: its handler was started %d times inline (Config.MaxDeliveries %d); the last run was cut, or setting the intent aside after it failed, so its error is not known", ReasonOverdelivered, r.prior, limit)
			return false, o.poison(ctx, pk, r, reason, Outcome{Result: Poison, Kind: r.kind, ID: r.id, DequeueCount: count, Reason: ReasonOverdelivered}, false)
		}
		counted := &entity.DynamicEntity{PartitionKey: r.row.PartitionKey, RowKey: r.row.RowKey, ETag: r.row.ETag, Properties: maps.Clone(r.row.Properties)}
		counted.Set(propRuns, int32(count))
		err := o.bags.Update(ctx, counted, entity.Replace)
		switch {
		case errors.Is(err, entity.ErrPreconditionFailed) || errors.Is(err, entity.ErrNotFound):
			// Another Relay counted this run and runs it, or the intent
			// is done (or replaced by a new one, which the next Relay
			// judges): not this Relay's.
			return false, nil
		case err != nil:
			return false, &RelayError{Partition: pk, RowKey: r.rowKey, Kind: r.kind, ID: r.id, Err: fmt.Errorf("counting run %d (the intent stays for the next Relay): %w", count, err)}
		}
		r.row, r.etag = counted, counted.ETag
		if err := ctx.Err(); err != nil {
			return false, &RelayError{Partition: pk, RowKey: r.rowKey, Kind: r.kind, ID: r.id, Err: fmt.Errorf("run %d counted and not started (the intent stays for the next Relay): %w", count, err)}
		}
	}
	out := o.p.runInline(ctx, r.out.text, count)
	switch {
	case out.Err == nil:
		o.p.report(out)
		return true, nil
	case count >= limit && r.row != nil:
		out.Result, out.Reason = Poison, ReasonFailed
		reason := fmt.Errorf("%s: %d runs inline (Config.MaxDeliveries %d); the last failed: %w", ReasonFailed, count, limit, out.Err)
		return false, o.poison(ctx, pk, r, reason, out, true)
	}
	o.p.report(out)
	return false, &RelayError{Partition: pk, RowKey: r.rowKey, Kind: r.kind, ID: r.id, Err: fmt.Errorf("run inline (the intent stays for the next Relay): %w", out.Err)}
}

// poison sets aside the intent r, whose handler failed on every run
// (reason), and reports out — Result Poison, or Retry when the intent
// could not be set aside and stays for the next Relay — to Hooks.Outcome,
// unless another Relay took the intent meanwhile and no run happened here
// (ran false). It returns the intent's *RelayError, nil when another Relay
// took it.
func (o *Outbox[T]) poison(ctx context.Context, pk string, r *ready, reason error, out Outcome, ran bool) error {
	re := &RelayError{Partition: pk, RowKey: r.rowKey, Kind: r.kind, ID: r.id, Err: reason}
	switch serr := o.setAside(ctx, r.row, reason); {
	case serr == nil:
		re.SetAside, re.Poisoned = true, true
	case errors.Is(serr, errGone):
		if ran {
			out.Result = Retry
			o.p.report(out)
		}
		return nil
	default:
		out.Result = Retry
		re.Err = fmt.Errorf("%w; setting it aside failed (the next Relay will): %w", reason, serr)
	}
	o.p.report(out)
	return re
}

// deleteSent deletes the intents of sent messages: one transaction, or
// one request per intent when the transaction fails (some are gone: a
// concurrent relay, or a resend after a lost reply). An intent that is
// gone, or replaced by a newer one with the same id, counts as done. One
// intent whose delete fails does not keep the others: it returns each
// intent's error, nil for those done (TestRelayReportsTheIntentItCouldNotDelete).
func (o *Outbox[T]) deleteSent(ctx context.Context, pk string, rs []ready) []error {
	errs := make([]error, len(rs))
	b := o.bags.NewBatch()
	for _, r := range rs {
		b.Delete(pk, r.rowKey, r.etag)
	}
	if _, err := o.bags.Submit(ctx, b); err == nil {
		return errs
	}
	for i, r := range rs {
		var err error
		for range 3 {
			err = o.bags.Delete(ctx, pk, r.rowKey, r.etag)
			if !errors.Is(err, entity.ErrOutcomeUnknown) {
				break
			}
		}
		if err != nil && !errors.Is(err, entity.ErrNotFound) && !errors.Is(err, entity.ErrPreconditionFailed) {
			errs[i] = err
		}
	}
	return errs
}

// UnsendableIntent is an intent that Relay set aside because it can
// never be sent or, for an inline processor, because its handler failed
// on Config.MaxDeliveries runs (its Reason then starts with ReasonFailed
// or ReasonOverdelivered).
type UnsendableIntent struct {
	PartitionKey string
	RowKey       string // UnsendablePrefix + the message id
	// Message is the intent's message, as far as its entity decoded.
	Message Message
	// Reason is why it can never be sent, and SetAside when Relay found so
	// (by the processor's clock).
	Reason   string
	SetAside time.Time
}

// Unsendable lists the intents Relay set aside, in the given partitions
// or, with none, in the whole table (a scan limited to their RowKey
// range).
func (o *Outbox[T]) Unsendable(ctx context.Context, partitions ...string) iter.Seq2[UnsendableIntent, error] {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(UnsendableIntent, error) bool) { yield(UnsendableIntent{}, err) }
	}
	err := o.usable()
	if err == nil {
		err = checkPartitions(partitions)
	}
	if err != nil {
		return func(yield func(UnsendableIntent, error) bool) { yield(UnsendableIntent{}, err) }
	}
	q := entity.Query{Filter: filter.RowKeyPrefix(o.cfg.UnsendablePrefix)}
	var rows iter.Seq2[entity.DynamicEntity, error]
	if len(partitions) == 0 {
		rows = o.bags.Query(ctx, q)
	} else {
		rows = o.bags.QueryPartitions(ctx, partitions, q, entity.FanOutOptions{})
	}
	return func(yield func(UnsendableIntent, error) bool) {
		for row, err := range rows {
			if err != nil {
				yield(UnsendableIntent{}, fmt.Errorf("eventual: listing unsendable intents: %w", err))
				return
			}
			u := UnsendableIntent{PartitionKey: row.PartitionKey, RowKey: row.RowKey}
			u.Message, _ = o.messageOf(&entity.DynamicEntity{RowKey: o.cfg.Prefix + strings.TrimPrefix(row.RowKey, o.cfg.UnsendablePrefix), Properties: row.Properties})
			u.Reason, _ = entity.Prop[string](&row, propReason)
			u.SetAside, _ = entity.Prop[time.Time](&row, propSetAside)
			if !yield(u, nil) {
				return
			}
		}
	}
}

// Revive moves the set-aside intent of message id in partition
// partitionKey back among the intents, for a later Relay to send once the
// cause is fixed (the processor given a blob container, a handler's kind
// renamed back): one entity group transaction that inserts the intent and
// deletes the unsendable row. The intent comes back with Runs 0: an
// inline processor's next run of it is DequeueCount 1, and it has
// Config.MaxDeliveries runs again. An intent of that id already waiting is an
// error matching entity.ErrAlreadyExists; no unsendable row,
// entity.ErrNotFound.
func (o *Outbox[T]) Revive(ctx context.Context, partitionKey, id string) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := o.usable(); err != nil {
		return err
	}
	if err := checkPartitions([]string{partitionKey}); err != nil {
		return err
	}
	if reason := checkID(id); reason != "" {
		return &ConfigError{Field: "id", Reason: fmt.Sprintf("%q: %s", id, reason)}
	}
	deadKey := o.cfg.UnsendablePrefix + id
	dead, err := o.bags.Get(ctx, partitionKey, deadKey)
	if err != nil {
		return fmt.Errorf("eventual: revive %q in partition %q: %w", id, partitionKey, err)
	}
	back := entity.DynamicEntity{PartitionKey: partitionKey, RowKey: o.cfg.Prefix + id, Properties: maps.Clone(dead.Properties)}
	delete(back.Properties, propReason)
	delete(back.Properties, propSetAside)
	back.Set(propRuns, int32(0)) // an inline processor's next run is run 1
	b := o.bags.NewBatch().Insert(&back).Delete(partitionKey, deadKey, dead.ETag)
	if _, err := o.bags.Submit(ctx, b); err != nil {
		// A lost reply: applied when the row is gone and the intent back.
		_, derr := o.bags.Get(ctx, partitionKey, deadKey)
		got, gerr := o.bags.Get(ctx, partitionKey, back.RowKey)
		if errors.Is(derr, entity.ErrNotFound) && gerr == nil && got.Properties[propAttempt] == back.Properties[propAttempt] {
			return nil
		}
		return fmt.Errorf("eventual: revive %q in partition %q: %w", id, partitionKey, err)
	}
	return nil
}

// checkPartitions refuses, before any request, a PartitionKey the service
// would never store: a query for it would find nothing and say nothing.
func checkPartitions(partitions []string) error {
	for i, pk := range partitions {
		if err := keys.Validate(pk); err != nil {
			return &ConfigError{Field: fmt.Sprintf("partitions[%d]", i), Reason: err.Error()}
		}
	}
	return nil
}

// usable reports a nil Outbox as a *ConfigError, before any request.
func (o *Outbox[T]) usable() error {
	if o == nil || o.p == nil {
		return &ConfigError{Field: "outbox", Reason: "is nil or not made by NewOutbox"}
	}
	return nil
}
