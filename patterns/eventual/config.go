package eventual

import (
	"fmt"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/clock"
	"github.com/tablekit/tablekit/patterns/eventual/internal/queueproc"
)

// Encoding is how an envelope is written as queue message text.
type Encoding uint8

// Base64 writes the JSON envelope base64-encoded, what Azure Functions and
// WebJobs queue triggers expect by default.
const Base64 Encoding = 0

// PlainText writes the JSON envelope as is (Functions' "messageEncoding":
// "none").
const PlainText Encoding = 1

func (e Encoding) String() string {
	switch e {
	case Base64:
		return "base64"
	case PlainText:
		return "plain"
	}
	return fmt.Sprintf("Encoding(%d)", uint8(e))
}

// PoisonFormat is what a poison queue message holds.
type PoisonFormat uint8

// PoisonOriginal: the poison queue message is the original message text,
// byte for byte, as Azure Functions and WebJobs move it, so that any
// consumer of the poison queue reads what was sent. Its PoisonRecord is
// kept as a JSON blob in the processor's container, named by the poison
// message's id (see "Wire format" in the package documentation and
// Processor.PoisonRecord); a processor without a container keeps no
// record (Hooks.Outcome still reports the reason, the error and the
// dequeue count).
const PoisonOriginal PoisonFormat = 0

// PoisonWrapped: the poison queue message is a JSON document holding the
// record and the original message, {"poison": record, "message"|"text":
// original}, encoded as Config.Encoding says; ParsePoison reads it. Only
// tablekit reads the original back, but the record travels with the
// message and needs no container. It is what tablekit wrote before
// PoisonOriginal.
const PoisonWrapped PoisonFormat = 1

func (f PoisonFormat) String() string {
	switch f {
	case PoisonOriginal:
		return "original"
	case PoisonWrapped:
		return "wrapped"
	}
	return fmt.Sprintf("PoisonFormat(%d)", uint8(f))
}

// Clock is a time source with timers: Config.Clock's type, for tests that
// drive the processor's timers (visibility renewal, polling, shutdown
// grace) with a fake clock. Every Config of tablekit names its clock Now,
// a func() time.Time; Config.Now is that clock here.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// Config tunes a Processor. The zero value works; each field says what 0
// means.
type Config struct {
	// Workers is how many handlers run at once per queue; 0 means 8.
	Workers int
	// BatchSize is how many messages one receive asks for, 1 to 32;
	// 0 means 32, which makes the receive cost 1/32 transaction per message.
	// The next batch is asked for while half a batch still waits, so up to
	// Workers - 1 + 1.5 × BatchSize messages are in hand, hidden from other
	// workers: for handlers that take long, choose a BatchSize near Workers.
	BatchSize int
	// VisibilityTimeout is how long a received message stays invisible
	// to other workers, renewed halfway through for as long as its handler
	// runs; after a crash it is how long until the message is delivered
	// again. Whole seconds, 1 s to 7 days; 0 means 30 s. A kind may set its
	// own (HandleOptions.VisibilityTimeout).
	VisibilityTimeout time.Duration
	// MaxDeliveries is how many times a message is delivered before it is
	// moved to the poison queue; 0 means 5, as Azure Functions and WebJobs do.
	// For an inline processor (NewInline), how many runs of an outbox
	// intent's handler fail before Relay sets the intent aside.
	MaxDeliveries int
	// RetryDelay is how long a message whose handler failed stays invisible
	// before it is delivered again, doubling with each delivery up to
	// MaxRetryDelay: 1 s, 2 s, 4 s, … The service counts whole seconds
	// (rounded up). 0 means 1 s; NoRetryDelay makes a failed message
	// visible again at once, which is what tests want (a handler failing 5
	// times then costs no waiting); production code should keep a delay, so
	// that a failing dependency is not hammered. MaxRetryDelay 0 means
	// 1 minute.
	RetryDelay, MaxRetryDelay time.Duration
	// PollInterval is the wait after a receive that found the queue empty,
	// doubling while it stays empty up to MaxPollInterval. Every receive is
	// a billed transaction, found messages or not. 0 means 100 ms;
	// MaxPollInterval 0 means 10 s.
	PollInterval, MaxPollInterval time.Duration
	// ShutdownGrace is how long running handlers, and a receive in flight
	// (whose batch is then released), may go on after Run's context ends
	// before their own context is cancelled; 0 means 10 s.
	ShutdownGrace time.Duration
	// Encoding is how Enqueue writes messages; the zero value is Base64.
	// Handlers read both encodings whatever this says.
	Encoding Encoding
	// Poison is what a poison queue message holds; the zero value is
	// PoisonOriginal: the original text, byte for byte, with the record as
	// a blob in the processor's container.
	Poison PoisonFormat
	// EnqueueConcurrency is how many messages one Enqueue call sends at
	// once; 0 means entity.DefaultConcurrency.
	EnqueueConcurrency int
	// MarkerTTL is how long the markers of Once are kept; 0 means 8 days,
	// longer than the 7 days a queue message lives, so that no copy of a
	// message outlives its markers. SweepMarkers deletes expired ones.
	// Replay would give a message a new life in its queue: it leaves in
	// the poison queue, as ErrStaleReplay, a message created MarkerTTL ago
	// or more, unless ReplayOptions.Stale. These times are the processes'
	// own clocks (a message's creation by its sender's, a marker's expiry
	// by its writer's, SweepMarkers and Replay by theirs): keep their skew
	// well below the day MarkerTTL leaves over the queue's 7 days, and
	// replay well before MarkerTTL.
	MarkerTTL time.Duration
	// Now is the clock of the times the processor records (a message's
	// creation, an outbox's grace, Once's markers); nil means time.Now.
	// Its timers (renewal, polling, retries) run on the system clock.
	Now func() time.Time
	// Clock, if set, is both the clock and the timers, and Now is not
	// used: a test that must fire the processor's timers without waiting
	// passes a fake one.
	Clock Clock
	// Hooks observe the processor's work.
	Hooks Hooks
}

