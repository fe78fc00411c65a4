package eventual

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/patterns/eventual/internal/queueproc"
)

// ErrInline reports an operation that needs a queue asked of an inline
// processor (NewInline), which has none: Run, Drain, Replay,
// PoisonRecord, and Enqueue of a message with a Delay. Every
// *InlineError matches it.
var ErrInline = errors.New("eventual: the processor is inline and has no queue")

// InlineError reports an operation an inline processor (NewInline)
// refuses because it needs a queue; Op names it ("Run", "Replay",
// "Enqueue: Message.Delay"). Nothing was sent or run. It matches
// ErrInline.
type InlineError struct {
	Op string
}

func (e *InlineError) Error() string {
	return "eventual: " + e.Op + ": the processor is inline and has no queue (NewInline)"
}

// Is makes errors.Is(err, ErrInline) true.
func (e *InlineError) Is(target error) bool { return target == ErrInline }

// NewInline returns an inline processor: one with no queue, no worker and
// no blob container, whose messages are run by the writer itself. Where a
// processor of New sends a message into its queue — Outbox.Submit after
// its transaction committed, Outbox.Relay, Enqueue — an inline one runs
// the handler registered for the message's kind (Handle) in the caller's
// goroutine, on the message as a worker would receive it: encoded as
// Config.Encoding says and decoded again, the same Kind, ID, Created and
// payload, with a Delivery whose Queue and MessageID are "" (Once is
// keyed by the ID, as for a queued message) and whose DequeueCount is the
// run's number: 1 in Submit and Enqueue, and for an outbox intent one
// more for each run Relay counted on it. See "Inline processor" in the
// package documentation for its guarantee and its cost.
//
// Of Config it uses Now or Clock, MarkerTTL, Encoding, EnqueueConcurrency
// (how many handlers one call runs at once), MaxDeliveries (how many runs
// of an outbox intent's handler fail before Relay sets the intent aside,
// matching ErrPoisoned; 0 means 5) and Hooks: Hooks.Outcome is called
// once per run, with Result Done, Retry (the handler failed; its outbox
// intent stays for Relay) or Poison (the intent was set aside, Reason
// ReasonFailed, or ReasonOverdelivered for one whose last run was cut,
// set aside without a run); Hooks.Error with the failures Submit does not
// return. The other fields are checked as New checks them and unused.
//
// What needs a queue is refused with an *InlineError (ErrInline): Run,
// Drain, Replay, PoisonRecord, and Enqueue of a message with a Delay.
// Provision and CreateQueues create nothing. A message whose kind has no
// handler on the processor, or whose payload does not decode into the
// kind's type, can never run: CheckSendable, Submit and Enqueue refuse it
// with a *MessageError (ErrInvalidMessage) before any request, and Relay
// sets such an intent aside (ErrUnsendable).
func NewInline(cfg Config) (*Processor, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Processor{cfg: cfg, kinds: map[string]*registration{}, inline: true}, nil
}

// Inline reports whether p is an inline processor (NewInline).
func (p *Processor) Inline() bool { return p != nil && p.inline }

// inlineGrace is DefaultGrace of an inline processor: the default of a
// queued one (two thirds of its default redelivery window).
const inlineGrace = 10 * time.Second

// checkInline checks, before anything is sent, that an inline processor
// can run m: its kind has a handler here, and its payload decodes into
// the kind's type.
func (p *Processor) checkInline(m *Message) error {
	p.mu.RLock()
	reg := p.kinds[m.Kind]
	p.mu.RUnlock()
	if reg == nil {
		return &MessageError{Kind: m.Kind, ID: m.ID, Reason: "the processor is inline and no handler is registered for the kind: nothing could ever run the message", Err: ErrInvalidMessage}
	}
	if err := reg.decode(m.Payload); err != nil {
		return &MessageError{Kind: m.Kind, ID: m.ID, Reason: "the processor is inline and the payload does not decode into the kind's type: " + err.Error(), Err: ErrInvalidMessage}
	}
	return nil
}

// runInline runs the handler of the message whose queue text is text, as
// a worker would on its delivery number count, and returns the run's
// Outcome (Done or Retry, Err the handler's error) for the caller to
// settle and report (p.report).
func (p *Processor) runInline(ctx context.Context, text string, count int64) (out Outcome) {
	start := p.cfg.Clock.Now()
	out = Outcome{Result: Retry, DequeueCount: count}
	env, err := decodeEnvelope(text)
	if err != nil {
		out.Err = err // prepare encoded it: cannot happen
		return out
	}
	out.Kind, out.ID = env.Kind, env.ID
	p.mu.RLock()
	reg := p.kinds[env.Kind]
	p.mu.RUnlock()
	if reg == nil {
		out.Err = fmt.Errorf("eventual: no handler for kind %q", env.Kind)
		return out
	}
	d := Delivery{
		Kind: env.Kind, ID: env.ID, Created: env.Created.Time,
		DequeueCount: count, Inserted: start,
		once: onceConfig{TTL: p.cfg.MarkerTTL, Now: p.cfg.Clock.Now},
	}
	defer func() {
		if v := recover(); v != nil {
			err = &queueproc.PanicError{Value: v}
		}
		var pe *queueproc.PoisonError
		if errors.As(err, &pe) {
			err = &MessageError{Kind: env.Kind, ID: env.ID, Reason: pe.Reason, Err: pe.Err}
		}
		out.Duration = p.cfg.Clock.Now().Sub(start)
		out.Err = err
		if err == nil {
			out.Result = Done
		}
	}()
	err = reg.run(withDelivery(ctx, d), []byte(env.Payload))
	return out
}

// report passes an inline run's outcome to Hooks.Outcome.
func (p *Processor) report(out Outcome) {
	if p.cfg.Hooks.Outcome != nil {
		p.cfg.Hooks.Outcome(out)
	}
}
