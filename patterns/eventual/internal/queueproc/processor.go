package queueproc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/internal/clock"
)

// finishTimeout bounds the storage calls that settle a message (delete,
// release, poison) after its handler returned: they run even when Run's
// context has ended, so that finished work is not done twice.
const finishTimeout = 30 * time.Second

// Message is one received message.
type Message struct {
	ID           string
	Text         string // as stored in the queue
	DequeueCount int64  // 1 on the first delivery
	Inserted     time.Time
	Queue        string // the queue's name

	// Attr is free for the handler to describe the message to the
	// observer (package eventual stores the decoded kind and id).
	Attr any

	lease *lease
}

// SetVisibility sets how long each renewal of the message's visibility
// lasts from now on, for handlers that know how long they take.
func (m *Message) SetVisibility(d time.Duration) {
	if d >= time.Second && d <= MaxVisibility {
		m.lease.setVisibility(d)
	}
}

// Handler runs the work of one message. It returns nil when the work is
// done (the message is then deleted), a *PoisonError when it can never be
// done, and any other error to have it retried.
type Handler func(ctx context.Context, m *Message) error

// Result is what became of one delivery.
type Result uint8

const (
	// Succeeded: the handler returned nil and the message was deleted
	// (or was found deleted already, or taken over by another worker).
	Succeeded Result = iota + 1
	// Retrying: the handler failed; the message becomes visible again
	// after the retry delay.
	Retrying
	// Poisoned: the message was moved to the poison queue.
	Poisoned
	// Released: Run stopped before the message finished; it was made
	// visible again at once.
	Released
)

func (r Result) String() string {
	switch r {
	case Succeeded:
		return "succeeded"
	case Retrying:
		return "retrying"
	case Poisoned:
		return "poisoned"
	case Released:
		return "released"
	}
	return fmt.Sprintf("Result(%d)", uint8(r))
}

// Outcome reports one delivery to Config.Observe.
type Outcome struct {
	Message  *Message
	Result   Result
	Err      error  // the handler's error (Retrying, Poisoned, Released)
	Reason   string // why it was poisoned
	Duration time.Duration
}

// Record describes a poisoned message, for Config.PoisonText.
type Record struct {
	Reason       string
	Err          error // the handler's last error; nil when it did not run
	DequeueCount int64
	Queue        string
	MessageID    string
	Inserted     time.Time
	Poisoned     time.Time
}

// Reasons for poisoning decided by the loop itself.
const (
	ReasonFailed        = "failed on every delivery"
	ReasonOverdelivered = "delivered more times than allowed without finishing"
)

// Processor runs one queue.
type Processor struct {
	queue, poison *azqueue.QueueClient
	name          string
	handler       Handler
	cfg           Config

	poisonMu      sync.Mutex
	poisonCreated bool

	held  gauge       // messages in hand: waiting for a worker or running
	empty atomic.Bool // the latest receive found no message
}

// New returns a processor of queue that moves poison messages to poison.
func New(queue, poison *azqueue.QueueClient, name string, h Handler, cfg Config) (*Processor, error) {
	if queue == nil || poison == nil {
		return nil, errors.New("queueproc: nil queue client")
	}
	if h == nil {
		return nil, errors.New("queueproc: nil handler")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	p := &Processor{queue: queue, poison: poison, name: name, handler: h, cfg: cfg}
	p.held.changed = make(chan struct{}, 1)
	return p, nil
}

// Idle reports that p holds no message (none waiting for a worker, none
// running, none being settled) and that its latest receive found the
// queue empty. Messages may still be in the queue, invisible: delayed,
// waiting for a retry, or held by another worker.
func (p *Processor) Idle() bool {
	return p.empty.Load() && p.held.value() == 0
}

// Run processes messages until ctx ends, then shuts down as the package
// documentation describes. It returns nil after a shutdown.
func (p *Processor) Run(ctx context.Context) error {
	// Work outlives ctx by the grace period: renewals, handlers and a
	// receive in flight go on for ShutdownGrace after ctx ends.
	work, stopWork := Outlive(ctx, p.cfg.Clock, p.cfg.ShutdownGrace)
	defer stopWork()
	jobs := make(chan *Message, p.refill()+p.cfg.BatchSize)
	held := &p.held
	var wg sync.WaitGroup
	for range p.cfg.Workers {
		wg.Go(func() {
			for m := range jobs {
				if ctx.Err() != nil {
					p.release(work, m, ctx.Err(), 0)
				} else {
					p.handle(ctx, work, m)
				}
				held.add(-1)
			}
		})
	}
	p.receive(ctx, work, jobs, held)
	close(jobs)
	wg.Wait()
	return nil
}

// Outlive returns a context that does not end with ctx but grace after
// it (on c's clock), or when the returned cancel is called. Requests
// whose reply must be read even after the caller stopped run under it: a
// receive the service has executed has hidden its messages, and only its
// reply, with their pop receipts, lets them be released.
func Outlive(ctx context.Context, c clock.Clock, grace time.Duration) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		select {
		case <-c.After(grace):
			cancel()
		case <-out.Done():
		}
	})
	return out, func() { stop(); cancel() }
}