// NoRetryDelay, as Config.RetryDelay, makes a message whose handler failed
// visible again at once instead of after a delay (any negative duration
// does the same).
const NoRetryDelay time.Duration = -1

// Hooks observe a processor, for logging, tracing and metrics. They are
// called from the workers, concurrently, and must not block for long.
type Hooks struct {
	// Outcome is called once per delivery, with its result.
	Outcome func(Outcome)
	// Error is called for failures of the machinery itself: a receive,
	// renewal, delete, poison move or relay that failed. None of them loses
	// a message; most make it run again.
	Error func(error)
}

// Result is what became of one delivery.
type Result uint8

// Done: the handler succeeded and the message was deleted.
const Done Result = 1

// Retry: the handler failed; the message will be delivered again.
const Retry Result = 2

// Poison: the message was moved to the poison queue; for an inline
// processor (NewInline), its outbox intent was set aside by Relay (or by
// Submit, with MaxDeliveries 1).
const Poison Result = 3

// Released: the processor stopped before the handler finished; the message
// was made visible again for another worker.
const Released Result = 4

func (r Result) String() string {
	switch r {
	case Done:
		return "done"
	case Retry:
		return "retry"
	case Poison:
		return "poison"
	case Released:
		return "released"
	}
	return fmt.Sprintf("Result(%d)", uint8(r))
}

// Outcome describes one delivery of a message.
type Outcome struct {
	Result       Result
	Kind, ID     string // from the envelope; "" when it did not decode
	Queue        string
	MessageID    string // the queue's id of this copy of the message
	DequeueCount int64
	Duration     time.Duration
	// Err is the handler's error (Retry, Poison) or the cause of a release.
	Err error
	// Reason says why a message was poisoned: one of the Reason constants.
	Reason string
}

// The reasons a message is poisoned, recorded in its PoisonRecord and
// reported in Outcome.Reason.

// ReasonFailed: the handler failed on each of MaxDeliveries deliveries.
const ReasonFailed = "failed on every delivery"

// ReasonOverdelivered: the message was delivered more than MaxDeliveries
// times without finishing (its workers crashed or lost it).
const ReasonOverdelivered = "delivered more times than allowed without finishing"

// ReasonUndecodable: the text is not an envelope.
const ReasonUndecodable = "message does not decode"

