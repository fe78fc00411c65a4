package entity

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity/internal/protect"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/batch"
	"github.com/tablekit/tablekit/internal/pipeline"
	"github.com/tablekit/tablekit/internal/wtoken"
)

// Limits of an entity group transaction (design guide §1).
const (
	MaxBatchOperations = 100
	MaxBatchBytes      = 4 << 20
	// batchOpOverhead bounds the multipart framing, request line and
	// headers each operation adds to its entity body.
	batchOpOverhead = 1024
)

// OpKind is the kind of one operation of a Batch.
type OpKind uint8

// The operations of an entity group transaction.
const (
	OpInsert        OpKind = iota + 1 // fails if the entity exists
	OpMerge                           // fails if it does not; conditional on its ETag
	OpReplace                         // fails if it does not; conditional on its ETag
	OpUpsertMerge                     // InsertOrMerge
	OpUpsertReplace                   // InsertOrReplace
	OpDelete                          // fails if it does not exist; conditional on its ETag
)

var opNames = [...]string{OpInsert: "insert", OpMerge: "merge", OpReplace: "replace", OpUpsertMerge: "upsert-merge", OpUpsertReplace: "upsert-replace", OpDelete: "delete"}

func (k OpKind) String() string {
	if int(k) < len(opNames) && opNames[k] != "" {
		return opNames[k]
	}
	return "OpKind(" + strconv.Itoa(int(k)) + ")"
}

// Batch is an entity group transaction: at most 100 operations on distinct
// entities of one partition of one table, applied all or nothing and billed
// as one transaction (design guide §1, §3). The entities may be of different
// Go types (structs with `table` tags, or *DynamicEntity), which is how the
// guide keeps several entity types consistent in one partition.
//
// A Batch is made by the table that runs it (Table.NewBatch) and run by
// that table's Submit. Its methods mirror the table's single-entity writes,
// with the same ETag rules: Update and DeleteEntity are conditional on the
// entity's ETag and refuse an entity without one (ErrNoETag); UpdateAny,
// Upsert and Delete with AnyETag are unconditional. Builder methods record
// the first error, returned by Validate and Submit; nothing is sent for a
// Batch with an error.
type Batch struct {
	table string // the name of the table that made it
	made  bool   // made by Table.NewBatch
	ops   []batchOp
	err   error
	// guard and scheme: made by a protected table, whose scheme encodes
	// every entity added (see guard.go).
	guard  protect.Guard
	scheme protect.Scheme
}

type batchOp struct {
	kind   OpKind
	target reflect.Value // the entity, to write the new ETag back; invalid for Delete by keys
	shape  shape
	pk, rk string
	etag   string
	body   []byte
	sealed bool // body encoded through a protection scheme
}

// NewBatch returns an empty entity group transaction on t's table, to be
// run by t.Submit (or the Submit of another view of the same table).
//
// A protected table's batch (Table.Protected) encrypts each entity as it is
// added, as that table's Insert would, under a scheme bound to
// context.Background() (a remote key-encryption key is asked without the
// Submit's deadline: give Config.ContentKeyWrites of package crypt a
// value above 1 so that few adds ask it). A merge is taken only when it
// carries no property but the write token — a fence, which makes the
// transaction conditional on another entity's ETag and leaves its
// protected properties as they are; any other merge is recorded as the
// error of package crypt that refuses it.
func (t *Table[T]) NewBatch() *Batch {
	if err := t.ok(); err != nil {
		return &Batch{err: &BatchError{Index: -1, Err: err}}
	}
	b := &Batch{table: t.name, made: true}
	if t.guard != nil {
		b.guard, b.scheme = t.guard, t.guard.Bind(context.Background(), "", false)
	}
	return b
}

// View is any *Table[T]: Batch.Through takes a view of the batch's table
// whatever its entity type. Only this package's tables implement it.
type View interface {
	viewOf() (name string, g protect.Guard)
}

func (t *Table[T]) viewOf() (string, protect.Guard) {
	if t == nil {
		return "", nil
	}
	return t.name, t.guard
}

