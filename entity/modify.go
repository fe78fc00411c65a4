package entity

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"reflect"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/wtoken"
)

// RetryPolicy bounds an optimistic-concurrency loop.
type RetryPolicy struct {
	// Attempts is the most read-modify-write rounds; 0 means 10.
	Attempts int
	// BaseDelay is the first backoff; it doubles each round with full
	// jitter, up to MaxDelay. 0 means 20 ms; MaxDelay 0 means 1 s.
	BaseDelay, MaxDelay time.Duration
}

// ErrContention reports an optimistic-concurrency loop that lost every
// round to other writers (not an HTTP 409, which is ErrAlreadyExists). It
// comes joined with the last ErrPreconditionFailed.
var ErrContention = errors.New("entity: too many concurrent writers")

// ModifyOptions tunes Modify.
type ModifyOptions struct {
	// Mode is how the changed entity is written; 0 means Merge.
	Mode UpdateMode
	// Retry bounds the read-modify-write rounds; the zero value means
	// RetryPolicy's defaults.
	Retry RetryPolicy
}

func (o ModifyOptions) withDefaults() ModifyOptions {
	if o.Mode == 0 {
		o.Mode = Merge
	}
	o.Retry = o.Retry.withDefaults()
	return o
}

func (r RetryPolicy) withDefaults() RetryPolicy {
	if r.Attempts <= 0 {
		r.Attempts = 10
	}
	if r.BaseDelay <= 0 {
		r.BaseDelay = 20 * time.Millisecond
	}
	if r.MaxDelay <= 0 {
		r.MaxDelay = time.Second
	}
	return r
}