// ReasonUnknownKind: no handler is registered for the kind.
const ReasonUnknownKind = "unknown kind"

// ReasonBadPayload: the payload does not decode into the kind's type.
const ReasonBadPayload = "payload does not decode"

func (c Config) withDefaults() (Config, error) {
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	if c.Workers == 0 {
		c.Workers = 8
	}
	if c.BatchSize == 0 {
		c.BatchSize = queueproc.MaxBatch
	}
	def(&c.VisibilityTimeout, 30*time.Second)
	if c.MaxDeliveries == 0 {
		c.MaxDeliveries = 5
	}
	switch {
	case c.RetryDelay == 0:
		c.RetryDelay = time.Second
	case c.RetryDelay < 0:
		c.RetryDelay = 0
	}
	def(&c.MaxRetryDelay, time.Minute)
	def(&c.PollInterval, 100*time.Millisecond)
	def(&c.MaxPollInterval, 10*time.Second)
	def(&c.ShutdownGrace, 10*time.Second)
	if c.EnqueueConcurrency == 0 {
		c.EnqueueConcurrency = entity.DefaultConcurrency
	}
	def(&c.MarkerTTL, 8*24*time.Hour)
	switch {
	case c.Clock != nil:
		c.Now = c.Clock.Now
	case c.Now != nil:
		c.Clock = nowClock{c.Now}
	default:
		c.Clock, c.Now = clock.Real{}, time.Now
	}
	var err error
	bad := func(field, format string, args ...any) {
		if err == nil {
			err = &ConfigError{Field: "Config." + field, Reason: fmt.Sprintf(format, args...)}
		}
	}
	switch {
	case c.Workers < 0:
		bad("Workers", "is %d", c.Workers)
	case c.BatchSize < 1 || c.BatchSize > queueproc.MaxBatch:
		bad("BatchSize", "is %d, want 1 to %d", c.BatchSize, queueproc.MaxBatch)
	case c.VisibilityTimeout < time.Second || c.VisibilityTimeout > queueproc.MaxVisibility:
		bad("VisibilityTimeout", "is %v, want 1s to 7 days", c.VisibilityTimeout)
	case c.MaxDeliveries < 0:
		bad("MaxDeliveries", "is %d", c.MaxDeliveries)
	case c.MaxRetryDelay < c.RetryDelay || c.MaxRetryDelay > queueproc.MaxVisibility:
		bad("MaxRetryDelay", "is %v, want RetryDelay (%v) to 7 days", c.MaxRetryDelay, c.RetryDelay)
	case c.PollInterval < 0 || c.MaxPollInterval < c.PollInterval:
		bad("MaxPollInterval", "is %v, want at least PollInterval (%v)", c.MaxPollInterval, c.PollInterval)
	case c.ShutdownGrace < 0:
		bad("ShutdownGrace", "is %v", c.ShutdownGrace)
	case c.Encoding > PlainText:
		bad("Encoding", "is %v", c.Encoding)
	case c.Poison > PoisonWrapped:
		bad("Poison", "is %v", c.Poison)
	case c.EnqueueConcurrency < 0:
		bad("EnqueueConcurrency", "is %d", c.EnqueueConcurrency)
	case c.MarkerTTL < 0:
		bad("MarkerTTL", "is %v", c.MarkerTTL)
	}
	return c, err
}

// nowClock is Config.Now with the system clock's timers.
type nowClock struct{ now func() time.Time }