// Through makes the entities added to b from now on encoded through
// view's protection (none for a view without): view is a table of the
// batch's table, typically a view of another protected table of it
// (package crypt's Table.Entity of another entity type, or ViewAs of one),
// so that one transaction writes entities of several types each encrypted
// as its own type says — a pattern writing its property bags of two types
// in one transaction. A view of another table is recorded as b's error.
// It returns b.
func (b *Batch) Through(view View) *Batch {
	if b == nil {
		return nilBatch()
	}
	if view == nil {
		b.fail(len(b.ops), &ValidationError{Rule: "batch", Limit: "a view of the batch's table", Value: "nil"})
		return b
	}
	name, g := view.viewOf()
	if name != b.table {
		b.fail(len(b.ops), &ValidationError{Rule: "batch", Limit: "a view of the batch's table " + shorten(b.table), Value: shorten(name)})
		return b
	}
	b.guard, b.scheme = g, nil
	if g != nil {
		b.scheme = g.Bind(context.Background(), "", false)
	}
	return b
}

// etagRule is how an operation's If-Match is chosen.
type etagRule uint8

const (
	etagNone etagRule = iota // inserts and upserts carry none
	etagOwn                  // the entity's own ETag; none is ErrNoETag
	etagAny                  // AnyETag
)

// Insert adds an insert of e (a pointer to a tagged struct, or
// *DynamicEntity); it fails if the entity exists, as Table.Insert.
func (b *Batch) Insert(e any) *Batch { return b.add(OpInsert, etagNone, e, nil) }

// Update adds a merge or replace of the existing entity by e, on condition
// that its ETag is still e's, as Table.Update: an e without an ETag is
// recorded as ErrNoETag (UpdateAny is the unconditional form).
func (b *Batch) Update(e any, mode UpdateMode) *Batch {
	return b.addMode(mode, OpMerge, OpReplace, etagOwn, e)
}

// UpdateAny adds a merge or replace of the existing entity by e, whatever
// its ETag, as Table.UpdateAny.
func (b *Batch) UpdateAny(e any, mode UpdateMode) *Batch {
	return b.addMode(mode, OpMerge, OpReplace, etagAny, e)
}

// Upsert adds an insert of e or, when the entity exists, a merge or
// replace whatever its ETag, as Table.Upsert.
func (b *Batch) Upsert(e any, mode UpdateMode) *Batch {
	return b.addMode(mode, OpUpsertMerge, OpUpsertReplace, etagNone, e)
}

// Delete adds a delete of the entity with these keys on condition that
// its ETag is still etag, as Table.Delete: AnyETag deletes any version, ""
// is recorded as ErrNoETag.
func (b *Batch) Delete(partitionKey, rowKey, etag string) *Batch {
	if b == nil {
		return nilBatch()
	}
	op := batchOp{kind: OpDelete, pk: partitionKey, rk: rowKey, etag: etag}
	if err := checkKey("PartitionKey", partitionKey); err != nil {
		b.failOp(len(b.ops), &op, err)
	} else if err := checkKey("RowKey", rowKey); err != nil {
		b.failOp(len(b.ops), &op, err)
	} else if etag == "" {
		b.fail(len(b.ops), &ETagError{Op: OpDelete.String(), Table: b.table, PartitionKey: partitionKey, RowKey: rowKey})
	}
	b.ops = append(b.ops, op)
	return b
}

// DeleteEntity adds a delete of e's entity on condition that its ETag is
// still e's, as Table.DeleteEntity: an e without an ETag is recorded as
// ErrNoETag.
func (b *Batch) DeleteEntity(e any) *Batch { return b.add(OpDelete, etagOwn, e, nil) }

// Len is the number of operations.
func (b *Batch) Len() int {
	if b == nil {
		return 0
	}
	return len(b.ops)
}

// Kinds lists the operations' kinds in order.
func (b *Batch) Kinds() []OpKind {
	if b == nil {
		return nil
	}
	out := make([]OpKind, len(b.ops))
	for i, op := range b.ops {
		out[i] = op.kind
	}
	return out
}

func (b *Batch) fail(index int, err error) {
	if b.err == nil {
		b.err = &BatchError{Index: index, Err: err}
	}
}

// failOp is fail for an operation whose keys were read: the error names
// them, so that a caller learns which of many entities it was.
func (b *Batch) failOp(index int, op *batchOp, err error) {
	if b.err == nil {
		b.err = op.batchError(index, err)
	}
}

