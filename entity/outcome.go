package entity

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/tablekit/tablekit/internal/edmvalue"
	"github.com/tablekit/tablekit/internal/pipeline"
	"github.com/tablekit/tablekit/internal/wtoken"
)

// ErrOutcomeUnknown reports a write that may or may not have been applied:
// its reply was lost and reading the entity back could not tell, or no
// answer came at all (a transport failure after the request may have
// left, a reply that could not be read). It is never reported for a write
// that certainly happened or certainly did not.
var ErrOutcomeUnknown = errors.New("entity: outcome unknown")

// OutcomeError reports a write whose outcome is unknown; it matches
// ErrOutcomeUnknown. Last is the last answer or failure, kept for
// diagnosis: when it is the service's conflict answer to a resent request
// (409, 412, 404), errors.Is does not reach it, since that answer may be
// about the write itself; other failures (a transport error, a cancelled
// context) are unwrapped.
type OutcomeError struct {
	Op                   string // "Insert", "Update", "Delete", "Submit", …
	Table                string
	PartitionKey, RowKey string
	Last                 error

	scope scope
}

func (e *OutcomeError) Error() string {
	if e == nil {
		return "entity: outcome unknown: <nil>"
	}
	s := where(e.Op, e.Table, e.scope, e.PartitionKey, e.RowKey) + ": outcome unknown"
	if e.Last != nil {
		// The last answer in one line: a ServiceError's own, else the
		// first line (azcore's errors carry the whole HTTP exchange).
		var se *ServiceError
		if errors.As(e.Last, &se) {
			s += " (last answer " + answerLine(se.StatusCode, se.Code, se.Err) + ")"
		} else if noAnswer(e.Last) {
			// Without the URL net/http names: a SAS URL carries its
			// signature.
			s += " (" + transportLine(e.Last) + ")"
		} else {
			s += " (" + inner(e.Last) + ")"
		}
	}
	return s
}

// Is makes errors.Is(err, ErrOutcomeUnknown) true.
func (e *OutcomeError) Is(target error) bool { return target == ErrOutcomeUnknown }

// Unwrap returns Last unless it is a service answer.
func (e *OutcomeError) Unwrap() error {
	if e == nil {
		return nil
	}
	var se *ServiceError
	var te *TransactionError
	if errors.As(e.Last, &se) || errors.As(e.Last, &te) {
		return nil
	}
	return e.Last
}

// writeKind is how a write is conditioned, which decides what a read-back
// can prove about it.
type writeKind uint8

const (
	wInsert      writeKind = iota + 1 // fails if the entity exists
	wConditional                      // If-Match an ETag
	wAny                              // If-Match * (update or delete of any version)
	wUpsert                           // no condition: a resend repeats it harmlessly
)

// write is what is known of one entity write, to settle its outcome.
type write struct {
	op     string
	kind   writeKind
	pk, rk string
	sent   []byte // the body sent (inserts: compared with what is stored)
	etag   string // the If-Match of a conditional write
	call   *pipeline.Call
	merge  bool        // a merge: sent is a subset of the entity
	token  string      // its write token, "" for none
	base   wtoken.Base // what it knew of the version it is conditional on
	delete bool
	// settleAtOnce: a try that fails after it may have reached the
	// service is not resent (pipeline.Call.StopResends); the caller reads
	// back instead.
	settleAtOnce bool
}

// tokenUse says what a write does with TkWrite.
type tokenUse uint8

const (
	tokensStrip tokenUse = iota // none: a TkWrite in the body is removed
	tokensNew                   // a new token on the chain read (WithWriteTokens)
	tokensKept                  // the body's TkWrite as it is (BulkOptions.KeepWriteTokens)
)

// withToken gives w a new write token and returns body carrying its chain,
// appended to dst; for writes that take none, body without any TkWrite,
// unless use keeps the body's own. copied is false when body itself is
// returned.
func (w *write) withToken(dst, body []byte, use tokenUse) (out []byte, copied bool) {
	if use == tokensKept {
		return body, false
	}
	if use != tokensNew || w.delete || w.kind == wAny || w.kind == wUpsert {
		if !wtoken.Mentions(body) {
			return body, false
		}
		out, _ = wtoken.Set(dst, body, "")
		return out, true
	}
	if w.token == "" {
		w.token = wtoken.New()
	}
	out, _ = wtoken.Set(dst, body, wtoken.Next(w.base, w.token).String())
	return out, true
}

// baseOf reads what body (an entity of shape sh, about to be written on
// the version etag) says of that version's chain.
func baseOf(sh shape, body []byte, etag string) wtoken.Base {
	b := wtoken.Base{ETag: etag}
	if etag == AnyETag {
		b.ETag = ""
	}
	if v, ok := wtoken.Find(body); ok {
		b.Chain, b.Known = wtoken.Parse(v)
	} else if carriesToken(sh) {
		b.Known = true // the type holds TkWrite, and the version had none
	}
	return b
}

// carriesToken reports whether entities of shape sh read back TkWrite, so
// that its absence from a body means the version had none.
func carriesToken(sh shape) bool {
	switch s := sh.(type) {
	case dynamicShape:
		return true
	case *structCodec:
		_, ok := s.byName[wtoken.Property]
		return ok || s.extra != nil
	}
	return false
}

// clockMargin allows for the clocks inside the service: the front end
// that dates a reply and the server that stamps an entity's Timestamp.
const clockMargin = time.Second

// isConflict reports an answer a resend of the write itself can cause.
func isConflict(status int) bool {
	return status == http.StatusConflict || status == http.StatusPreconditionFailed || status == http.StatusNotFound
}

