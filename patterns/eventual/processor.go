package eventual

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit/internal/argerr"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/internal/clock"
	"github.com/tablekit/tablekit/internal/provision"
	"github.com/tablekit/tablekit/patterns/eventual/internal/queueproc"
)

// PoisonSuffix is appended to a queue's name to name its poison queue, as
// Azure Functions and WebJobs do, so their tooling recognises it.
const PoisonSuffix = "-poison"

// Queue is one queue of a processor and its poison queue.
type Queue struct {
	Work   *azqueue.QueueClient
	Poison *azqueue.QueueClient // named Work's name + PoisonSuffix
}

// QueuesOf returns the queues with the given names of the service, each
// with its poison queue "<name>-poison". The queues are not created (see
// Processor.Provision).
func QueuesOf(svc *azqueue.ServiceClient, names ...string) []Queue {
	qs := make([]Queue, len(names))
	if svc == nil {
		return qs // clients left nil: New reports them
	}
	for i, n := range names {
		qs[i] = Queue{Work: svc.NewQueueClient(n), Poison: svc.NewQueueClient(n + PoisonSuffix)}
	}
	return qs
}

// Processor sends messages into its queues and runs their handlers.
// A program that only sends never calls Run. It is safe for concurrent use.
type Processor struct {
	queues []Queue
	names  []string
	blobs  *container.Client
	cfg    Config

	mu      sync.RWMutex
	kinds   map[string]*registration
	running atomic.Bool

	// inline: no queue; where a message would be sent, its handler runs
	// (NewInline).
	inline bool
}

// New returns a processor of queues (several for scale-out: messages are
// spread over them by key) that stores in the blob container blobs the
// payloads too large for a queue message and the records of poison
// messages. blobs may be nil: a message too large is then refused before
// it is sent or committed (ErrTooLarge), and poison messages keep no
// record unless Config.Poison is PoisonWrapped.
func New(queues []Queue, blobs *container.Client, cfg Config) (*Processor, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(queues) == 0 {
		return nil, &ConfigError{Field: "queues", Reason: "is empty"}
	}
	p := &Processor{queues: queues, blobs: blobs, cfg: cfg, kinds: map[string]*registration{}}
	for i, q := range queues {
		if q.Work == nil || q.Poison == nil {
			return nil, &ConfigError{Field: fmt.Sprintf("queues[%d]", i), Reason: "has a nil client"}
		}
		work, err := queueName(q.Work)
		if err != nil {
			return nil, err
		}
		poison, err := queueName(q.Poison)
		if err != nil {
			return nil, err
		}
		if poison != work+PoisonSuffix {
			return nil, &ConfigError{Field: fmt.Sprintf("queues[%d].Poison", i), Reason: fmt.Sprintf("is %q, want %q", poison, work+PoisonSuffix)}
		}
		if len(poison) > 63 {
			return nil, &ConfigError{Field: fmt.Sprintf("queues[%d]", i), Reason: fmt.Sprintf("name %q is too long for its poison queue name (63 characters)", work)}
		}
		p.names = append(p.names, work)
	}
	return p, nil
}

// usable reports a nil processor as a *ConfigError, before any request.
func (p *Processor) usable() error {
	if p == nil || p.kinds == nil {
		return &ConfigError{Field: "processor", Reason: "is nil or not made by New"}
	}
	return nil
}

func queueName(q *azqueue.QueueClient) (string, error) {
	parts, err := azqueue.ParseURL(q.URL())
	if err != nil || parts.QueueName == "" {
		return "", &ConfigError{Field: "queue", Reason: fmt.Sprintf("URL %q names no queue", q.URL())}
	}
	if why := checkQueueName(parts.QueueName); why != "" {
		return "", &ConfigError{Field: "queue", Reason: fmt.Sprintf("name %q %s", parts.QueueName, why)}
	}
	return parts.QueueName, nil
}

// checkQueueName says why the service would refuse a queue name (400
// InvalidResourceName), or "": 3 to 63 lower-case letters, digits and
// hyphens, starting and ending with a letter or digit, no two hyphens in
// a row.
func checkQueueName(n string) string {
	if len(n) < 3 || len(n) > 63 {
		return fmt.Sprintf("has %d characters; a queue name has 3 to 63", len(n))
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0 && i < len(n)-1 && n[i-1] != '-':
		default:
			return fmt.Sprintf("has %q at %d; a queue name has lower-case letters, digits and single hyphens inside", c, i)
		}
	}
	return ""
}