// batchError is a BatchError about op, at index, naming its keys.
func (op *batchOp) batchError(index int, err error) *BatchError {
	return &BatchError{Index: index, PartitionKey: op.pk, RowKey: op.rk, keyed: true, Err: err}
}

// nilBatch is what a builder method of a nil *Batch returns: a Batch that
// Validate and Submit refuse.
func nilBatch() *Batch { return &Batch{err: errNilBatch} }

// addMode adds the operation of kind merge or replace, as mode says.
func (b *Batch) addMode(mode UpdateMode, merge, replace OpKind, rule etagRule, e any) *Batch {
	kind := replace
	if mode == Merge {
		kind = merge
	}
	if _, err := mode.sdk(); err != nil {
		if b == nil {
			return nilBatch()
		}
		b.fail(len(b.ops), err)
	}
	return b.add(kind, rule, e, nil)
}

// add adds an operation whose entity is encoded through the protection
// scheme s, when set (see protect.go).
func (b *Batch) add(kind OpKind, rule etagRule, e any, s protect.Scheme) *Batch {
	if b == nil {
		return nilBatch()
	}
	op := batchOp{kind: kind}
	if s == nil {
		s = b.scheme
	}
	switch {
	case b.guard == nil:
	case kind == OpMerge:
		s = fenceScheme{b.guard} // a merge of nothing checks an ETag
	case kind == OpUpsertMerge:
		b.fail(len(b.ops), b.guard.Refuse("a transaction's "+kind.String()))
	}
	if err := op.bind(e, s); err != nil {
		if op.shape != nil { // the keys were read: name them
			b.failOp(len(b.ops), &op, err)
		} else {
			b.fail(len(b.ops), err)
		}
	}
	switch rule {
	case etagNone:
		op.etag = ""
	case etagAny:
		op.etag = AnyETag
	case etagOwn:
		if op.etag == "" && op.shape != nil {
			b.fail(len(b.ops), &ETagError{Op: kind.String(), Table: b.table, PartitionKey: op.pk, RowKey: op.rk})
		}
	}
	b.ops = append(b.ops, op)
	return b
}

// bind reads e's keys and ETag and, unless op deletes, encodes e.
func (op *batchOp) bind(e any, s protect.Scheme) error {
	rv, sh, err := entityValue(e)
	if err != nil {
		return err
	}
	if s != nil {
		sh = protectedShape{sh, s}
		op.sealed = true
	}
	op.target, op.shape = rv, sh
	op.pk, op.rk = sh.keyValues(op.target)
	op.etag = sh.etagValue(op.target)
	if op.kind == OpDelete {
		return join(checkKey("PartitionKey", op.pk), checkKey("RowKey", op.rk))
	}
	op.body, err = sh.encode(nil, op.target)
	return err
}

// Validate checks the rules of an entity group transaction without sending
// anything: at least one and at most 100 operations, one PartitionKey, each
// RowKey once, at most 4 MiB, and every entity valid. The service (and
// Azurite, which accepts several of these violations) is never asked.
func (b *Batch) Validate() error {
	if b == nil {
		return errNilBatch
	}
	if b.err != nil {
		return b.err
	}
	if len(b.ops) == 0 {
		return &BatchError{Index: -1, Err: &ValidationError{Rule: "batch size", Limit: "1 to 100 operations", Value: "0"}}
	}
	if len(b.ops) > MaxBatchOperations {
		return &BatchError{Index: MaxBatchOperations, Err: &ValidationError{Rule: "batch size", Limit: "1 to 100 operations", Value: strconv.Itoa(len(b.ops))}}
	}
	pk := b.ops[0].pk
	seen := make(map[string]int, len(b.ops))
	size := 0
	for i, op := range b.ops {
		if op.pk != pk {
			return op.batchError(i, &ValidationError{Property: "PartitionKey", Rule: "batch partition", Limit: "one PartitionKey per transaction: " + shorten(pk), Value: shorten(op.pk)})
		}
		if first, dup := seen[op.rk]; dup {
			return op.batchError(i, &ValidationError{Property: "RowKey", Rule: "batch entity once", Limit: "each entity at most once per transaction (first at operation " + strconv.Itoa(first) + ")", Value: shorten(op.rk)})
		}
		seen[op.rk] = i
		size += op.size()
	}
	if size > MaxBatchBytes {
		return &BatchError{Index: -1, Err: &ValidationError{Rule: "batch payload", Limit: "4 MiB", Value: strconv.Itoa(size) + " bytes (estimated with framing)"}}
	}
	return nil
}

