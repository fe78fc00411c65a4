package entity

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/wtoken"
)

// RetryPolicy bounds an optimistic-concurrency loop and spaces its rounds.
//
// After a lost round the loop waits before it reads again. The wait after
// the n-th lost round in a row is drawn uniformly from [W/2, W], where
// W = u·2^(n−1), at most MaxDelay, and u is BaseDelay or the time the
// lost round took, whichever is longer. The fixed half lets a hot row
// cool down, so that the writers who lost do not all come back at once;
// the random half spreads them; and u makes the waits scale with the
// service, whose round trip is the time a writer can be beaten in.
//
// # Sizing Attempts
//
// One row takes at most about one conditional write per round trip.
// When more writers want it, a writer that lost a round wins each of its
// next ones with a probability p that the waits keep from collapsing as
// writers are added. Measured on Azurite, writers incrementing one row
// with Modify's defaults (TestModifyHotRowConverges,
// BenchmarkModifyHotRow): with 20 writers p ≈ 0.4, 1.4 to 1.5 rounds
// (2.8 to 3 storage transactions) per increment, the slowest of 2,000
// taking 11 to 16 rounds; with 50 writers p ≈ 0.27, 2.1 to 2.3 rounds, at
// most 16 to 22. A call
// then gives up (ErrContention) with a probability of about
// q·(1−p)^(Attempts−1), q being the share of calls that lose their first
// round (0.2 with 20 writers, 0.37 with 50):
//
//	Attempts   20 writers      50 writers
//	      10   1 in 500        1 in 50     (Retry's default)
//	      25   1 in 10^6       1 in 5,000
//	      40   1 in 10^9       1 in 600,000 (Modify's default)
//
// A round of Modify costs a read and a write. With the defaults, a call that
// needs k > 7 rounds waits at most about 1.3 s + (k−7)·MaxDelay, so
// the slowest increments above wait a few seconds and a call that gives
// up after 40 rounds about half a minute: to bound the time rather than
// the rounds, pass a context with a deadline. Raise Attempts for a row
// written by more writers at once, lower it where a quick failure is
// better than a late success. A row that still runs out of rounds takes
// more writes than one row can: spread them over several rows (a
// counter per writer or per bucket, summed on read) rather than raising
// Attempts further.
type RetryPolicy struct {
	// Attempts is the most rounds; 0 means 10 for Retry and 40 for
	// Table.Modify (see Sizing Attempts).
	Attempts int
	// BaseDelay is the least unit of the waits between rounds, which
	// double each lost round up to MaxDelay (see above). 0 means 20 ms;
	// MaxDelay 0 means 1 s.
	BaseDelay, MaxDelay time.Duration
}

// Default rounds of RetryPolicy.Retry and of Table.Modify.
const (
	defaultAttempts       = 10
	defaultModifyAttempts = 40
)

// ErrContention reports an optimistic-concurrency loop that lost every
// round to other writers (not an HTTP 409, which is ErrAlreadyExists). It
// comes joined with the last ErrPreconditionFailed.
var ErrContention = errors.New("entity: too many concurrent writers")

// ModifyOptions tunes Modify.
type ModifyOptions struct {
	// Mode is how the changed entity is written; 0 means Merge, and
	// Replace on a protected table (Table.Protected), which refuses Merge.
	Mode UpdateMode
	// Retry bounds the read-modify-write rounds; the zero value means
	// RetryPolicy's defaults, with 40 Attempts.
	Retry RetryPolicy
	// Create makes Modify create the entity when it does not exist:
	// change then gets T's zero value with the keys set (and no ETag, by
	// which it can tell), and what it leaves is inserted. When another
	// writer inserts the entity first, the round counts as lost and the
	// next one changes what that writer stored. Without Create a missing
	// entity is ErrNotFound.
	Create bool
}

func (o ModifyOptions) withDefaults() ModifyOptions {
	if o.Mode == 0 {
		o.Mode = Merge
	}
	if o.Retry.Attempts <= 0 {
		o.Retry.Attempts = defaultModifyAttempts
	}
	o.Retry = o.Retry.withDefaults()
	return o
}

func (r RetryPolicy) withDefaults() RetryPolicy {
	if r.Attempts <= 0 {
		r.Attempts = defaultAttempts
	}
	if r.BaseDelay <= 0 {
		r.BaseDelay = 20 * time.Millisecond
	}
	if r.MaxDelay <= 0 {
		r.MaxDelay = time.Second
	}
	return r
}

// wait is the wait after the n-th lost round in a row (n from 1), which
// took lost, for a uniform x in [0, 1): in [W/2, W], W = max(BaseDelay,
// lost)·2^(n−1) up to MaxDelay. r has its defaults.
func (r RetryPolicy) wait(n int, lost time.Duration, x float64) time.Duration {
	w := max(r.BaseDelay, lost)
	for i := 1; i < n && w < r.MaxDelay; i++ {
		w *= 2
	}
	w = min(w, r.MaxDelay)
	return w - time.Duration(x*float64(w/2))
}