// CreateQueues creates every queue and poison queue that does not exist:
// Provision without the blob container.
//
// An inline processor (NewInline) has no queue: it creates nothing and
// returns nil.
func (p *Processor) CreateQueues(ctx context.Context) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := p.usable(); err != nil {
		return err
	}
	if p.inline {
		return nil
	}
	for _, q := range p.queues {
		for _, c := range []*azqueue.QueueClient{q.Work, q.Poison} {
			if err := provision.Queue(ctx, c); err != nil {
				return fmt.Errorf("eventual: provision: %w", err)
			}
		}
	}
	return nil
}

// Provision creates what the processor stores in, unless it exists: every
// queue, its poison queue, and the blob container given to New, if any. It
// returns nil only when all of them exist — created now, found existing, or
// found by the resend of a create whose reply was lost — and asks again,
// with backoff, while the service answers that a name is being deleted
// (QueueBeingDeleted, ContainerBeingDeleted), until ctx ends; the error
// then matches entity.ErrBeingDeleted and ctx's error
// (TestProvisionEveryPattern and TestProvisionWhileBeingDeleted in package
// account). The tables of an Outbox are the caller's: provision them with
// their entity.Table. It is a package account Provisioner:
// account.Provision(ctx, p, orders, …). An inline processor (NewInline)
// stores nothing of its own: it creates nothing and returns nil.
func (p *Processor) Provision(ctx context.Context) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := p.CreateQueues(ctx); err != nil {
		return err
	}
	if p.blobs != nil {
		if err := provision.Container(ctx, p.blobs); err != nil {
			return fmt.Errorf("eventual: provision: %w", err)
		}
	}
	return nil
}

// Run runs the handlers of every queue until ctx ends, then shuts down
// gracefully (see Config.ShutdownGrace) and returns nil. It returns
// ErrRunning when p is already running. An inline processor (NewInline)
// has no queue to run: Run returns an *InlineError at once.
func (p *Processor) Run(ctx context.Context) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := p.usable(); err != nil {
		return err
	}
	if p.inline {
		return &InlineError{Op: "Run"}
	}
	if !p.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer p.running.Store(false)
	procs, err := p.procs(p.procConfig())
	if err != nil {
		return err
	}
	runAll(ctx, procs)
	return nil
}

func (p *Processor) procs(cfg queueproc.Config) ([]*queueproc.Processor, error) {
	procs := make([]*queueproc.Processor, len(p.queues))
	for i, q := range p.queues {
		qp, err := queueproc.New(q.Work, q.Poison, p.names[i], p.dispatch, cfg)
		if err != nil {
			return nil, &ConfigError{Field: "Config", Reason: strings.TrimPrefix(err.Error(), "queueproc: ")}
		}
		procs[i] = qp
	}
	return procs, nil
}

func runAll(ctx context.Context, procs []*queueproc.Processor) {
	var wg sync.WaitGroup
	for _, qp := range procs {
		wg.Go(func() { _ = qp.Run(ctx) })
	}
	wg.Wait()
}

// DrainReport says what a Drain did and what it left.
type DrainReport struct {
	// Deliveries during the drain, by result (see Outcome).
	Done, Retried, Poisoned, Released int
	// Left is how many messages the work queues held when Drain returned,
	// by the service's approximate count, which is never lower than the
	// true one. After a nil error it counts only messages that arrived
	// after the queues were found empty; after a deadline, also those
	// still invisible: delayed, waiting for a retry, held by another worker
	// or by one that crashed.
	Left int
	// InPoison is how many messages the poison queues held when Drain
	// returned, poisoned during this drain or before.
	InPoison int
}