// size is the operation's share of a transaction's payload, as Validate
// and BulkWrite's chunks count it against MaxBatchBytes: its body, the
// framing and headers, and its keys, twice (in the URL and the body).
func (op *batchOp) size() int {
	return len(op.body) + batchOpOverhead + 2*(len(op.pk)+len(op.rk))
}

// checkAddressable refuses what aztables v1.4.1 cannot send in a
// transaction, for a client without tablekit's policies (which sends its
// own $batch): every operation but an insert is addressed by a URL that
// aztables builds without escaping quotes in the keys, and refuses to build
// for an empty PartitionKey. The *ClientOptionsError says what to do.
func (op *batchOp) checkAddressable(call, table string) error {
	if op.kind == OpInsert {
		return nil
	}
	reason := ""
	switch {
	case op.pk == "":
		reason = "aztables cannot address an empty PartitionKey in a transaction's " + op.kind.String()
	case strings.ContainsRune(op.pk, '\'') || strings.ContainsRune(op.rk, '\''):
		reason = "aztables v1.4.1 does not escape ' in the keys of a transaction's " + op.kind.String()
	default:
		return nil
	}
	return &ClientOptionsError{Op: call, Table: table, PartitionKey: op.pk, RowKey: op.rk, Reason: reason}
}

// BatchError reports a Batch that breaks a rule, found before sending: it
// matches ErrInvalid, and unwraps to the cause. Index is the offending operation, or -1 for the batch as a whole; for an
// operation whose entity's keys could be read, PartitionKey and RowKey name
// it, and so does the message.
type BatchError struct {
	Index                int
	PartitionKey, RowKey string
	keyed                bool // PartitionKey and RowKey were read
	Err                  error
}

func (e *BatchError) Error() string {
	if e == nil {
		return "entity: invalid batch: <nil>"
	}
	if e.Index < 0 {
		return "entity: invalid batch: " + inner(e.Err)
	}
	if e.keyed {
		return fmt.Sprintf("entity: invalid batch: operation %d (%s): %s", e.Index, argerr.EntityKeys(e.PartitionKey, e.RowKey), inner(e.Err))
	}
	return fmt.Sprintf("entity: invalid batch: operation %d: %s", e.Index, inner(e.Err))
}