// backoff sleeps after the n-th lost round in a row, which took lost, or
// returns ctx's error.
func (r RetryPolicy) backoff(ctx context.Context, n int, lost time.Duration) error {
	timer := time.NewTimer(r.wait(n, lost, rand.Float64()))
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
// pattern of the design guide (§3, §6.4, §6.9). Lost rounds are spaced as
// RetryPolicy says.
func (r RetryPolicy) Retry(ctx context.Context, attempt func(ctx context.Context) error) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if attempt == nil {
		return &ValidationError{Rule: "attempt function", Limit: "non-nil", Value: "nil"}
	}
	return r.withDefaults().retry(ctx, attempt)
}

// retry is Retry with r's defaults set.
func (r RetryPolicy) retry(ctx context.Context, attempt func(ctx context.Context) error) error {
	var last error
	var took time.Duration
	for n := 1; n <= r.Attempts; n++ {
		if n > 1 && last != errRound {
			if err := r.backoff(ctx, n-1, took); err != nil {
				return join(err, last)
			}
		}
		start := time.Now()
		last = attempt(ctx)
		took = time.Since(start)
		if !errors.Is(last, ErrPreconditionFailed) {
			return last
		}
	}
	return join(ErrContention, last)
}

// Modify reads the entity, lets change edit it, and writes it back with
// opts.Mode on condition that nobody wrote it in between (T needs an etag
// field, or Modify is a *TypeError before any request); when somebody
// did, it starts again from a fresh read, with backoff, at most
// opts.Retry.Attempts times (40 by default, then ErrContention: see
// RetryPolicy for the waits and for sizing them). change may return an
// error to give up (returned as is); it must not change the keys (a
// *RowError matching ErrInvalid, before the write). The written entity is
// returned. A read that fails is Modify's own error, naming the table and
// both keys: the service's answer as a *ServiceError, anything else as a
// *RowError (TestModifyReadFailureNamesModify).
//
// A missing entity is ErrNotFound, unless opts.Create: then change gets
// T's zero value with the keys set and no ETag, and the result is
// inserted; when another writer inserts it first, Modify starts again
// from a fresh read and changes theirs, so racing creators each apply
// their change once (TestModifyCreateRacingCreators). An entity deleted
// between a round's read and its write is created again in the next
// round.
//
// With Replace, properties that T does not model are removed (give T an
// `extra` field to keep them); Merge keeps them, but cannot remove a
// property.
//
// Lost replies: on a table with write tokens (WithWriteTokens) Modify
// never applies a change twice. When its conditional write's reply is lost, it is not
// resent: the next round reads the entity at once and its chain shows
// whether the write was applied (for the insert of Create, azcore's
// resend gets 409 and the next round's read tells the same way). If so
// Modify returns that entity as read (with the change, and any later
// writes) without applying the change again; if another writer won, the
// round goes on as for any 412; if the read cannot tell — more than
// wtoken's 16 writes landed between the write and the read, or a write
// without a token replaced the entity — the error matches
// ErrOutcomeUnknown. Reading at once is what keeps that rare on a hot
// row: azcore's resend would come RetryDelay later (4 s by default),
// after hundreds of other writes (TestModifyTokensSettleBeforeTheChainMoves).
// A write the service executes only after that read (its connection
// broke while the service still held it) makes the next round's write
// fail on its version, and the round after finds Modify's token in the
// chain: applied once (TestModifyTokensWriteAppliedAfterTheReadBack).
// Only when Modify stops before such a round — ErrContention, the change
// function's error, ctx — can that late write land after the call
// returned its error. Without write tokens the same case is
// settled only when the stored version predates the write, and is
// otherwise ErrOutcomeUnknown: never applied twice
// (TestModifyCreateLostReply). An inserted entity stored exactly as sent
// is no proof here, unlike for Insert: a racing creator's change may
// have stored the same values.
func (t *Table[T]) Modify(ctx context.Context, partitionKey, rowKey string, change func(*T) error, opts ModifyOptions) (T, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return *new(T), err
	}
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
	if t.guard != nil {
		if opts.Mode == 0 {
			opts.Mode = Replace // a protected entity is written whole
		}
		if err := t.refuseMerge("Modify", opts.Mode); err != nil {
			return out, err
		}
		t = t.bind(ctx, "Modify", false)
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
	// write sends the changed entity cur: an insert when etag is "" (a
	// round of Create), else conditional on etag.
	write := func(ctx context.Context, cur *T, etag string, base wtoken.Base) error {
		w := &write{op: "Modify", kind: wConditional, pk: partitionKey, rk: rowKey, merge: mode == Merge, base: base, etag: etag, token: token}
		op := kind
		if etag == "" {
			w.kind, w.merge, op = wInsert, false, OpInsert
		}
		// A conditional write with a token is settled by the next round's
		// read, at once, rather than by azcore's resend RetryDelay later:
		// on a hot row the writes in between would push its token out of
		// the stored chain (wtoken.MaxTokens), leaving the outcome
		// unknown. An insert is still resent: a read that finds nothing
		// could not tell a lost insert from one deleted since.
		w.settleAtOnce = token != "" && w.kind == wConditional
		var newETag string
		err := t.withBody("Modify", cur, func(body []byte, pk, rk string) error {
			if pk != partitionKey || rk != rowKey {
				return rowErr("Modify", t.name, partitionKey, rowKey, &ValidationError{Rule: RuleKey, Limit: "the keys read, unchanged by the change function", Value: argerr.EntityKeys(pk, rk)})
			}
			var err error
			newETag, err = t.sendOnly(ctx, w, body, func(ctx context.Context, body []byte) (string, error) {
				return t.conn.writeEntity(ctx, op, partitionKey, rowKey, etag, body)
			}, false)
			return err
		})
		if err == nil {
			t.setWritten(cur, azcore.ETag(newETag))
			out = *cur
			return nil
		}
		if w.call == nil {
			return err // refused before sending: the changed entity is invalid
		}
		// A resent request's 412 (or an insert's 409) may be about the
		// write itself: certain only without a resend, which only the
		// client's policy can tell; without it only a token settles it.
		mayBeOwn := (t.conn.kit && w.call.Resent()) || (!t.conn.kit && token != "")
		var se *ServiceError
		switch {
		case w.settleAtOnce && w.call.Reached() && !(errors.As(err, &se) && se.StatusCode != 0):
			pending, pendingErr = w, err
			return errRound // read back at once (RetryPolicy.retry skips the wait)
		case errors.As(err, &se) && se.StatusCode == http.StatusPreconditionFailed:
			if mayBeOwn {
				pending, pendingErr = w, err
			}
			return err // another round, which settles pending first
		case w.kind == wInsert && errors.Is(err, ErrAlreadyExists):
			// Another writer created it first, or this insert's first
			// try did: the next round's read tells which.
			if mayBeOwn {
				pending, pendingErr = w, err
			}
			return errCreatedMeanwhile
		case opts.Create && w.kind == wConditional && errors.Is(err, ErrNotFound) && !(t.conn.kit && w.call.Resent()):
			return errDeletedMeanwhile // deleted since the read: create it again
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
	}
	err := policy.retry(ctx, func(ctx context.Context) error {
		cur, raw, etag, err := read(ctx)
		// The read that settles a pending write is worth a few more tries:
		// a transport failure here would turn a write that can be settled
		// into an unknown outcome.
		for i := 1; err != nil && pending != nil && i <= 3 && !errors.Is(err, ErrNotFound); i++ {
			if policy.backoff(ctx, i, 0) != nil {
				break
			}
			cur, raw, etag, err = read(ctx)
		}
		switch {
		case err != nil && pending != nil:
			// Gone since the write that may have been applied: nothing
			// tells.
			return unknown()
		case err != nil && opts.Create && errors.Is(err, ErrNotFound):
			var zero T
			cur, etag = zero, ""
			t.shape.setSystem(reflect.ValueOf(&cur).Elem(), System{PartitionKey: partitionKey, RowKey: rowKey})
			if d, ok := any(&cur).(*DynamicEntity); ok {
				d.Properties = map[string]any{}
			}
			if err := change(&cur); err != nil {
				return changeError{err}
			}
			return write(ctx, &cur, "", wtoken.Base{})
		case err != nil:
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
		// This call's token in the chain: a write of an earlier round that
		// a read had found not applied was executed after it (its
		// connection broke while the service still held it). Every round
		// writes on condition of the version it read, so that one write
		// is the only one applied.
		if token != "" && slices.Contains(base.Chain.Tokens, token) {
			out = cur
			return nil
		}
		if err := change(&cur); err != nil {
			return changeError{err}
		}
		return write(ctx, &cur, etag, base)
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

// errCreatedMeanwhile and errDeletedMeanwhile make Modify with Create run
// another round: the entity it was about to create was created by
// another writer (or by this insert's lost first try, which the next read
// settles), or the one it was about to change was deleted.
var (
	errCreatedMeanwhile = join(errors.New("entity: created by another writer first; changing theirs"), ErrPreconditionFailed)
	errDeletedMeanwhile = join(errors.New("entity: deleted by another writer; creating it again"), ErrPreconditionFailed)
)
