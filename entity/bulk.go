package entity

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/pipeline"
)

// BulkOptions tunes BulkWrite.
type BulkOptions struct {
	// Mode is OpInsert, OpUpsertMerge or OpUpsertReplace; 0 means
	// OpUpsertReplace, which makes a repeated load harmless.
	Mode OpKind
	// Concurrency is the most partitions written at once; 0 means
	// DefaultConcurrency.
	Concurrency int
	// KeepWriteTokens writes the TkWrite each entity holds as it is — a
	// restore or a copy of rows written with write tokens — where a write
	// would otherwise remove it (or, on a table WithWriteTokens, start a
	// new chain), so that the chain read back is the one restored. A lost
	// reply is then settled by the stored content, as for a write without
	// a token. Restore only a table no token writer is writing: a chain
	// put back under a writer's lost reply can settle it wrongly.
	KeepWriteTokens bool
}

// Outcome is what happened to one entity of a bulk write.
type Outcome struct {
	PartitionKey, RowKey string
	ETag                 string // the new ETag, when written
	Err                  error  // nil when written
}

// BulkError reports a bulk write in which some entities were not written;
// the outcomes say which and why.
type BulkError struct {
	Failed, Total int
	First         error // the first entity's error, in input order
}

func (e *BulkError) Error() string {
	if e == nil {
		return "entity: bulk write: <nil>"
	}
	return fmt.Sprintf("entity: bulk write: %d of %d entities not written; first: %s", e.Failed, e.Total, inner(e.First))
}

func (e *BulkError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.First
}

// BulkWrite writes any number of entities that need not be written
// atomically as a whole: it groups them by PartitionKey, cuts each group into
// valid transactions (100 operations, 4 MiB, each entity once) and writes
// partitions in parallel, at most opts.Concurrency at a time, each
// partition's transactions in input order. Every transaction is atomic; the
// load as a whole is not.
//
// It returns one Outcome per entity, in input order. An entity that is
// invalid, or that makes its transaction fail, is reported and the rest of
// its transaction is submitted again without it, so one bad entity costs
// only itself. An outcome is never wrong: a refusal answered to a resent
// transaction (its first reply lost) is checked by reading back as Submit
// does, and a transaction found applied is reported written, each entity
// with its ETag read back (empty for an entity another writer changed
// since: that version is not this write's); a transaction whose outcome
// stays unknown (after azcore's
// retries of throttling and server errors, a transport failure, or a
// read-back that cannot tell) is reported for each of its entities with
// an error matching ErrOutcomeUnknown. When any entity has an error the
// error is a *BulkError.
//
// With a client built with ClientOptions every key the service allows can
// be written in every mode. Without (aztables' transactions cannot address
// them), an upsert whose keys hold ' goes out as a single-entity upsert
// (one request for that entity), and one whose PartitionKey is empty is
// refused for that entity, before any request, with a *ClientOptionsError
// (ErrNeedsClientOptions) that says to build the client with
// ClientOptions (TestTransactionsWithoutThePolicies).
func (t *Table[T]) BulkWrite(ctx context.Context, entities []T, opts BulkOptions) ([]Outcome, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	if err := t.okWrite(); err != nil {
		return nil, err
	}
	if t.guard != nil && (opts.Mode == OpUpsertMerge || opts.Mode == OpMerge) {
		return nil, t.guard.Refuse("BulkWrite with " + opts.Mode.String())
	}
	opts = opts.withDefaults()
	if m := opts.Mode; m != OpInsert && m != OpUpsertMerge && m != OpUpsertReplace {
		return nil, &ValidationError{Rule: "bulk mode", Limit: "insert, upsert-merge or upsert-replace", Value: m.String()}
	}
	t = t.bind(ctx, "", false)
	outcomes := make([]Outcome, len(entities))
	use := t.tokenUse()
	if opts.KeepWriteTokens {
		use = tokensKept
	}
	order, groups := t.encodeBulk(entities, opts.Mode, outcomes)
	runEach(order, opts.Concurrency, func(pk string) {
		var batched, singles []pending
		for _, p := range groups[pk] {
			if p.single {
				singles = append(singles, p)
			} else {
				batched = append(batched, p)
			}
		}
		for _, chunk := range chunkBulk(batched) {
			if err := ctx.Err(); err != nil {
				for _, p := range chunk {
					outcomes[p.index].Err = err
				}
				continue
			}
			t.writeChunk(ctx, chunk, outcomes, use)
		}
		for _, p := range singles {
			t.writeSingle(ctx, p, outcomes, use)
		}
	})
	return outcomes, bulkError(outcomes)
}

