package eventual

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/patterns/eventual/internal/queueproc"
)

// Kind is a message kind whose payload is a T: a name such as
// "ArchiveEmployee.v1" — include a version, so that a changed payload
// becomes a new kind that old workers poison instead of misreading —
// and the Go type its payload decodes into (as JSON).
type Kind[T any] struct {
	name string
}

// NewKind returns the kind name with payload type T. The name is checked
// when the kind is used: 1 to 128 ASCII letters, digits, '.', '_', '-'.
func NewKind[T any](name string) Kind[T] { return Kind[T]{name: name} }

// Name returns the kind's name.
func (k Kind[T]) Name() string { return k.name }

// Message returns a message of this kind with payload as its JSON payload
// and a new random id. Set its Key to choose the queue, or its ID to make
// a message that is sent twice count as one (Once steps are keyed by it).
func (k Kind[T]) Message(payload T) (Message, error) {
	if !validKind(k.name) {
		return Message{}, &MessageError{Kind: k.name, Reason: "the kind name is invalid", Err: ErrInvalidMessage}
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return Message{}, &MessageError{Kind: k.name, Reason: "the payload does not encode as JSON", Err: err}
	}
	return Message{Kind: k.name, ID: uuid.NewString(), Payload: body}, nil
}

// Message is one message to enqueue.
type Message struct {
	// Kind names the handler that runs it.
	Kind string
	// ID identifies the message: every copy of it (the duplicate of a
	// retried enqueue, a replay) has the same ID, and Once steps are keyed
	// by it. Key rules apply (no '/', '\', '#', '?' or control characters),
	// at most 256 bytes.
	ID string
	// Created is when the message was made; zero means now (by the
	// processor's clock) when it is sent. Replay leaves in the poison queue
	// a message created Config.MarkerTTL ago or more (ErrStaleReplay), so
	// an earlier time than the send's makes it stale sooner.
	Created time.Time
	// Key chooses the queue among the processor's queues (the same key,
	// the same queue); "" means ID. It is not sent.
	Key string
	// Payload is the message's JSON payload.
	Payload json.RawMessage
	// Delay keeps the message invisible for this long after Enqueue sends
	// it (rounded up to whole seconds, less than MaxDelay); 0 means it may
	// run at once. It is not sent; an Outbox sends its messages at once.
	Delay time.Duration
}

// MaxDelay bounds Message.Delay: a message lives 7 days in its queue, and
// must become visible before it expires.
const MaxDelay = 7*24*time.Hour - time.Second

// check validates m before anything is sent.
func (m Message) check() error {
	switch {
	case !validKind(m.Kind):
		return &MessageError{Kind: m.Kind, ID: m.ID, Reason: "the kind is empty, longer than 128 bytes, or has characters other than letters, digits, '.', '_', '-'", Err: ErrInvalidMessage}
	case checkID(m.ID) != "":
		return &MessageError{Kind: m.Kind, ID: m.ID, Reason: checkID(m.ID), Err: ErrInvalidMessage}
	case !json.Valid(m.Payload):
		return &MessageError{Kind: m.Kind, ID: m.ID, Reason: "the payload is not valid JSON", Err: ErrInvalidMessage}
	case m.Delay < 0 || m.Delay > MaxDelay:
		return &MessageError{Kind: m.Kind, ID: m.ID, Reason: "the delay is negative or not less than the 7 days a message lives", Err: ErrInvalidMessage}
	}
	return nil
}

// HandleOptions tunes the handling of one kind.
type HandleOptions struct {
	// VisibilityTimeout is how long each renewal keeps a message of this
	// kind invisible while its handler runs (and so, how long until it runs
	// again after a crash); 0 means Config.VisibilityTimeout. The first
	// renewal comes halfway through the receive's visibility timeout.
	VisibilityTimeout time.Duration
}

// registration is a kind's handler, typed away.
type registration struct {
	visibility time.Duration
	run        func(ctx context.Context, payload []byte) error
	decode     func(payload []byte) error // whether payload decodes into the kind's type
}

// Handle registers h as the handler of kind k on p. Handlers of other
// packages' kinds may be registered on the same processor: one worker pool
// serves every kind. Registration is allowed while p runs. A handler must
// be idempotent — it may run more than once for one message — which the
// steps of this package (Move, Once, Upsert, …) are.
//
// A payload that does not decode into a T sends the message to the poison
// queue at once, as does a message whose kind has no handler. On an inline
// processor (NewInline) h runs in the goroutine that submits or relays
// the message; register it before the first Submit, which refuses a kind
// without a handler.
func Handle[T any](p *Processor, k Kind[T], h func(ctx context.Context, payload T) error, opts HandleOptions) error {
	if err := p.usable(); err != nil {
		return err
	}
	switch {
	case !validKind(k.name):
		return &ConfigError{Field: "kind", Reason: fmt.Sprintf("%q is not a valid kind name (1 to 128 ASCII letters, digits, '.', '_' and '-')", k.name)}
	case h == nil:
		return &ConfigError{Field: "handler", Reason: fmt.Sprintf("of %q is nil", k.name)}
	case opts.VisibilityTimeout != 0 && (opts.VisibilityTimeout < time.Second || opts.VisibilityTimeout > queueproc.MaxVisibility):
		return &ConfigError{Field: "HandleOptions.VisibilityTimeout", Reason: fmt.Sprintf("of %q is %v, want 1s to 7 days", k.name, opts.VisibilityTimeout)}
	}
	reg := &registration{
		visibility: opts.VisibilityTimeout,
		run: func(ctx context.Context, payload []byte) error {
			var v T
			if err := json.Unmarshal(payload, &v); err != nil {
				return queueproc.Poison(ReasonBadPayload, err)
			}
			return h(ctx, v)
		},
		decode: func(payload []byte) error {
			var v T
			return json.Unmarshal(payload, &v)
		},
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, dup := p.kinds[k.name]; dup {
		return fmt.Errorf("%w: %q", ErrDuplicateKind, k.name)
	}
	p.kinds[k.name] = reg
	return nil
}

// Delivery describes the message a handler is running.
type Delivery struct {
	Kind    string
	ID      string // the envelope's id, the same for every copy
	Created time.Time
	// The queue's view of this copy.
	Queue        string
	MessageID    string
	DequeueCount int64 // 1 on the first delivery
	Inserted     time.Time

	once onceConfig
}

type deliveryKey struct{}

// DeliveryFrom returns the delivery a handler's context carries.
func DeliveryFrom(ctx context.Context) (Delivery, bool) {
	if ctx == nil {
		return Delivery{}, false
	}
	d, ok := ctx.Value(deliveryKey{}).(Delivery)
	return d, ok
}

func withDelivery(ctx context.Context, d Delivery) context.Context {
	return context.WithValue(ctx, deliveryKey{}, d)
}