// Drain runs the handlers, as Run does, until the work queues are empty
// and nothing is in flight — every message handled or poisoned, none
// delayed, waiting for a retry or held by another worker — then stops and
// returns what it did and what it left: the end of a batch job, or of a
// test. It checks the queues' message counts (one Get Queue Properties
// request per queue) only when every queue's last receive found nothing
// and no message is in hand.
//
// When ctx ends first Drain stops as Run does and returns the report with
// an error matching ctx.Err() (context.DeadlineExceeded for a deadline)
// that says how many messages were left. It returns ErrRunning when p is
// already running, and an *InlineError for an inline processor
// (NewInline), which has no queue: its outboxes' Relay runs what is left.
func (p *Processor) Drain(ctx context.Context) (DrainReport, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return DrainReport{}, err
	}
	if err := p.usable(); err != nil {
		return DrainReport{}, err
	}
	if p.inline {
		return DrainReport{}, &InlineError{Op: "Drain"}
	}
	if !p.running.CompareAndSwap(false, true) {
		return DrainReport{}, ErrRunning
	}
	defer p.running.Store(false)
	var mu sync.Mutex
	var rep DrainReport
	cfg := p.procConfig()
	cfg.Observe = func(o queueproc.Outcome) {
		mu.Lock()
		switch o.Result {
		case queueproc.Succeeded:
			rep.Done++
		case queueproc.Retrying:
			rep.Retried++
		case queueproc.Poisoned:
			rep.Poisoned++
		case queueproc.Released:
			rep.Released++
		}
		mu.Unlock()
		p.observe(o)
	}
	procs, err := p.procs(cfg)
	if err != nil {
		return DrainReport{}, err
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	ran := make(chan struct{})
	go func() { runAll(rctx, procs); close(ran) }()
	drained := p.waitDrained(ctx, procs)
	stop()
	<-ran
	// Count what is left, also when ctx has ended.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishCount)
	defer cancel()
	left, cerr := p.countMessages(cctx, func(q Queue) *azqueue.QueueClient { return q.Work })
	inPoison, perr := p.countMessages(cctx, func(q Queue) *azqueue.QueueClient { return q.Poison })
	if perr != nil {
		p.onError(fmt.Errorf("eventual: drain: counting the poison queues' messages: %w", perr))
	}
	mu.Lock()
	defer mu.Unlock()
	rep.Left, rep.InPoison = left, inPoison
	switch {
	case drained:
		return rep, nil
	case cerr != nil:
		return rep, fmt.Errorf("eventual: drain stopped before the queues were empty (%w); counting what is left: %v", ctx.Err(), cerr)
	}
	return rep, fmt.Errorf("eventual: drain stopped with %d messages left in the work queues: %w", rep.Left, ctx.Err())
}

// finishCount bounds the requests that count what a drain left.
const finishCount = 30 * time.Second

// waitDrained returns true once every processor is idle and the work
// queues hold no message, false when ctx ends first.
func (p *Processor) waitDrained(ctx context.Context, procs []*queueproc.Processor) bool {
	wait := p.cfg.PollInterval
	for {
		if clock.Sleep(ctx, p.cfg.Clock, wait) != nil {
			return false
		}
		idle := true
		for _, qp := range procs {
			idle = idle && qp.Idle()
		}
		if !idle {
			wait = p.cfg.PollInterval
			continue
		}
		n, err := p.countMessages(ctx, func(q Queue) *azqueue.QueueClient { return q.Work })
		switch {
		case err == nil && n == 0:
			return true
		case err != nil && ctx.Err() == nil:
			p.onError(fmt.Errorf("eventual: drain: counting messages: %w", err))
		}
		// Invisible messages: delayed, retrying, held elsewhere.
		wait = min(2*wait, p.cfg.MaxPollInterval)
	}
}

// countMessages sums the approximate message counts of one queue of each
// of p's queues; a queue that does not exist holds none.
func (p *Processor) countMessages(ctx context.Context, which func(Queue) *azqueue.QueueClient) (int, error) {
	n := 0
	for _, q := range p.queues {
		props, err := which(q).GetProperties(ctx, nil)
		if queueproc.IsQueueNotFound(err) {
			continue
		}
		if err != nil {
			return n, err
		}
		if props.ApproximateMessagesCount != nil {
			n += int(*props.ApproximateMessagesCount)
		}
	}
	return n, nil
}