// refill is how few messages may be left in hand when the next batch is
// asked for: half a batch beyond the workers' own, so that workers do not
// wait for a receive. With one worker and batches of one the loop is
// strictly sequential: receive, handle, settle.
func (p *Processor) refill() int { return p.cfg.Workers - 1 + p.cfg.BatchSize/2 }

// receive fills jobs until ctx ends, asking for a batch whenever few
// enough messages are left in hand (refill).
//
// A receive is sent under work, not ctx: once the service has executed
// it, its messages are hidden for the visibility timeout, and only its
// reply (their pop receipts) lets them be released. A receive in flight
// when ctx ends is therefore waited for — ShutdownGrace at most — and
// what it brings is handed on, for the workers to release at once.
func (p *Processor) receive(ctx, work context.Context, jobs chan<- *Message, held *gauge) {
	delay := p.cfg.PollInterval
	for {
		if err := held.waitAtMost(ctx, p.refill()); err != nil || ctx.Err() != nil {
			return
		}
		start := p.cfg.Clock.Now()
		resp, err := p.queue.DequeueMessages(work, &azqueue.DequeueMessagesOptions{
			NumberOfMessages:  to.Ptr(int32(p.cfg.BatchSize)),
			VisibilityTimeout: to.Ptr(Seconds(p.cfg.Visibility)),
		})
		if err != nil && ctx.Err() != nil {
			return
		}
		if err != nil {
			p.onError(fmt.Errorf("queueproc: receiving from %s: %w", p.name, err))
		}
		if err == nil {
			p.empty.Store(len(resp.Messages) == 0)
		}
		if err != nil || len(resp.Messages) == 0 {
			if clock.Sleep(ctx, p.cfg.Clock, delay) != nil {
				return
			}
			delay = min(2*delay, p.cfg.MaxPollInterval)
			continue
		}
		delay = p.cfg.PollInterval
		// Messages received as ctx ended are handed on all the same: the
		// workers release them at once.
		for _, dm := range resp.Messages {
			m := p.message(dm)
			if m == nil {
				continue
			}
			m.lease = startLease(work, p.cfg.Clock, p.renewer(m), deref(dm.PopReceipt), start, p.cfg.Visibility)
			held.add(1)
			jobs <- m
		}
	}
}

func (p *Processor) message(dm *azqueue.DequeuedMessage) *Message {
	if dm == nil || dm.MessageID == nil || dm.PopReceipt == nil {
		p.onError(fmt.Errorf("queueproc: %s returned a message without id or pop receipt", p.name))
		return nil
	}
	m := &Message{ID: *dm.MessageID, Text: deref(dm.MessageText), Queue: p.name}
	if dm.DequeueCount != nil {
		m.DequeueCount = *dm.DequeueCount
	}
	if dm.InsertionTime != nil {
		m.Inserted = *dm.InsertionTime
	}
	return m
}

