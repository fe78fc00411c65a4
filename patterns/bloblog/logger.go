package bloblog

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/google/uuid"
	"github.com/tablekit/tablekit/internal/argerr"
)

// Logger buffers log records and appends them, a block at a time, to
// append blobs named by service and period. It is safe for concurrent use:
// records appended by one goroutine are written in the order it appended
// them.
//
// A Logger runs a goroutine that flushes the buffer when FlushBytes are
// buffered or the oldest record has waited FlushInterval. Close it, or end
// the context it was made with: either flushes what is buffered first.
type Logger struct {
	c      *container.Client
	cfg    Config
	writer string // this Logger's id, in the metadata of the blobs it creates

	mu           sync.Mutex
	space        *sync.Cond       // broadcast when buffered bytes fall, a flush fails, or the Logger stops
	pending      map[int64]*chunk // records not yet being flushed, by period start (Unix seconds)
	pendingBytes int
	bytes        int       // every byte not yet written: pending, being flushed, or of an unsure block
	records      int       // likewise, records
	oldest       time.Time // when the oldest pending record was appended; zero when none
	failing      error     // the last flush's error; nil after a block is written
	stopped      bool      // Close called or the context ended: Append refuses

	wake     chan struct{} // capacity 1: a flush may be due
	flushReq chan chan error
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	err      error // the final error, set before done is closed

	// Owned by the flusher goroutine.
	blobs map[int64]*active // the blob being appended to, by period
	seqs  map[int64]int     // the highest sequence number known, by period
}

// chunk is the buffered records of one period, framed.
type chunk struct {
	data []byte
	n    int
}

// New starts a Logger that writes to the container c. Nothing is sent
// until records are flushed; the configuration is checked first. The
// Logger stops when ctx ends or Close is called, after flushing its buffer
// (within Config.CloseTimeout).
func New(ctx context.Context, c *container.Client, cfg Config) (*Logger, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, &ConfigError{Field: "container", Reason: ReasonNil}
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	l := &Logger{
		c:        c,
		cfg:      cfg,
		writer:   uuid.NewString(),
		pending:  map[int64]*chunk{},
		wake:     make(chan struct{}, 1),
		flushReq: make(chan chan error),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		blobs:    map[int64]*active{},
		seqs:     map[int64]int{},
	}
	l.space = sync.NewCond(&l.mu)
	go l.run(ctx)
	return l, nil
}

// Append buffers one record with time t. The record goes to a blob of the
// period that holds t. It returns an error only for a record that can never
// be written (a *RecordError: larger than a block, or a time outside the
// years 0001 to 9999), after the Logger has stopped (ErrClosed), or when the
// buffer is full and flushes are failing (wrapping the flush's error; the
// record is not buffered). When the buffer is full and a flush is under way,
// Append waits for it. To wait through failing flushes too, use
// AppendContext.
func (l *Logger) Append(t time.Time, data []byte) error {
	if err := l.ok(); err != nil {
		return err
	}
	return l.append(context.Background(), false, t, data)
}

// AppendContext is Append that, when the buffer is full and flushes are
// failing, waits for the Logger's retries to make room until ctx ends,
// instead of refusing at once: a burst during an outage is held back
// rather than dropped. When ctx ends first the record is not buffered and
// the error is a *FlushError matching ctx's error and the flush's.
func (l *Logger) AppendContext(ctx context.Context, t time.Time, data []byte) error {
	if err := l.ready(ctx); err != nil {
		return err
	}
	return l.append(ctx, true, t, data)
}

// append buffers a record; wait says whether to wait through failing
// flushes until ctx ends.
func (l *Logger) append(ctx context.Context, wait bool, t time.Time, data []byte) error {
	if !validTime(t) {
		return &RecordError{Reason: "time " + t.String() + " outside the years 0001 to 9999"}
	}
	size := headerLen(len(data)) + len(data)
	if size > l.cfg.MaxBlockBytes {
		return &RecordError{Reason: "record of " + strconv.Itoa(len(data)) + " bytes does not fit in a block of " + strconv.Itoa(l.cfg.MaxBlockBytes) + " bytes with its " + strconv.Itoa(size-len(data)) + "-byte framing"}
	}
	if wait {
		// Wake the wait below when ctx ends.
		stop := context.AfterFunc(ctx, func() {
			l.mu.Lock()
			l.space.Broadcast()
			l.mu.Unlock()
		})
		defer stop()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if l.stopped {
			return ErrClosed
		}
		if l.bytes+size <= l.cfg.MaxBufferBytes {
			break
		}
		if l.failing != nil && !wait {
			return &FlushError{Records: 1, Bytes: size, Err: l.failing}
		}
		if wait && ctx.Err() != nil {
			return &FlushError{Records: 1, Bytes: size, Err: errors.Join(ctx.Err(), l.failing)}
		}
		l.space.Wait()
	}
	p := l.cfg.periodOf(t).Unix()
	c := l.pending[p]
	if c == nil {
		c = &chunk{}
		l.pending[p] = c
	}
	c.data = appendRecord(c.data, t, data)
	c.n++
	l.bytes += size
	l.records++
	l.pendingBytes += size
	if l.oldest.IsZero() {
		l.oldest = time.Now()
		l.poke() // the flusher times the oldest record
	}
	if l.pendingBytes >= l.cfg.FlushBytes {
		l.poke()
	}
	return nil
}