func (p *Processor) procConfig() queueproc.Config {
	c := p.cfg
	return queueproc.Config{
		Workers:         c.Workers,
		BatchSize:       c.BatchSize,
		Visibility:      c.VisibilityTimeout,
		MaxDeliveries:   c.MaxDeliveries,
		RetryDelay:      c.RetryDelay,
		MaxRetryDelay:   c.MaxRetryDelay,
		PollInterval:    c.PollInterval,
		MaxPollInterval: c.MaxPollInterval,
		ShutdownGrace:   c.ShutdownGrace,
		Clock:           c.Clock,
		PoisonText:      p.poisonText,
		KeepRecord:      p.keepRecord,
		Observe:         p.observe,
		OnError:         p.cfg.Hooks.Error,
	}
}

// header is what the processor learned of a message, for the hooks.
type header struct{ kind, id string }

// dispatch is the handler of every queue: decode, find the kind, fetch a
// claimed payload, run.
func (p *Processor) dispatch(ctx context.Context, m *queueproc.Message) error {
	env, err := decodeEnvelope(m.Text)
	if err != nil {
		return queueproc.Poison(ReasonUndecodable, err)
	}
	m.Attr = header{env.Kind, env.ID}
	p.mu.RLock()
	reg := p.kinds[env.Kind]
	p.mu.RUnlock()
	if reg == nil {
		return queueproc.Poison(ReasonUnknownKind, fmt.Errorf("eventual: no handler for kind %q", env.Kind))
	}
	if reg.visibility > 0 {
		m.SetVisibility(reg.visibility)
	}
	payload := []byte(env.Payload)
	if env.Claim != "" {
		data, err := p.readClaim(ctx, env.Claim)
		if bloberror.HasCode(err, bloberror.BlobNotFound) {
			// The blob is deleted only after the handler succeeded: this is a
			// copy of a message that is done.
			return nil
		}
		if err != nil {
			return err
		}
		payload = data
	}
	d := Delivery{
		Kind: env.Kind, ID: env.ID, Created: env.Created.Time,
		Queue: m.Queue, MessageID: m.ID, DequeueCount: m.DequeueCount, Inserted: m.Inserted,
		once: onceConfig{TTL: p.cfg.MarkerTTL, Now: p.cfg.Clock.Now},
	}
	if err := reg.run(withDelivery(ctx, d), payload); err != nil {
		return err
	}
	if env.Claim != "" {
		if err := DeleteBlob(ctx, p.blobs, env.Claim); err != nil {
			p.onError(fmt.Errorf("eventual: deleting the payload blob of done message %s: %w", env.ID, err))
		}
	}
	return nil
}

func (p *Processor) readClaim(ctx context.Context, name string) ([]byte, error) {
	if p.blobs == nil {
		return nil, errors.New("eventual: the message's payload is in a blob and the processor has no container")
	}
	return p.readBlob(ctx, name)
}