func (e *BatchError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// Is makes errors.Is(err, ErrInvalid) true: nothing was sent. The cause
// keeps its own sentinel (ErrInvalidType for an unmappable type, ErrNoETag
// for a conditional write without an ETag), as from Table's methods.
func (e *BatchError) Is(target error) bool {
	return e != nil && target == ErrInvalid
}

// TransactionError reports a transaction the service refused: nothing was
// written. Index is the operation that failed (-1 when the service did not
// say), with the service's error code and message. It matches ErrNotFound,
// ErrAlreadyExists and ErrPreconditionFailed by code, and unwraps to the
// *azcore.ResponseError.
type TransactionError struct {
	Index      int
	Kind       OpKind // the failing operation's kind, when Index is known
	StatusCode int
	Code       string
	Message    string
	Err        error
}

func (e *TransactionError) Error() string {
	if e == nil {
		return "entity: transaction failed: <nil>"
	}
	if e.Index < 0 {
		return fmt.Sprintf("entity: transaction failed at an unknown operation: %d %s: %s", e.StatusCode, e.Code, oneLine(e.Message))
	}
	return fmt.Sprintf("entity: transaction failed at operation %d (%s): %d %s: %s", e.Index, e.Kind, e.StatusCode, e.Code, oneLine(e.Message))
}

func (e *TransactionError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// Is maps the failing operation's code onto the sentinels.
func (e *TransactionError) Is(target error) bool {
	return e != nil && matchesCode(target, e.Code, e.StatusCode)
}

var errNilBatch = &BatchError{Index: -1, Err: &ValidationError{Rule: "batch", Limit: "a non-nil *Batch", Value: "nil"}}

// errUnmade refuses a Batch that no Table made.
var errUnmade = &BatchError{Index: -1, Err: &ValidationError{Rule: "batch", Limit: "a *Batch made by Table.NewBatch", Value: "a Batch made otherwise"}}

// submitOps sends valid operations as one transaction and writes the new
// ETags back into the entities that have a target. With tokens, every
// insert and conditional operation carries the transaction's write token.
func (c *conn) submitOps(ctx context.Context, name string, ops []batchOp, use tokenUse) ([]string, error) {
	writes := make([]write, len(ops))
	bodies := make([][]byte, len(ops))
	var tok string
	if use == tokensNew {
		tok = wtoken.New()
	}
	for i := range ops {
		op := &ops[i]
		w := &writes[i]
		*w = write{op: "Submit", pk: op.pk, rk: op.rk, merge: op.kind == OpMerge, delete: op.kind == OpDelete, token: tok}
		switch op.kind {
		case OpInsert:
			w.kind = wInsert
		case OpUpsertMerge, OpUpsertReplace:
			w.kind = wUpsert
		default:
			w.kind = wConditional
			if op.etag == AnyETag {
				w.kind = wAny
			} else if op.shape != nil {
				w.base = baseOf(op.shape, op.body, op.etag)
			}
		}
		if op.kind != OpDelete {
			bodies[i], _ = w.withToken(nil, op.body, use)
			w.sent = bodies[i]
		}
		if w.kind != wInsert && w.kind != wConditional || w.delete {
			w.token = "" // carries none
		}
	}

	var results []batch.OpResult
	var call *pipeline.Call
	var err error
	if c.kit {
		results, call, err = c.sendBatch(ctx, ops, bodies)
	} else {
		results, err = c.submitSDK(ctx, name, ops, bodies)
	}
	etags := make([]string, len(ops))
	if err != nil {
		if err := c.settleTxn(ctx, call, name, ops, writes, err); err != nil {
			return nil, err
		}
		// Applied, and the reply that held the ETags lost: each entity
		// still stored exactly as written has its ETag read back.
		etags = c.storedETags(ctx, writes)
	} else {
		for i, op := range ops {
			if op.kind != OpDelete {
				etags[i] = results[i].ETag
			}
		}
	}
	for i, op := range ops {
		if op.kind != OpDelete && op.target.IsValid() {
			op.shape.setWritten(op.target, etags[i])
		}
	}
	return etags, nil
}

// storedETags reads back the entities of an applied transaction whose
// reply was lost, at most DefaultConcurrency at a time, and returns the
// stored ETag of each one still stored exactly as written ("" for the
// others, deletes, and any read that fails).
func (c *conn) storedETags(ctx context.Context, writes []write) []string {
	etags := make([]string, len(writes))
	idx := make([]int, 0, len(writes))
	for i := range writes {
		if !writes[i].delete {
			idx = append(idx, i)
		}
	}
	runEach(idx, DefaultConcurrency, func(i int) {
		etags[i] = c.ownETag(ctx, &writes[i])
	})
	return etags
}

// settleTxn turns a failed transaction's error into a *TransactionError
// (certain), nil (the read-back showed it was applied) or an
// *OutcomeError.
func (c *conn) settleTxn(ctx context.Context, call *pipeline.Call, name string, ops []batchOp, writes []write, err error) error {
	unknown := func(last error) error {
		return &OutcomeError{Op: "Submit", Table: name, PartitionKey: ops[0].pk, Last: last, scope: scopePartition}
	}
	var te *batch.TransactionError
	if !errors.As(err, &te) {
		var be *BatchError
		if errors.As(err, &be) || (call != nil && call.Tries() == 0 && !errors.Is(err, batch.ErrMalformed)) {
			return err // refused before sending, or nothing sent
		}
		if call != nil && !call.Reached() && noAnswer(err) {
			return &ServiceError{Op: "Submit", Table: name, Err: err} // no try reached the service
		}
		return unknown(err)
	}
	out := &TransactionError{Index: te.Op.Index, StatusCode: te.Op.StatusCode, Code: te.Op.Code, Message: te.Op.Message, Err: err}
	if te.Op.Index >= 0 && te.Op.Index < len(ops) {
		out.Kind = ops[te.Op.Index].kind
	} else {
		out.Index = -1
	}
	if call == nil || !call.Resent() || !isConflict(te.Op.StatusCode) || errors.Is(out, ErrTableNotFound) {
		return out
	}
	// Entities that can tell whether the transaction was applied (it is
	// atomic: one entity's verdict is the transaction's): those with the
	// write token, the failing operation's, the inserts', in that order,
	// at most maxSettleReads of them, so that another writer's change to
	// one entity in the retry window leaves the others to tell.
	var tried []int
	pick := func(i int) bool {
		if i < 0 || i >= len(ops) || slices.Contains(tried, i) || len(tried) == maxSettleReads {
			return false
		}
		tried = append(tried, i)
		switch v, _ := c.judge(ctx, call, &writes[i], i == out.Index); v {
		case wtoken.Applied:
			err = nil
			return true
		case wtoken.NotApplied:
			err = out
			return true
		}
		return false
	}
	err = unknown(out)
	candidates := []int{}
	for i := range writes {
		if writes[i].token != "" {
			candidates = append(candidates, i)
		}
	}
	candidates = append(candidates, out.Index)
	for i := range writes {
		if writes[i].kind == wInsert {
			candidates = append(candidates, i)
		}
	}
	for _, i := range candidates {
		if pick(i) {
			break
		}
	}
	return err
}

// maxSettleReads bounds the entities read back to settle a transaction.
const maxSettleReads = 4

// submitSDK sends the operations through aztables' SubmitTransaction, for
// a client without tablekit's policies.
func (c *conn) submitSDK(ctx context.Context, name string, ops []batchOp, bodies [][]byte) ([]batch.OpResult, error) {
	actions := make([]aztables.TransactionAction, len(ops))
	for i, op := range ops {
		if err := op.checkAddressable("Submit", name); err != nil {
			return nil, &BatchError{Index: i, Err: err}
		}
		a := aztables.TransactionAction{ActionType: actionTypes[op.kind], Entity: bodies[i]}
		if op.kind == OpDelete {
			a.Entity = keysBody(op.pk, op.rk)
		}
		if op.etag != "" {
			tag := azcore.ETag(op.etag)
			a.IfMatch = &tag
		}
		actions[i] = a
	}
	return batch.Submit(ctx, c.client, actions, nil)
}

// sendBatch sends the operations as tablekit's own $batch request on the
// client's pipeline, with SubmitTransaction as the carrier (so that the
// request's URL, headers, authorization and tracing span are aztables').
func (c *conn) sendBatch(ctx context.Context, ops []batchOp, bodies [][]byte) ([]batch.OpResult, *pipeline.Call, error) {
	bops := make([]batch.Operation, len(ops))
	for i, op := range ops {
		bops[i] = batch.Operation{Method: methods[op.kind], PartitionKey: op.pk, RowKey: op.rk, IfMatch: op.etag, Body: bodies[i]}
	}
	bp := bufPool.Get().(*[]byte)
	body, contentType := batch.Request((*bp)[:0], c.endpoint, c.table, uuid.NewString(), bops)
	defer func() {
		if cap(body) <= 1<<20 {
			*bp = body[:0]
			bufPool.Put(bp)
		}
	}()
	ctx, call := pipeline.WithCall(ctx)
	tk := &pipeline.Takeover{Body: body, ContentType: contentType, CarrierStatus: http.StatusAccepted, CarrierBody: carrierReply}
	resp, err := pipeline.Send(ctx, tk, func(ctx context.Context) { carry(ctx, c.client) })
	if err != nil {
		return nil, call, err
	}
	payload, err := runtime.Payload(resp)
	if err != nil {
		return nil, call, err
	}
	results, err := batch.Reply(resp, payload, len(ops), nil)
	return results, call, err
}

// methods maps each OpKind to its HTTP method in a changeset; the If-Match
// header (an ETag, "*", or none for the upserts) makes the rest.
var methods = [...]string{
	OpInsert:        batch.MethodInsert,
	OpMerge:         batch.MethodMerge,
	OpReplace:       batch.MethodReplace,
	OpUpsertMerge:   batch.MethodMerge,
	OpUpsertReplace: batch.MethodReplace,
	OpDelete:        batch.MethodDelete,
}

// carrierAction is the carrier's own operation, never sent: the per-call
// policy replaces the request's body.
var carrierAction = []aztables.TransactionAction{{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p","RowKey":"r"}`)}}

// carrierReply is a $batch reply that SubmitTransaction v1.4.1 reads as a
// success without reading any operation.
var carrierReply = []byte("--batchresponse_tk\r\nContent-Type: multipart/mixed; boundary=changesetresponse_tk\r\n\r\n--changesetresponse_tk--\r\n\r\n--batchresponse_tk--\r\n")

// carry runs the carrier; a panic in it (aztables slices replies without
// checking their length) must not escape: the real answer is tablekit's.
func carry(ctx context.Context, client *aztables.Client) {
	defer func() { _ = recover() }()
	_, _ = client.SubmitTransaction(ctx, carrierAction, nil)
}

// actionTypes maps each OpKind to aztables' name for it. Note the SDK's
// names: its "update" never inserts, its "insert-merge" is an upsert.
var actionTypes = [...]aztables.TransactionType{
	OpInsert:        aztables.TransactionTypeAdd,
	OpMerge:         aztables.TransactionTypeUpdateMerge,
	OpReplace:       aztables.TransactionTypeUpdateReplace,
	OpUpsertMerge:   aztables.TransactionTypeInsertMerge,
	OpUpsertReplace: aztables.TransactionTypeInsertReplace,
	OpDelete:        aztables.TransactionTypeDelete,
}

// keysBody is the body aztables needs to address a delete.
func keysBody(pk, rk string) []byte {
	b := append([]byte(`{"PartitionKey":`), appendJSONString(nil, pk)...)
	b = append(b, `,"RowKey":`...)
	b = appendJSONString(b, rk)
	return append(b, '}')
}

// Submit runs b, made by this table's NewBatch (or another view's of the
// same table), as one entity group transaction. On success it returns
// each operation's new ETag ("" for deletes) and writes it, with the
// Timestamp it encodes, back into each entity passed by pointer. With
// WithWriteTokens, its inserts and conditional operations carry the
// transaction's write token.
//
// The entities are encoded when they are added to b: changes made to them
// afterwards are not sent (but the new ETags are written into them).
//
// With a client built with ClientOptions the transaction goes out as
// tablekit's own $batch request on the client's pipeline, which addresses
// every key the service allows. A *TransactionError means the service
// refused the transaction and nothing was written; it names the failing
// operation. When that refusal answers a resent request (the reply to an
// earlier try was lost), Submit first reads back the entities that can
// tell (see WithWriteTokens): if the transaction was applied it returns
// success, with each entity's ETag read back (and written back into it)
// when the entity is still stored exactly as the transaction wrote it, and
// "" for one that another writer changed since (read it again before a
// conditional write); if it cannot tell, the error matches
// ErrOutcomeUnknown (TestLostReplyReportsStoredETags). Any other failure after the request
// may have left (a transport failure, an unreadable reply) is
// ErrOutcomeUnknown too: retrying upserts is harmless; retried inserts may
// report ErrAlreadyExists.
//
// A client built without ClientOptions goes through aztables'
// SubmitTransaction: operations it cannot address (a merge, replace,
// upsert or delete whose PartitionKey is empty or whose keys hold ') are
// refused before sending with a *BatchError wrapping a
// *ClientOptionsError (ErrNeedsClientOptions) that says what to do, and a
// refusal is reported as answered.
func (t *Table[T]) Submit(ctx context.Context, b *Batch) ([]string, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	if err := t.okWrite(); err != nil {
		return nil, err
	}
	if b == nil {
		return nil, errNilBatch
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if !b.made {
		return nil, errUnmade
	}
	if b.table != t.name {
		return nil, &BatchError{Index: -1, Err: &ValidationError{Rule: "batch", Limit: "run by the table that made it: " + shorten(b.table), Value: shorten(t.name)}}
	}
	if t.guard != nil {
		// Every entity a protected table writes is encrypted: one added to
		// a batch of a view without the protection would go out in clear.
		for i := range b.ops {
			if op := &b.ops[i]; op.kind != OpDelete && !op.sealed {
				return nil, op.batchError(i, &ValidationError{Rule: "batch", Limit: "entities encoded by the protected table that runs the transaction (make the batch with its NewBatch, or a view's of ViewAs)", Value: "an entity added to a batch of a table without protection"})
			}
		}
	}
	return t.conn.submitOps(ctx, t.name, b.ops, t.tokenUse())
}