// renewer returns the UpdateMessage call of m's lease. The service takes
// the text with every update; it is sent back unchanged.
func (p *Processor) renewer(m *Message) renewFunc {
	return func(ctx context.Context, receipt string, vis time.Duration) (string, error) {
		resp, err := p.queue.UpdateMessage(ctx, m.ID, receipt, m.Text, &azqueue.UpdateMessageOptions{VisibilityTimeout: to.Ptr(Seconds(vis))})
		if err != nil {
			return "", err
		}
		if resp.PopReceipt == nil {
			return "", fmt.Errorf("queueproc: %s: update of message %s returned no pop receipt", p.name, m.ID)
		}
		return *resp.PopReceipt, nil
	}
}

// handle runs one message and settles it.
func (p *Processor) handle(ctx, work context.Context, m *Message) {
	start := p.cfg.Clock.Now()
	if m.DequeueCount > int64(p.cfg.MaxDeliveries) {
		p.moveToPoison(work, m, ReasonOverdelivered, nil, start)
		return
	}
	err := p.call(work, m)
	var poison *PoisonError
	switch {
	case err == nil:
		p.complete(work, m, start)
	case errors.As(err, &poison):
		p.moveToPoison(work, m, poison.Reason, poison.Err, start)
	case work.Err() != nil:
		// Cancelled at the end of the shutdown grace: not the message's fault.
		p.release(work, m, err, p.cfg.Clock.Now().Sub(start))
	case m.DequeueCount >= int64(p.cfg.MaxDeliveries):
		p.moveToPoison(work, m, ReasonFailed, err, start)
	default:
		p.retry(work, m, err, start)
	}
}

// call runs the handler, turning a panic into an error.
func (p *Processor) call(ctx context.Context, m *Message) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v}
		}
	}()
	return p.handler(ctx, m)
}

// finishLease stops m's lease and returns its receipt, reporting a lease
// lost to a failure (not to another worker taking the message over).
func (p *Processor) finishLease(m *Message) (receipt string, lost error) {
	receipt, lost = m.lease.finish()
	if lost != nil && !IsGone(lost) {
		p.onError(fmt.Errorf("queueproc: %s: renewing the visibility of message %s failed; it may be delivered again meanwhile: %w", p.name, m.ID, lost))
	}
	return receipt, lost
}

func (p *Processor) complete(work context.Context, m *Message, start time.Time) {
	receipt, _ := p.finishLease(m)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(work), finishTimeout)
	defer cancel()
	if _, err := p.queue.DeleteMessage(ctx, m.ID, receipt, nil); err != nil && !IsGone(err) {
		// The message comes back and runs again: the handler is idempotent.
		p.onError(fmt.Errorf("queueproc: %s: deleting message %s after success: %w", p.name, m.ID, err))
	}
	p.observe(Outcome{Message: m, Result: Succeeded, Duration: p.cfg.Clock.Now().Sub(start)})
}

func (p *Processor) retry(work context.Context, m *Message, cause error, start time.Time) {
	receipt, lost := p.finishLease(m)
	if lost == nil {
		delay := RetryDelay(p.cfg.RetryDelay, p.cfg.MaxRetryDelay, m.DequeueCount)
		ctx, cancel := context.WithTimeout(context.WithoutCancel(work), finishTimeout)
		_, err := p.queue.UpdateMessage(ctx, m.ID, receipt, m.Text, &azqueue.UpdateMessageOptions{VisibilityTimeout: to.Ptr(Seconds(delay))})
		cancel()
		if err != nil && !IsGone(err) {
			// It becomes visible when its current window ends instead.
			p.onError(fmt.Errorf("queueproc: %s: setting the retry delay of message %s: %w", p.name, m.ID, err))
		}
	}
	p.observe(Outcome{Message: m, Result: Retrying, Err: cause, Duration: p.cfg.Clock.Now().Sub(start)})
}

// release makes a message that did not finish visible again after delay.
func (p *Processor) release(work context.Context, m *Message, cause error, took time.Duration) {
	receipt, lost := p.finishLease(m)
	if lost == nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(work), finishTimeout)
		_, err := p.queue.UpdateMessage(ctx, m.ID, receipt, m.Text, &azqueue.UpdateMessageOptions{VisibilityTimeout: to.Ptr(int32(0))})
		cancel()
		if err != nil && !IsGone(err) {
			p.onError(fmt.Errorf("queueproc: %s: releasing message %s: %w", p.name, m.ID, err))
		}
	}
	p.observe(Outcome{Message: m, Result: Released, Err: cause, Duration: took})
}

