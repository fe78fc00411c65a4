package wide

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/errline"
)

// base is the version a write replaces: its head's ETag, which guards the
// transaction, its sequence number and number of rows, and — when it was
// read rather than named by an ETag — its rows, so that rows the write does
// not change are left alone.
type base struct {
	etag string
	seq  int64
	n    int
	rows []row // nil when only the ETag is known
}

// result is a committed write: the logical ETag of its version ("" when it
// was applied but already replaced by another writer's when this writer
// found out) and its Timestamp.
type result struct {
	etag string
	ts   time.Time
}

// commit writes bag as the next version of its logical entity, over old
// (nil: insert a new entity), in one entity group transaction:
//
//   - the head: inserted, or merged on condition of old's ETag, so that
//     the transaction fails at operation 0 when another writer got there
//     first;
//   - every row of properties whose content changed, or is new (upserts);
//   - deletes of the rows old had beyond the new number.
//
// When the outcome is in doubt — the service refused operation 0, which is
// what a transaction retried after a lost reply sees, or the reply never
// came — commit reads the head and decides by the version's token.
func (w *Table[T]) commit(ctx context.Context, bag *entity.DynamicEntity, old *base) (result, error) {
	pk, id := bag.PartitionKey, bag.RowKey
	if _, taken := bag.Properties[propVersion]; taken {
		return result{}, &entity.ValidationError{Property: propVersion, Rule: entity.RuleReservedName, Limit: "a name package wide keeps for itself", Value: propVersion}
	}
	layout, ok := assign(pk, id, bag.Properties)
	if !ok {
		return result{}, &TooLargeError{Properties: len(bag.Properties)}
	}
	wr := written{token: newToken(), insert: old == nil}
	if old != nil {
		wr.guard = old.etag
	}
	born := int64(0)
	if old == nil {
		wr.seq = firstSeq()
		born = wr.seq
		old = &base{}
	} else {
		wr.seq = old.seq + 1
	}

	n := len(layout)
	tokens := make([]string, n)
	rows := make([]*entity.DynamicEntity, n)
	changed := 0
	for k, names := range layout {
		if k < len(old.rows) && sameRow(old.rows[k].props, bag.Properties, names) {
			tokens[k] = old.rows[k].version
			continue
		}
		tokens[k] = wr.token
		changed++
		r := &entity.DynamicEntity{PartitionKey: pk, RowKey: rowKey(id, k+1), Properties: make(map[string]any, len(names)+1)}
		for _, name := range names {
			r.Properties[name] = bag.Properties[name]
		}
		r.Properties[propVersion] = wr.token
		rows[k] = r
	}
	if changed < n {
		// Every version must stay writable in one transaction, as a
		// replace by ETag writes it, whatever this write leaves alone.
		if err := fullWrite(pk, id, bag.Properties, layout, old.n).Validate(); err != nil {
			return result{}, tooLarge(bag, n, err)
		}
	}

	h := headRow(pk, id, old.etag, wr.token, wr.seq, born, tokens, wr.insert)
	b := w.rows.NewBatch()
	if wr.insert {
		b.Insert(h)
	} else {
		b.Update(h, entity.Merge) // on condition of the head's ETag
	}
	for _, r := range rows {
		if r != nil {
			b.Upsert(r, entity.Replace)
		}
	}
	for k := n + 1; k <= old.n; k++ {
		b.Delete(pk, rowKey(id, k), entity.AnyETag)
	}
	if err := ctx.Err(); err != nil {
		return result{}, err // nothing sent: certain, not in doubt
	}
	etags, err := w.rows.Submit(ctx, b)
	if err == nil && etags[0] != "" {
		return result{etag: formatETag(n, wr.seq, etags[0]), ts: h.Timestamp}, nil
	}
	if err == nil {
		// Applied, as Submit found by reading back after a lost reply,
		// which leaves the new ETags unknown: the head has it.
		return w.settle(ctx, pk, id, wr, nil)
	}
	var be *entity.BatchError
	if errors.As(err, &be) {
		return result{}, tooLarge(bag, n, err) // nothing was sent
	}
	return w.settle(ctx, pk, id, wr, err)
}

// tooLarge turns a transaction over its limits into a *TooLargeError; any
// other invalid batch is returned as it is.
func tooLarge(bag *entity.DynamicEntity, rows int, err error) error {
	var be *entity.BatchError
	if errors.As(err, &be) && be.Index < 0 {
		return &TooLargeError{Properties: len(bag.Properties), Rows: rows, Err: err}
	}
	return err
}

