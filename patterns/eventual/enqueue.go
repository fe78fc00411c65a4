package eventual

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/tablekit/tablekit/internal/argerr"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/internal/errline"
	"github.com/tablekit/tablekit/keys"
)

// outgoing is a message ready to send.
type outgoing struct {
	queue int
	text  string
	claim string // blob name holding the payload, or ""
	body  []byte // the payload, when claimed
	delay int32  // seconds the message stays invisible once sent
}

// Enqueue sends messages, each to the queue its Key (or ID) chooses:
// one request per message, up to Config.EnqueueConcurrency at once.
// Every message is checked before anything is sent (a *MessageError). A
// message whose text would be longer than MaxMessageBytes - PoisonReserve
// has its payload written to the processor's blob container first (claim
// check: two more requests on the way, a read and a delete when handled);
// without a container it is refused with ErrTooLarge.
//
// A message whose enqueue reply was lost may be in its queue twice (azcore
// resent it): both copies have the same ID, and handlers are idempotent.
// When some messages fail the error joins one *EnqueueError per message.
//
// An inline processor (NewInline) runs each message's handler instead,
// up to Config.EnqueueConcurrency at once, and returns nil once every
// handler succeeded; a handler's error is the message's *EnqueueError
// (Queue ""), and nothing keeps that message: the caller runs it again,
// or sends through an Outbox, whose intent keeps it. A message with a
// Delay is refused (an *InlineError, ErrInline), and so is one whose kind
// has no handler on the processor (ErrInvalidMessage), before any
// handler runs (TestInlineEnqueueRunsOrRefuses).
func (p *Processor) Enqueue(ctx context.Context, msgs ...Message) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := p.usable(); err != nil {
		return err
	}
	out := make([]outgoing, len(msgs))
	var errs []error
	for i := range msgs {
		if p.inline && msgs[i].Delay > 0 {
			errs = append(errs, &EnqueueError{Index: i, Kind: msgs[i].Kind, ID: msgs[i].ID, Err: &InlineError{Op: "Enqueue: Message.Delay"}})
			continue
		}
		o, err := p.prepare(msgs[i])
		if err != nil {
			errs = append(errs, &EnqueueError{Index: i, Kind: msgs[i].Kind, ID: msgs[i].ID, Err: err})
		}
		out[i] = o
	}
	if len(errs) > 0 {
		return errline.Join(errs...)
	}
	for i, err := range p.sendAll(ctx, out) {
		if err != nil {
			errs = append(errs, &EnqueueError{Index: i, Kind: msgs[i].Kind, ID: msgs[i].ID, Queue: p.queueName(out[i].queue), Err: err})
		}
	}
	return errline.Join(errs...)
}

// queueName is the name of p's queue q, "" for an inline processor.
func (p *Processor) queueName(q int) string {
	if p.inline {
		return ""
	}
	return p.names[q]
}

// sendAll sends out, up to Config.EnqueueConcurrency at once, and returns
// each one's error.
func (p *Processor) sendAll(ctx context.Context, out []outgoing) []error {
	return p.each(len(out), func(i int) error { return p.send(ctx, out[i]) })
}

// each runs fn(0) … fn(n-1), up to Config.EnqueueConcurrency at once, and
// returns each one's error.
func (p *Processor) each(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	if n == 1 {
		errs[0] = fn(0)
		return errs
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, p.cfg.EnqueueConcurrency)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = fn(i)
		})
	}
	wg.Wait()
	return errs
}

// CheckSendable reports whether p can send msgs, without sending
// anything: each must be a valid message (kind, id, JSON payload, delay;
// a *MessageError matching ErrInvalidMessage otherwise) whose envelope,
// once encoded as p writes it (Config.Encoding), fits a queue message, or
// else p must have a blob container to hold its payload (claim check; a
// *MessageError matching ErrTooLarge otherwise). It is what Enqueue checks
// before it sends, and what Outbox.Submit checks before its transaction,
// so that a change is never committed with a message that can never be
// sent. Packages that write outbox intents of their own call it before
// their transactions. When several messages fail the error joins one
// *MessageError per message.
func (p *Processor) CheckSendable(msgs ...Message) error {
	if err := p.usable(); err != nil {
		return err
	}
	var errs []error
	for _, m := range msgs {
		if _, err := p.prepare(m); err != nil {
			errs = append(errs, err)
		}
	}
	return errline.Join(errs...)
}

// prepare checks m, stamps its creation time, and builds its text.
func (p *Processor) prepare(m Message) (outgoing, error) {
	if err := m.check(); err != nil {
		return outgoing{}, err
	}
	if m.Created.IsZero() {
		m.Created = p.cfg.Clock.Now()
	}
	env := envelope{Kind: m.Kind, ID: m.ID, Created: wireTime{m.Created.UTC()}, Payload: m.Payload}
	body, err := json.Marshal(env)
	if err != nil {
		return outgoing{}, &MessageError{Kind: m.Kind, ID: m.ID, Reason: "the envelope does not encode", Err: err}
	}
	if p.inline {
		// No queue: no size limit, no claim check; the text is what the
		// handler's message is decoded from, as a worker's would be.
		if err := p.checkInline(&m); err != nil {
			return outgoing{}, err
		}
		return outgoing{text: encodeText(body, p.cfg.Encoding)}, nil
	}
	o := outgoing{queue: p.shard(&m), text: encodeText(body, p.cfg.Encoding), delay: int32((m.Delay + time.Second - 1) / time.Second)}
	if len(o.text) <= MaxMessageBytes-PoisonReserve {
		return o, nil
	}
	if p.blobs == nil {
		return outgoing{}, &MessageError{Kind: m.Kind, ID: m.ID, Reason: "the message is over the queue's 64 KiB and there is no blob container for its payload", Err: ErrTooLarge}
	}
	env.Payload, env.Claim = nil, m.Kind+"/"+m.ID
	if body, err = json.Marshal(env); err != nil {
		return outgoing{}, &MessageError{Kind: m.Kind, ID: m.ID, Reason: "the envelope does not encode", Err: err}
	}
	o.text, o.claim, o.body = encodeText(body, p.cfg.Encoding), env.Claim, m.Payload
	return o, nil
}

// shard picks m's queue with keys.Bucket, a hash that is fixed across
// releases and easy to reproduce in other languages.
func (p *Processor) shard(m *Message) int {
	if len(p.queues) == 1 {
		return 0
	}
	key := m.Key
	if key == "" {
		key = m.ID
	}
	n, _ := strconv.Atoi(keys.Bucket(key, len(p.queues)))
	return n
}

func (p *Processor) send(ctx context.Context, o outgoing) error {
	if p.inline {
		out := p.runInline(ctx, o.text, 1)
		p.report(out)
		return out.Err
	}
	if o.claim != "" {
		if err := PutBlob(ctx, p.blobs, o.claim, o.body); err != nil {
			return err
		}
	}
	var opts *azqueue.EnqueueMessageOptions
	if o.delay > 0 {
		opts = &azqueue.EnqueueMessageOptions{VisibilityTimeout: &o.delay}
	}
	_, err := p.queues[o.queue].Work.EnqueueMessage(ctx, o.text, opts)
	return err
}