// moveToPoison copies m to the poison queue, then deletes it.
func (p *Processor) moveToPoison(work context.Context, m *Message, reason string, cause error, start time.Time) {
	rec := Record{
		Reason:       reason,
		Err:          cause,
		DequeueCount: m.DequeueCount,
		Queue:        p.name,
		MessageID:    m.ID,
		Inserted:     m.Inserted,
		Poisoned:     p.cfg.Clock.Now(),
	}
	text := m.Text
	if p.cfg.PoisonText != nil {
		text = p.cfg.PoisonText(m, rec)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(work), finishTimeout)
	defer cancel()
	poisonID, err := p.sendPoison(ctx, text)
	if err != nil {
		// Keep the message where it is: it comes back and is poisoned then.
		p.finishLease(m)
		p.onError(fmt.Errorf("queueproc: %s: moving message %s to the poison queue: %w", p.name, m.ID, err))
		p.observe(Outcome{Message: m, Result: Retrying, Err: cause, Reason: reason, Duration: p.cfg.Clock.Now().Sub(start)})
		return
	}
	if p.cfg.KeepRecord != nil {
		if err := p.cfg.KeepRecord(ctx, m, rec, poisonID); err != nil {
			p.onError(fmt.Errorf("queueproc: %s: keeping the record of message %s, poison message %s: %w", p.name, m.ID, poisonID, err))
		}
	}
	receipt, _ := p.finishLease(m)
	if _, err := p.queue.DeleteMessage(ctx, m.ID, receipt, nil); err != nil && !IsGone(err) {
		p.onError(fmt.Errorf("queueproc: %s: deleting poisoned message %s: %w", p.name, m.ID, err))
	}
	p.observe(Outcome{Message: m, Result: Poisoned, Err: cause, Reason: reason, Duration: p.cfg.Clock.Now().Sub(start)})
}

// sendPoison enqueues text into the poison queue, never to expire,
// creating the queue the first time it is missing, and returns the id the
// poison queue gave it.
func (p *Processor) sendPoison(ctx context.Context, text string) (string, error) {
	opts := &azqueue.EnqueueMessageOptions{TimeToLive: to.Ptr(int32(-1))}
	resp, err := p.poison.EnqueueMessage(ctx, text, opts)
	if err != nil && IsQueueNotFound(err) {
		if err := p.createPoison(ctx); err != nil {
			return "", err
		}
		resp, err = p.poison.EnqueueMessage(ctx, text, opts)
	}
	if err != nil {
		return "", err
	}
	if len(resp.Messages) == 0 || resp.Messages[0] == nil || resp.Messages[0].MessageID == nil {
		return "", nil // enqueued; the service named no id
	}
	return *resp.Messages[0].MessageID, nil
}

func (p *Processor) createPoison(ctx context.Context) error {
	p.poisonMu.Lock()
	defer p.poisonMu.Unlock()
	if p.poisonCreated {
		return nil
	}
	if _, err := p.poison.Create(ctx, nil); err != nil && !IsQueueExists(err) {
		return err
	}
	p.poisonCreated = true
	return nil
}

func (p *Processor) observe(o Outcome) {
	if p.cfg.Observe != nil {
		p.cfg.Observe(o)
	}
}

func (p *Processor) onError(err error) {
	if p.cfg.OnError != nil {
		p.cfg.OnError(err)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// gauge counts messages in hand; the receiver waits on it.
type gauge struct {
	mu      sync.Mutex
	n       int
	changed chan struct{} // capacity 1: one waiter
}

func (g *gauge) add(d int) {
	g.mu.Lock()
	g.n += d
	g.mu.Unlock()
	select {
	case g.changed <- struct{}{}:
	default:
	}
}

func (g *gauge) value() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

func (g *gauge) waitAtMost(ctx context.Context, limit int) error {
	for {
		g.mu.Lock()
		n := g.n
		g.mu.Unlock()
		if n <= limit {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-g.changed:
		}
	}
}