// backoff sleeps before round n (from 1), or returns ctx's error.
func (r RetryPolicy) backoff(ctx context.Context, n int) error {
	d := r.BaseDelay << min(n-1, 20)
	if d > r.MaxDelay || d <= 0 {
		d = r.MaxDelay
	}
	d = time.Duration(rand.Int64N(int64(d)) + 1) // full jitter spreads the writers
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// Retry runs attempt until it succeeds, fails with anything but
// ErrPreconditionFailed, runs out of rounds (ErrContention) or ctx ends. Each
// round must start from a fresh read: this is the loop of every ETag-guarded
// pattern of the design guide (§3, §6.4, §6.9).
func (r RetryPolicy) Retry(ctx context.Context, attempt func(ctx context.Context) error) error {
	if attempt == nil {
		return &ValidationError{Rule: "attempt function", Limit: "non-nil", Value: "nil"}
	}
	r = r.withDefaults()
	var last error
	for n := 1; n <= r.Attempts; n++ {
		if n > 1 {
			if err := r.backoff(ctx, n-1); err != nil {
				return join(err, last)
			}
		}
		last = attempt(ctx)
		if !errors.Is(last, ErrPreconditionFailed) {
			return last
		}
	}
	return join(ErrContention, last)
}

// Modify reads the entity, lets change edit it, and writes it back with
// opts.Mode on condition that nobody wrote it in between; when somebody
// did, it starts again from a fresh read, with backoff, at most
// opts.Retry.Attempts times (then ErrContention). change may return an
// error to give up (returned as is); it must not change the keys (a
// *RowError matching ErrInvalid, before the write). The written entity is
// returned. A read that fails is Modify's own error, naming the table and
// both keys: the service's answer as a *ServiceError, anything else as a
// *RowError (TestModifyReadFailureNamesModify).
//
// With Replace, properties that T does not model are removed (give T an
// `extra` field to keep them); Merge keeps them, but cannot remove a
// property.
//
// Lost replies: on a table with write tokens (WithWriteTokens) Modify is
// exactly-once. When its write's reply is lost and azcore's resend gets
// 412 (or every try fails in transport), the next round's read shows
// whether the write was applied: if so Modify returns that entity as read
// (with the change, and any later writes) without applying the change
// again; if another writer won, the round goes on as for any 412; if the
// read cannot tell, the error matches ErrOutcomeUnknown. Without write
// tokens the same case is settled only when the stored version predates
// the write, and is otherwise ErrOutcomeUnknown: never applied twice.
func (t *Table[T]) Modify(ctx context.Context, partitionKey, rowKey string, change func(*T) error, opts ModifyOptions) (T, error) {
	var out T
	if err := t.okWrite(); err != nil {
		return out, err
	}
	if change == nil {
		return out, &ValidationError{Rule: "change function", Limit: "non-nil", Value: "nil"}
	}
	if !t.shape.hasETag() {
		return out, &TypeError{Type: t.shape.goType(), Reason: "Modify needs an etag field"}
	}
	opts = opts.withDefaults()
	mode, policy := opts.Mode, opts.Retry
	if _, err := mode.sdk(); err != nil {
		return out, err
	}
	kind := OpReplace
	if mode == Merge {
		kind = OpMerge
	}
	if err := t.checkKeys("Modify", partitionKey, rowKey); err != nil {
		return out, err
	}
	if err := t.conn.addressable("Modify", t.name, kind, partitionKey, rowKey); err != nil {
		return out, err
	}
	var token string
	if t.tokens {
		token = wtoken.New()
	}
	// pending is the last round's write when its outcome is left to the
	// next read to settle.
	var pending *write
	var pendingErr error
	unknown := func() error {
		return &OutcomeError{Op: "Modify", Table: t.name, PartitionKey: partitionKey, RowKey: rowKey, Last: pendingErr, scope: scopeEntity}
	}
	// settle says what the entity as read (raw, with its etag) proves of
	// the pending write.
	settle := func(raw []byte, etag string) wtoken.Verdict {
		v := wtoken.Unknown
		if pending.token != "" {
			s, has := wtoken.Find(raw)
			chain, ok := wtoken.Parse(s)
			v = wtoken.Judge(pending.base, pending.token, chain, has && ok)
		}
		if v == wtoken.Unknown && predates(etag, pending.call) {
			v = wtoken.NotApplied
		}
		return v
	}
	read := func(ctx context.Context) (T, []byte, string, error) {
		var cur T
		raw, etag, err := t.getRaw(ctx, "Modify", partitionKey, rowKey)
		if err != nil {
			return cur, nil, "", err
		}
		rv := reflect.ValueOf(&cur).Elem()
		if err := t.shape.decode(raw, rv); err != nil {
			var zero T
			return zero, nil, "", rowErr("Modify", t.name, partitionKey, rowKey, err)
		}
		if etag == "" {
			etag = t.shape.etagValue(rv)
		} else if t.shape.etagValue(rv) == "" {
			t.shape.setWritten(rv, etag)
		}
		return cur, raw, etag, nil
	}
	err := policy.Retry(ctx, func(ctx context.Context) error {
		cur, raw, etag, err := read(ctx)
		// The read that settles a pending write is worth a few more tries:
		// a transport failure here would turn a write that can be settled
		// into an unknown outcome.
		for i := 1; err != nil && pending != nil && i <= 3 && !errors.Is(err, ErrNotFound); i++ {
			if policy.backoff(ctx, i) != nil {
				break
			}
			cur, raw, etag, err = read(ctx)
		}
		if err != nil {
			if pending != nil {
				return unknown()
			}
			return err
		}
		if pending != nil {
			switch settle(raw, etag) {
			case wtoken.Applied:
				out, pending = cur, nil
				return nil
			case wtoken.Unknown:
				return unknown()
			}
			pending = nil
		}
		base := wtoken.Base{ETag: etag, Known: true}
		if s, ok := wtoken.Find(raw); ok {
			base.Chain, _ = wtoken.Parse(s)
		}
		if err := change(&cur); err != nil {
			return changeError{err}
		}
		w := &write{op: "Modify", kind: wConditional, pk: partitionKey, rk: rowKey, merge: mode == Merge, base: base, etag: etag, token: token}
		var newETag string
		err = t.withBody("Modify", &cur, func(body []byte, pk, rk string) error {
			if pk != partitionKey || rk != rowKey {
				return rowErr("Modify", t.name, partitionKey, rowKey, &ValidationError{Rule: RuleKey, Limit: "the keys read, unchanged by the change function", Value: argerr.EntityKeys(pk, rk)})
			}
			var err error
			newETag, err = t.sendOnly(ctx, w, body, func(ctx context.Context, body []byte) (string, error) {
				return t.conn.writeEntity(ctx, kind, partitionKey, rowKey, etag, body)
			}, false)
			return err
		})
		if err == nil {
			t.setWritten(&cur, azcore.ETag(newETag))
			out = cur
			return nil
		}
		if w.call == nil {
			return err // refused before sending: the changed entity is invalid
		}
		var se *ServiceError
		switch {
		case errors.As(err, &se) && se.StatusCode == http.StatusPreconditionFailed:
			// Certain unless it may answer a resend; without the policy
			// that cannot be told, and only a token settles it.
			if (t.conn.kit && w.call.Resent()) || (!t.conn.kit && token != "") {
				pending, pendingErr = w, err
			}
			return err // another round, which settles pending first
		case errors.As(err, &se):
			_, _, err = t.conn.settle(ctx, w.call, t.name, w, err)
			return err
		case t.conn.kit && w.call.Tries() == 0:
			return err // nothing was sent
		case token != "":
			// No answer: the next read settles it.
			pending, pendingErr = w, err
			return errRound
		}
		return &OutcomeError{Op: "Modify", Table: t.name, PartitionKey: partitionKey, RowKey: rowKey, Last: err, scope: scopeEntity}
	})
	var ce changeError
	if errors.As(err, &ce) {
		return out, ce.err
	}
	if pending != nil {
		// The rounds ran out with the last write unsettled: one more read.
		cur, raw, etag, rerr := read(ctx)
		if rerr != nil {
			return out, unknown()
		}
		switch settle(raw, etag) {
		case wtoken.Applied:
			return cur, nil
		case wtoken.Unknown:
			return out, unknown()
		}
	}
	return out, err
}

// changeError carries the change function's error through Modify's
// rounds, unwrapped: an error of the caller's that matches
// ErrPreconditionFailed gives up like any other, instead of starting a
// round.
type changeError struct{ err error }

func (e changeError) Error() string { return e.err.Error() }

// errRound makes RetryPolicy.Retry run another round of Modify, whose
// read settles a write that got no answer.
var errRound = join(errors.New("entity: write not answered; settling by reading back"), ErrPreconditionFailed)
