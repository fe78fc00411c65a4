package entity

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
)

// BulkOptions tunes BulkWrite.
type BulkOptions struct {
	// Mode is OpInsert, OpUpsertMerge or OpUpsertReplace; 0 means
	// OpUpsertReplace, which makes a repeated load harmless.
	Mode OpKind
	// Concurrency is the most partitions written at once; 0 means 4.
	Concurrency int
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
		return "tablekit: bulk write: <nil>"
	}
	return fmt.Sprintf("tablekit: bulk write: %d of %d entities not written; first: %v", e.Failed, e.Total, e.First)
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
// does, and a transaction found applied is reported written, with an
// empty ETag; a transaction whose outcome stays unknown (after azcore's
// retries of throttling and server errors, a transport failure, or a
// read-back that cannot tell) is reported for each of its entities with
// an error matching ErrOutcomeUnknown. When any entity has an error the
// error is a *BulkError.
//
// With a client built with ClientOptions every key the service allows can
// be written; without, an empty PartitionKey or a ' in a key is refused
// per entity in the upsert modes (aztables cannot address them).
func (t *Table[T]) BulkWrite(ctx context.Context, entities []T, opts BulkOptions) ([]Outcome, error) {
	if err := t.okWrite(); err != nil {
		return nil, err
	}
	mode := opts.Mode
	if mode == 0 {
		mode = OpUpsertReplace
	}
	if mode != OpInsert && mode != OpUpsertMerge && mode != OpUpsertReplace {
		return nil, &ValidationError{Rule: "bulk mode", Limit: "insert, upsert-merge or upsert-replace", Value: mode.String()}
	}
	workers := opts.Concurrency
	if workers <= 0 {
		workers = 4
	}
	outcomes := make([]Outcome, len(entities))

	// Encode everything first: invalid entities are reported, never sent.
	type pending struct {
		index int
		op    batchOp
	}
	var order []string
	groups := map[string][]pending{}
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
		if !t.conn.kit {
			if err := op.checkAddressable(); err != nil {
				outcomes[i].Err = err
				continue
			}
		}
		if _, ok := groups[pk]; !ok {
			order = append(order, pk)
		}
		groups[pk] = append(groups[pk], pending{i, op})
	}

	// chunks cuts one partition's entities into valid transactions.
	chunks := func(list []pending) [][]pending {
		var out [][]pending
		var cur []pending
		size := 0
		seen := map[string]bool{}
		for _, p := range list {
			opSize := len(p.op.body) + batchOpOverhead + 2*(len(p.op.pk)+len(p.op.rk))
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

	// write submits one chunk, dropping and reporting each failing entity
	// and resubmitting the rest, until all are written or reported.
	write := func(chunk []pending) {
		for len(chunk) > 0 {
			ops := make([]batchOp, len(chunk))
			for i, p := range chunk {
				ops[i] = p.op
			}
			etags, err := t.conn.submitOps(ctx, t.name, ops, t.tokens)
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

	work := make(chan string)
	var wg sync.WaitGroup
	for range min(workers, len(order)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pk := range work {
				for _, c := range chunks(groups[pk]) {
					if ctx.Err() != nil {
						for _, p := range c {
							outcomes[p.index].Err = ctx.Err()
						}
						continue
					}
					write(c)
				}
			}
		}()
	}
	for _, pk := range order {
		work <- pk
	}
	close(work)
	wg.Wait()

	var be *BulkError
	for i := range outcomes {
		if outcomes[i].Err != nil {
			if be == nil {
				be = &BulkError{Total: len(entities), First: outcomes[i].Err}
			}
			be.Failed++
		}
	}
	if be != nil {
		return outcomes, be
	}
	return outcomes, nil
}