func (c nowClock) Now() time.Time                       { return c.now() }
func (nowClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// RedeliveryWindow returns how long p keeps delivering again a message
// whose handler fails every time: the sum of the retry delays between its
// Config.MaxDeliveries deliveries, as the service counts them (whole
// seconds, rounded up), at most 7 days. With the defaults (RetryDelay 1 s,
// doubling; MaxDeliveries 5) it is 1 + 2 + 4 + 8 = 15 s; with
// NoRetryDelay or MaxDeliveries 1 it is 0. The handlers' own run times
// only lengthen the real window.
//
// A handler that waits for something by failing — a message of
// secondaryindex waiting for another write's reservation to pass its
// grace period before it may take the value — must see it happen within
// this window, or its message is poisoned first. [Processor.CheckGrace]
// checks such a wait against it, and [Processor.DefaultGrace] derives one
// from it.
//
// An inline processor (NewInline) has no window of its own:
// RedeliveryWindow is 0, CheckGrace takes any positive grace, and
// DefaultGrace is 10 s, a queued processor's default. Its window is its
// outbox's: Relay runs an intent again only OutboxConfig.Grace after its
// last run (each run rewrites the intent), and sets it aside after
// Config.MaxDeliveries runs, so a handler that waits by failing has at
// least (MaxDeliveries - 1) × OutboxConfig.Grace, 2 minutes with the
// defaults.
func (p *Processor) RedeliveryWindow() time.Duration {
	if p.usable() != nil || p.inline {
		return 0
	}
	return redeliveryWindow(p.cfg)
}

func redeliveryWindow(c Config) time.Duration {
	var w time.Duration
	for n := int64(1); n < int64(c.MaxDeliveries) && w < queueproc.MaxVisibility; n++ {
		d := queueproc.RetryDelay(c.RetryDelay, c.MaxRetryDelay, n)
		if d == 0 {
			break // no delay now, none later
		}
		w += time.Duration(queueproc.Seconds(d)) * time.Second
	}
	return min(w, queueproc.MaxVisibility)
}

// DefaultGrace is the grace period that a pattern whose messages wait for
// it by failing should take when its configuration says 0: two thirds of
// [Processor.RedeliveryWindow] — 10 s with the processor's defaults — so
// that the last delivery comes well after the grace has passed, with
// room for the clocks' skew. It is 0 when p redelivers at once
// (NoRetryDelay, MaxDeliveries 1): no grace is then safe, and
// [Processor.CheckGrace] refuses every one.
//
// A grace period usually also bounds how long a write may take between
// two of its requests (secondaryindex sends an insert's transaction within
// Grace/2 of reserving its unique values, or not at all). On a slow
// account — throttled, far away, or reached from a loaded machine — a
// write whose requests take longer than that fails, whatever its data
// (entity.ErrOutcomeUnknown when the deadline cuts its transaction in
// flight). There, raise the grace and, first, the window it must fit in:
// RetryDelay 2 s gives a window of 30 s and a default grace of 20 s;
// MaxDeliveries 7 at the default RetryDelay, 63 s and 42 s.
func (p *Processor) DefaultGrace() time.Duration {
	if p.Inline() {
		return inlineGrace
	}
	return p.RedeliveryWindow() / 3 * 2
}

// CheckGrace refuses, with a *ConfigError naming field (matching
// entity.ErrInvalid and ErrInvalidConfig), a grace period that messages of
// p wait for by failing when it is not positive or not shorter than
// [Processor.RedeliveryWindow]: such a message would be poisoned before
// the grace has passed. field is how the caller's configuration names it
// ("Config.Grace"); "" means "grace". A nil p is a *ConfigError too. An
// inline processor refuses only a grace that is not positive.
func (p *Processor) CheckGrace(field string, grace time.Duration) error {
	if err := p.usable(); err != nil {
		return err
	}
	if field == "" {
		field = "grace"
	}
	if p.inline {
		if grace <= 0 {
			return &ConfigError{Field: field, Reason: fmt.Sprintf("is %v, want a positive duration", grace)}
		}
		return nil // the outbox's grace spaces the runs: see RedeliveryWindow
	}
	w := redeliveryWindow(p.cfg)
	switch {
	case grace <= 0:
		return &ConfigError{Field: field, Reason: fmt.Sprintf("is %v, want a positive duration shorter than the processor's redelivery window (%v)", grace, w)}
	case grace >= w:
		return &ConfigError{Field: field, Reason: fmt.Sprintf("is %v, not shorter than the processor's redelivery window of %v (RetryDelay %v doubling up to MaxRetryDelay %v, over %d deliveries): a message waiting for it would be poisoned first; lower it, or raise the processor's RetryDelay or MaxDeliveries",
			grace, w, p.cfg.RetryDelay, p.cfg.MaxRetryDelay, p.cfg.MaxDeliveries)}
	}
	return nil
}