func (o BulkOptions) withDefaults() BulkOptions {
	if o.Mode == 0 {
		o.Mode = OpUpsertReplace
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	return o
}

// pending is one entity of a bulk write, encoded: its index in the input
// and its operation. single: it goes out as a single-entity upsert (a
// client without tablekit's policies cannot address its keys in a
// transaction).
type pending struct {
	index  int
	op     batchOp
	single bool
}

// encodeBulk encodes every entity first, so that invalid ones are reported
// (in outcomes) and never sent, and groups the rest by PartitionKey, in
// the order the partitions first appear.
func (t *Table[T]) encodeBulk(entities []T, mode OpKind, outcomes []Outcome) (order []string, groups map[string][]pending) {
	groups = map[string][]pending{}
	for i := range entities {
		rv := reflect.ValueOf(&entities[i]).Elem()
		pk, rk := t.shape.keyValues(rv)
		outcomes[i] = Outcome{PartitionKey: pk, RowKey: rk}
		body, err := t.shape.encode(nil, rv)
		if err != nil {
			outcomes[i].Err = err
			continue
		}
		op := batchOp{kind: mode, pk: pk, rk: rk, body: body}
		single := false
		if !t.conn.kit && op.checkAddressable("BulkWrite", t.name) != nil {
			// aztables' single-entity upserts escape quotes; nothing of
			// aztables addresses an empty PartitionKey.
			if err := t.conn.addressable("BulkWrite", t.name, mode, pk, rk); err != nil {
				outcomes[i].Err = err
				continue
			}
			single = true
		}
		if _, ok := groups[pk]; !ok {
			order = append(order, pk)
		}
		groups[pk] = append(groups[pk], pending{i, op, single})
	}
	return order, groups
}

// chunkBulk cuts one partition's entities into valid transactions: at
// most MaxBatchOperations operations and MaxBatchBytes, each entity once.
func chunkBulk(list []pending) [][]pending {
	var out [][]pending
	var cur []pending
	size := 0
	seen := map[string]bool{}
	for _, p := range list {
		opSize := p.op.size()
		if len(cur) == MaxBatchOperations || size+opSize > MaxBatchBytes || seen[p.op.rk] {
			out = append(out, cur)
			cur, size, seen = nil, 0, map[string]bool{}
		}
		cur = append(cur, p)
		size += opSize
		seen[p.op.rk] = true
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// writeChunk submits one chunk, dropping and reporting each failing entity
// and resubmitting the rest, until all are written or reported.
func (t *Table[T]) writeChunk(ctx context.Context, chunk []pending, outcomes []Outcome, use tokenUse) {
	for len(chunk) > 0 {
		ops := make([]batchOp, len(chunk))
		for i, p := range chunk {
			ops[i] = p.op
		}
		etags, err := t.conn.submitOps(ctx, t.name, ops, use)
		if err == nil {
			for i, p := range chunk {
				outcomes[p.index].ETag = etags[i]
			}
			return
		}
		var te *TransactionError
		if !errors.As(err, &te) || te.Index < 0 || te.Index >= len(chunk) {
			for _, p := range chunk { // the whole transaction failed
				outcomes[p.index].Err = err
			}
			return
		}
		outcomes[chunk[te.Index].index].Err = err
		chunk = append(chunk[:te.Index:te.Index], chunk[te.Index+1:]...)
	}
}

// writeSingle writes one entity of an upsert mode as a single-entity
// upsert, which a resend repeats harmlessly.
func (t *Table[T]) writeSingle(ctx context.Context, p pending, outcomes []Outcome, use tokenUse) {
	if err := ctx.Err(); err != nil {
		outcomes[p.index].Err = err
		return
	}
	w := &write{op: "BulkWrite", kind: wUpsert, pk: p.op.pk, rk: p.op.rk}
	if use != tokensKept {
		use = tokensStrip // an upsert carries no token
	}
	body, _ := w.withToken(nil, p.op.body, use)
	cctx, call := pipeline.WithCall(ctx)
	etag, err := t.conn.writeEntity(cctx, p.op.kind, p.op.pk, p.op.rk, "", body)
	applied, stored, err := t.conn.settle(ctx, call, t.name, w, wrapEntityErr("BulkWrite", t.name, p.op.pk, p.op.rk, err))
	if applied {
		etag = stored // the ETag read back, when the entity is still this write's
	}
	outcomes[p.index].ETag, outcomes[p.index].Err = etag, err
}

// runEach calls do for every item, at most workers at a time, and returns
// when all calls have.
func runEach[E any](items []E, workers int, do func(E)) {
	work := make(chan E)
	var wg sync.WaitGroup
	for range min(workers, len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				do(it)
			}
		}()
	}
	for _, it := range items {
		work <- it
	}
	close(work)
	wg.Wait()
}

// bulkError is the *BulkError of outcomes, nil when every entity was
// written.
func bulkError(outcomes []Outcome) error {
	var be *BulkError
	for i := range outcomes {
		if outcomes[i].Err != nil {
			if be == nil {
				be = &BulkError{Total: len(outcomes), First: outcomes[i].Err}
			}
			be.Failed++
		}
	}
	if be != nil {
		return be
	}
	return nil
}