// settle turns the answer err to write w, sent with call, into a certain
// outcome or an *OutcomeError. applied reports a write the answer refused
// but that the read-back showed was applied; etag is then its ETag when
// the stored entity is still exactly it.
func (c *conn) settle(ctx context.Context, call *pipeline.Call, name string, w *write, err error) (applied bool, etag string, _ error) {
	if err == nil {
		return false, "", nil
	}
	if se, ok := unanswered(err); ok {
		if c.kit && !call.Reached() {
			return false, "", err // no try reached the service
		}
		return false, "", &OutcomeError{Op: w.op, Table: name, PartitionKey: w.pk, RowKey: w.rk, Last: se.Err, scope: scopeEntity}
	}
	var se *ServiceError
	if !errors.As(err, &se) {
		if c.kit && call.Tries() == 0 {
			return false, "", err // nothing was sent
		}
		return false, "", &OutcomeError{Op: w.op, Table: name, PartitionKey: w.pk, RowKey: w.rk, Last: err, scope: scopeEntity}
	}
	if !c.kit || !call.Resent() || !isConflict(se.StatusCode) || w.kind == wUpsert || errors.Is(err, ErrTableNotFound) {
		return false, "", err // the answer is about this request alone
	}
	switch v, etag := c.judge(ctx, call, w, false); v {
	case wtoken.Applied:
		return true, etag, nil
	case wtoken.NotApplied:
		return false, "", err
	}
	return false, "", &OutcomeError{Op: w.op, Table: name, PartitionKey: w.pk, RowKey: w.rk, Last: err, scope: scopeEntity}
}

// judge reads w's entity back and says whether w was applied. A write
// token in the stored chain proves it was, and the chain can prove that
// another write won its base (package wtoken); a write whose first try
// cannot have arrived before the stored version was stamped was not; an
// insert whose entity is stored exactly as sent was (or an identical one
// was written by another: the table holds what was asked either way).
// etag is the stored ETag when the stored entity is still exactly w's.
//
// conflicted marks the operation a transaction's resend failed on: an
// entity stored as sent there may be another writer's identical one that
// made the first try fail too, so it tells nothing about the rest of the
// transaction unless its ETag's time shows it came after the first try
// (an ETag without a time, as Cosmos DB sends, cannot).
func (c *conn) judge(ctx context.Context, call *pipeline.Call, w *write, conflicted bool) (wtoken.Verdict, string) {
	stored, found, err := c.readBack(ctx, w.pk, w.rk)
	if err != nil || !found {
		return wtoken.Unknown, ""
	}
	match := w.sent != nil && sameContent(w.sent, stored, w.merge)
	if w.token != "" {
		v, _ := stored.Properties[wtoken.Property].(string)
		chain, ok := wtoken.Parse(v)
		switch wtoken.Judge(w.base, w.token, chain, ok) {
		case wtoken.Applied:
			if match && chain.Tokens[0] == w.token {
				return wtoken.Applied, stored.ETag
			}
			return wtoken.Applied, ""
		case wtoken.NotApplied:
			return wtoken.NotApplied, ""
		}
	}
	if predates(stored.ETag, call) {
		return wtoken.NotApplied, ""
	}
	if w.kind == wInsert && match {
		if _, timed := TimestampFromETag(stored.ETag); conflicted && !timed {
			return wtoken.Unknown, ""
		}
		return wtoken.Applied, stored.ETag
	}
	return wtoken.Unknown, ""
}

// ownETag reads w's entity back and returns its ETag when it is stored
// exactly as w wrote it (for a merge, with at least w's properties; with
// a write token, with w's token newest): the version w made, which a
// conditional write may then name. "" otherwise: another write changed
// it since, or the read failed.
func (c *conn) ownETag(ctx context.Context, w *write) string {
	stored, found, err := c.readBack(ctx, w.pk, w.rk)
	if err != nil || !found || w.sent == nil || !sameContent(w.sent, stored, w.merge) {
		return ""
	}
	if w.token != "" {
		v, _ := stored.Properties[wtoken.Property].(string)
		chain, ok := wtoken.Parse(v)
		if !ok || len(chain.Tokens) == 0 || chain.Tokens[0] != w.token {
			return ""
		}
	}
	return stored.ETag
}

// predates reports a stored version stamped before the call's first try
// can have reached the service.
func predates(etag string, call *pipeline.Call) bool {
	ts, ok := TimestampFromETag(etag)
	if !ok {
		return false
	}
	first, ok := call.FirstTryNotBefore()
	return ok && ts.Before(first.Add(-clockMargin))
}

// readBack reads an entity as a property bag, with every type annotated.
func (c *conn) readBack(ctx context.Context, pk, rk string) (*DynamicEntity, bool, error) {
	bag := &Table[DynamicEntity]{conn: c, client: c.client, shape: dynamicShape{}, readFormat: dynamicShape{}.readFormat()}
	d, err := bag.Get(ctx, pk, rk)
	if errors.Is(err, ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return &d, true, nil
}

// sameContent reports whether stored holds exactly the keys and properties
// of the body sent (TkWrite aside), or, for a merge, at least those
// properties.
func sameContent(sent []byte, stored *DynamicEntity, merge bool) bool {
	var want DynamicEntity
	if Unmarshal(sent, &want) != nil {
		return false
	}
	if want.PartitionKey != stored.PartitionKey || want.RowKey != stored.RowKey {
		return false
	}
	n := 0
	for name, v := range want.Properties {
		if name == wtoken.Property {
			continue
		}
		n++
		got, ok := stored.Properties[name]
		if !ok || !edmvalue.Equal(v, got) {
			return false
		}
	}
	m := len(stored.Properties)
	if _, ok := stored.Properties[wtoken.Property]; ok {
		m--
	}
	return n == m || merge
}