// Write appends p as one record stamped with the current time, so that a
// Logger can be the writer of a log/slog handler or log.Logger (each of
// which writes one record per call). p is stored as given, trailing newline
// included.
func (l *Logger) Write(p []byte) (int, error) {
	if err := l.Append(time.Now(), p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes every record buffered so far and returns when they are in
// blobs, or with the error that stopped it (the records stay buffered and
// are tried again).
func (l *Logger) Flush(ctx context.Context) error {
	if err := l.ready(ctx); err != nil {
		return err
	}
	reply := make(chan error, 1)
	select {
	case l.flushReq <- reply:
	case <-l.done:
		return l.doneErr()
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close flushes the buffer, within Config.CloseTimeout, and stops the
// Logger. Records it could not write are reported by a *FlushError. Close
// may be called more than once.
func (l *Logger) Close() error {
	if err := l.ok(); err != nil {
		return err
	}
	l.stopOnce.Do(func() { close(l.stop) })
	<-l.done
	return l.err
}

// Done is closed when the Logger has stopped (after Close, or when its
// context ended) and its last flush is over; Err then says whether every
// record was written.
// A nil or zero Logger, which never ran, is done at once (Err says why).
func (l *Logger) Done() <-chan struct{} {
	if l.ok() != nil {
		return closed
	}
	return l.done
}

// closed is the Done of a nil or zero Logger; nothing sends on it.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// ok refuses a nil or zero Logger, which New never returns.
func (l *Logger) ok() error {
	if l == nil || l.c == nil || l.done == nil {
		return &ConfigError{Field: "Logger", Reason: argerr.ZeroValue}
	}
	return nil
}

// ready is ok and a usable ctx: the check at each entry point taking one.
func (l *Logger) ready(ctx context.Context) error {
	if err := l.ok(); err != nil {
		return err
	}
	return argerr.Ctx(ctx, ctxError)
}

// ctxError is this package's refusal of an argument, made by argerr.Ctx
// for a nil context.Context at every exported function and method that
// takes one: "bloblog: invalid ctx: is nil: …", matching entity.ErrInvalid.
func ctxError(field, reason string) error { return &ConfigError{Field: field, Reason: reason} }

// Err returns nil while the Logger runs, and after it stopped the error of
// its last flush: a *FlushError when records were lost.
func (l *Logger) Err() error {
	if err := l.ok(); err != nil {
		return err
	}
	select {
	case <-l.done:
		return l.err
	default:
		return nil
	}
}

func (l *Logger) doneErr() error {
	if l.err != nil {
		return l.err
	}
	return ErrClosed
}

// poke wakes the flusher; l.mu is held.
func (l *Logger) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// run is the flusher goroutine.
func (l *Logger) run(ctx context.Context) {
	defer close(l.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var retryAt time.Time // after a failed flush, the next automatic try
	for {
		l.mu.Lock()
		due := l.pendingBytes >= l.cfg.FlushBytes
		wait := time.Duration(-1)
		if !l.oldest.IsZero() {
			wait = time.Until(l.oldest.Add(l.cfg.FlushInterval))
			due = due || wait <= 0
		}
		l.mu.Unlock()
		if d := time.Until(retryAt); d > 0 && (due || wait >= 0) {
			due, wait = false, d
		}
		if due {
			if err := l.flush(ctx); err != nil {
				retryAt = time.Now().Add(min(l.cfg.FlushInterval, time.Second))
			} else {
				retryAt = time.Time{}
			}
			continue
		}
		var tick <-chan time.Time
		if wait >= 0 {
			timer.Reset(wait)
			tick = timer.C
		}
		select {
		case <-l.wake:
		case <-tick:
		case reply := <-l.flushReq:
			err := l.flush(ctx)
			if err == nil {
				retryAt = time.Time{}
			}
			reply <- err
		case <-l.stop:
			l.finish(ctx)
			return
		case <-ctx.Done():
			l.finish(ctx)
			return
		}
		timer.Stop()
	}
}

// finish stops the Logger: Append refuses from now on, and what is
// buffered is flushed, retried until Config.CloseTimeout.
func (l *Logger) finish(ctx context.Context) {
	l.mu.Lock()
	l.stopped = true
	l.space.Broadcast()
	l.mu.Unlock()
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.CloseTimeout)
	defer cancel()
	var last error
	for {
		l.mu.Lock()
		left, bytes := l.records, l.bytes
		l.mu.Unlock()
		if left == 0 {
			return
		}
		if last = l.flush(fctx); last == nil {
			continue
		}
		select {
		case <-fctx.Done():
			l.err = &FlushError{Records: left, Bytes: bytes, Err: last}
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// periods returns the keys of m in ascending order.
func periods[V any](m map[int64]V) []int64 {
	ks := make([]int64, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