func (p *Processor) readBlob(ctx context.Context, name string) ([]byte, error) {
	resp, err := p.blobs.NewBlobClient(name).DownloadStream(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// poisonText is the text of m's copy in the poison queue: m's own
// (PoisonOriginal), or the wrapper with its record.
func (p *Processor) poisonText(m *queueproc.Message, r queueproc.Record) string {
	if p.cfg.Poison != PoisonWrapped {
		return m.Text
	}
	return poisonText(m.Text, p.record(m, r), p.cfg.Encoding)
}

// PoisonRecordPrefix starts the names of the blobs that hold poison
// records (PoisonOriginal): PoisonRecordPrefix + poison queue name + "/" +
// poison message id.
const PoisonRecordPrefix = "tablekit.poison/"

// poisonRecordName is the blob name of the record of the message with id
// messageID in the poison queue poisonQueue.
func poisonRecordName(poisonQueue, messageID string) string {
	return PoisonRecordPrefix + poisonQueue + "/" + messageID
}

// keepRecord writes the record of m, whose copy is poisonID in its poison
// queue, as a blob (PoisonOriginal with a container).
func (p *Processor) keepRecord(ctx context.Context, m *queueproc.Message, r queueproc.Record, poisonID string) error {
	if p.blobs == nil || p.cfg.Poison == PoisonWrapped || poisonID == "" {
		return nil
	}
	rec := p.record(m, r)
	rec.PoisonMessageID = poisonID
	rec.Error = truncate(strings.ToValidUTF8(rec.Error, "\uFFFD"), maxRecordError)
	if _, enc, err := decodeText(m.Text); err == nil {
		if _, err := decodeEnvelope(m.Text); err == nil {
			rec.Encoding = enc.String()
		}
	}
	body, err := marshalVerbatim(rec)
	if err != nil {
		return err
	}
	return PutBlob(ctx, p.blobs, poisonRecordName(m.Queue+PoisonSuffix, poisonID), body)
}

// maxRecordError is the most bytes of a handler's error a record blob
// keeps.
const maxRecordError = 32 << 10

// ErrNoPoisonRecord reports a poison message whose record is not kept: the
// processor has no blob container, the message is not in the poison
// queue, or it is a second copy left by a lost reply or a crash (see
// "Failure and recovery" in the package documentation).
var ErrNoPoisonRecord = errors.New("eventual: no poison record")

// PoisonRecord returns the record of the message with id messageID in the
// poison queue of the work queue named queue, read from its blob
// (PoisonOriginal; for PoisonWrapped messages, ParsePoison reads the
// record from the message text). A record that cannot be found matches
// ErrNoPoisonRecord. An inline processor (NewInline) has no poison
// queue: an *InlineError.
func (p *Processor) PoisonRecord(ctx context.Context, queue, messageID string) (PoisonRecord, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return PoisonRecord{}, err
	}
	if err := p.usable(); err != nil {
		return PoisonRecord{}, err
	}
	if p.inline {
		return PoisonRecord{}, &InlineError{Op: "PoisonRecord"}
	}
	switch {
	case queue == "":
		return PoisonRecord{}, &ConfigError{Field: "queue", Reason: "is empty"}
	case messageID == "":
		return PoisonRecord{}, &ConfigError{Field: "messageID", Reason: "is empty"}
	}
	if p.blobs == nil {
		return PoisonRecord{}, fmt.Errorf("%w: the processor has no blob container (message %s of %s%s)", ErrNoPoisonRecord, messageID, queue, PoisonSuffix)
	}
	rec, err := p.readRecord(ctx, queue+PoisonSuffix, messageID)
	if bloberror.HasCode(err, bloberror.BlobNotFound) {
		return PoisonRecord{}, fmt.Errorf("%w: message %s of %s%s", ErrNoPoisonRecord, messageID, queue, PoisonSuffix)
	}
	return rec, err
}

func (p *Processor) readRecord(ctx context.Context, poisonQueue, messageID string) (PoisonRecord, error) {
	data, err := p.readBlob(ctx, poisonRecordName(poisonQueue, messageID))
	if err != nil {
		return PoisonRecord{}, err
	}
	var rec PoisonRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return PoisonRecord{}, fmt.Errorf("eventual: poison record of message %s of %s: %w", messageID, poisonQueue, err)
	}
	return rec, nil
}

func (p *Processor) record(m *queueproc.Message, r queueproc.Record) PoisonRecord {
	rec := PoisonRecord{
		Reason:       r.Reason,
		DequeueCount: r.DequeueCount,
		Queue:        r.Queue,
		MessageID:    r.MessageID,
		Inserted:     r.Inserted.UTC(),
		Poisoned:     r.Poisoned.UTC(),
	}
	if r.Err != nil {
		rec.Error = r.Err.Error()
	}
	if h, ok := m.Attr.(header); ok {
		rec.Kind, rec.ID = h.kind, h.id
	} else if env, err := decodeEnvelope(m.Text); err == nil {
		rec.Kind, rec.ID = env.Kind, env.ID // poisoned before it ran
	}
	return rec
}

func (p *Processor) observe(o queueproc.Outcome) {
	if p.cfg.Hooks.Outcome == nil {
		return
	}
	out := Outcome{
		Queue:        o.Message.Queue,
		MessageID:    o.Message.ID,
		DequeueCount: o.Message.DequeueCount,
		Duration:     o.Duration,
		Err:          o.Err,
		Reason:       o.Reason,
	}
	if h, ok := o.Message.Attr.(header); ok {
		out.Kind, out.ID = h.kind, h.id
	}
	switch o.Result {
	case queueproc.Succeeded:
		out.Result = Done
	case queueproc.Retrying:
		out.Result = Retry
	case queueproc.Poisoned:
		out.Result = Poison
	case queueproc.Released:
		out.Result = Released
	}
	p.cfg.Hooks.Outcome(out)
}

func (p *Processor) onError(err error) {
	if p.cfg.Hooks.Error != nil {
		p.cfg.Hooks.Error(err)
	}
}