// fullWrite is the transaction that writes every row of a version: what a
// replace by ETag sends, and the largest transaction a version needs; it
// is only validated, never submitted.
func fullWrite(pk, id string, props map[string]any, layout [][]string, oldRows int) *entity.Batch {
	tokens := make([]string, len(layout))
	for k := range tokens {
		tokens[k] = newToken()
	}
	b := (&entity.Batch{}).UpdateAny(headRow(pk, id, entity.AnyETag, newToken(), 1, 1, tokens, false), entity.Merge)
	for k, names := range layout {
		r := &entity.DynamicEntity{PartitionKey: pk, RowKey: rowKey(id, k+1), Properties: make(map[string]any, len(names)+1)}
		for _, name := range names {
			r.Properties[name] = props[name]
		}
		r.Properties[propVersion] = tokens[k]
		b.Upsert(r, entity.Replace)
	}
	for k := len(layout) + 1; k <= oldRows; k++ {
		b.Delete(pk, rowKey(id, k), entity.AnyETag)
	}
	return b
}

// settle decides the outcome of a transaction that failed after it was
// sent (or, err nil, that Submit found applied without learning its
// ETags).
//
// A *entity.TransactionError is the service's refusal of this transaction,
// certain: on a client built with entity.ClientOptions, Submit settles a
// refusal answered to a resent transaction itself and returns it as a
// TransactionError only when the transaction was not applied. A refusal at
// an operation other than the head means the head's condition held, and
// stands. A refusal at the head stands too, unless the head's history
// shows the write applied (a client without entity.ClientOptions reports a
// resend's refusal as it came).
//
// Without a certain answer (ErrOutcomeUnknown, a transport failure) the
// head tells (see outcome): applied; refused, as the service would have
// answered, when the head proves another write took the version; in doubt
// otherwise — an *overtakenError when the entity was deleted since.
func (w *Table[T]) settle(ctx context.Context, pk, id string, wr written, err error) (result, error) {
	var te *entity.TransactionError
	refused := errors.As(err, &te)
	if refused && te.Index != 0 {
		return result{}, err
	}
	if err != nil && !refused && ctx.Err() != nil {
		return result{}, errline.Join(entity.ErrOutcomeUnknown, err)
	}
	h, gerr := w.readHead(ctx, pk, id)
	if gerr != nil {
		switch {
		case err == nil:
			return result{}, nil // applied; its ETag unknown
		case refused:
			return result{}, err
		}
		return result{}, errline.Join(entity.ErrOutcomeUnknown, err, gerr)
	}
	v := outcome(h, wr)
	switch {
	case v == applied && h.version == wr.token:
		return result{etag: formatETag(len(h.tokens), h.seq, h.etag), ts: h.ts}, nil
	case v == applied || err == nil:
		return result{}, nil // applied, and already replaced by another writer's version
	case refused:
		return result{}, err
	case v == notApplied:
		// No certain answer, but another write took the version this one
		// was conditional on: the answer the service would have given.
		return result{}, fmt.Errorf("%w (found by reading the head after: %v)", entity.ErrPreconditionFailed, err)
	case v == overtaken:
		return result{}, &overtakenError{err: err}
	}
	return result{}, errline.Join(entity.ErrOutcomeUnknown, err)
}

// readHead reads the head row: nil, nil when there is none.
func (w *Table[T]) readHead(ctx context.Context, pk, id string) (*head, error) {
	d, err := w.rows.Get(ctx, pk, rowKey(id, 0))
	switch {
	case errors.Is(err, entity.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return parseHead(&d)
}

// overtakenError is a write without a certain answer whose entity was
// deleted since (and perhaps inserted again by another writer): whether
// it was applied before the delete cannot be told. It matches
// entity.ErrOutcomeUnknown; Upsert, whose write is the same whatever the
// stored version, goes on from a fresh read.
type overtakenError struct{ err error }

func (e *overtakenError) Error() string {
	return fmt.Sprintf("%v: the entity was deleted since this write was sent, which may have been applied before (%v)", entity.ErrOutcomeUnknown, e.err)
}

func (e *overtakenError) Is(target error) bool { return target == entity.ErrOutcomeUnknown }

func (e *overtakenError) Unwrap() error { return e.err }

// sameRow reports whether a row read holds exactly the properties names of
// props, with equal values.
func sameRow(old map[string]any, props map[string]any, names []string) bool {
	if len(old) != len(names) {
		return false
	}
	for _, name := range names {
		ov, ok := old[name]
		if !ok || !sameValue(ov, props[name]) {
			return false
		}
	}
	return true
}

// sameValue compares two values of entity.DynamicEntity's canonical types
// as the service stores them: same type, same value (Doubles bit for bit,
// so -0 is not 0; times to the instant).
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	}
	return a == b
}
