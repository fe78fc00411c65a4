package entity

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/internal/batch"
	"github.com/tablekit/tablekit/internal/protect"
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
// Merge, Replace and Delete are conditional on the entity's ETag when it has
// one, and otherwise on any version (If-Match: *): they never create an
// entity. Builder methods record the first error, returned by Validate and
// Submit; nothing is sent for a Batch with an error.
type Batch struct {
	ops []batchOp
	err error
}

type batchOp struct {
	kind   OpKind
	target reflect.Value // the entity, to write the new ETag back; invalid for DeleteKeys
	shape  shape
	pk, rk string
	etag   string
	body   []byte
}

// Insert adds an insert of e (a pointer to a tagged struct, or *DynamicEntity).
func (b *Batch) Insert(e any) *Batch { return b.add(OpInsert, e) }

// Merge adds a merge of e into the existing entity.
func (b *Batch) Merge(e any) *Batch { return b.add(OpMerge, e) }

// Replace adds a replace of the existing entity by e.
func (b *Batch) Replace(e any) *Batch { return b.add(OpReplace, e) }

// UpsertMerge adds an insert-or-merge of e.
func (b *Batch) UpsertMerge(e any) *Batch { return b.add(OpUpsertMerge, e) }

// UpsertReplace adds an insert-or-replace of e.
func (b *Batch) UpsertReplace(e any) *Batch { return b.add(OpUpsertReplace, e) }

// Delete adds a delete of e's entity, conditional on e's ETag if it has one.
func (b *Batch) Delete(e any) *Batch { return b.add(OpDelete, e) }

// DeleteKeys adds a delete by keys; etag "" or AnyETag deletes any version.
func (b *Batch) DeleteKeys(partitionKey, rowKey, etag string) *Batch {
	if etag == "" {
		etag = AnyETag
	}
	op := batchOp{kind: OpDelete, pk: partitionKey, rk: rowKey, etag: etag}
	if err := checkKey("PartitionKey", partitionKey); err != nil {
		b.fail(len(b.ops), err)
	} else if err := checkKey("RowKey", rowKey); err != nil {
		b.fail(len(b.ops), err)
	}
	b.ops = append(b.ops, op)
	return b
}

// Len is the number of operations.
func (b *Batch) Len() int { return len(b.ops) }

// Kinds lists the operations' kinds in order.
func (b *Batch) Kinds() []OpKind {
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

func (b *Batch) add(kind OpKind, e any) *Batch { return b.addWith(kind, e, nil) }

// addWith adds an operation whose entity is encoded through the protection
// scheme s, when set (see protect.go).
func (b *Batch) addWith(kind OpKind, e any, s protect.Scheme) *Batch {
	op := batchOp{kind: kind}
	if err := op.bind(e, s); err != nil {
		b.fail(len(b.ops), err)
	}
	switch kind {
	case OpMerge, OpReplace, OpDelete:
		if op.etag == "" {
			op.etag = AnyETag // an update must never turn into an insert
		}
	default:
		op.etag = ""
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
	}
	op.target, op.shape = rv, sh
	op.pk, op.rk = sh.keyValues(op.target)
	op.etag = sh.etagValue(op.target)
	if op.kind == OpDelete {
		return errors.Join(checkKey("PartitionKey", op.pk), checkKey("RowKey", op.rk))
	}
	op.body, err = sh.encode(nil, op.target)
	return err
}

// Validate checks the rules of an entity group transaction without sending
// anything: at least one and at most 100 operations, one PartitionKey, each
// RowKey once, at most 4 MiB, and every entity valid. The service (and
// Azurite, which accepts several of these violations) is never asked.
func (b *Batch) Validate() error {
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
			return &BatchError{Index: i, Err: &ValidationError{Property: "PartitionKey", Rule: "batch partition", Limit: "one PartitionKey per transaction: " + shorten(pk), Value: shorten(op.pk)}}
		}
		if first, dup := seen[op.rk]; dup {
			return &BatchError{Index: i, Err: &ValidationError{Property: "RowKey", Rule: "batch entity once", Limit: "each entity at most once per transaction (first at operation " + strconv.Itoa(first) + ")", Value: shorten(op.rk)}}
		}
		seen[op.rk] = i
		if err := op.checkAddressable(); err != nil {
			return &BatchError{Index: i, Err: err}
		}
		size += len(op.body) + batchOpOverhead + 2*(len(op.pk)+len(op.rk))
	}
	if size > MaxBatchBytes {
		return &BatchError{Index: -1, Err: &ValidationError{Rule: "batch payload", Limit: "4 MiB", Value: strconv.Itoa(size) + " bytes (estimated with framing)"}}
	}
	return nil
}

// checkAddressable refuses what aztables v1.4.1 cannot send in a
// transaction: every operation but an insert is addressed by a URL that it
// builds without escaping quotes in the keys, and refuses to build for an
// empty PartitionKey.
func (op *batchOp) checkAddressable() error {
	if op.kind == OpInsert {
		return nil
	}
	if op.pk == "" {
		return errEmptyPartitionKey("a transaction's " + op.kind.String())
	}
	for _, k := range [2][2]string{{"PartitionKey", op.pk}, {"RowKey", op.rk}} {
		if strings.ContainsRune(k[1], '\'') {
			return &ValidationError{Property: k[0], Rule: RuleKey, Limit: "no ' in the keys of a transaction's " + op.kind.String() + " (aztables v1.4.1 does not escape it); use the single-entity call", Value: shorten(k[1])}
		}
	}
	return nil
}

// ErrOutcomeUnknown reports a transaction whose reply could not be read:
// it may or may not have been applied.
var ErrOutcomeUnknown = errors.New("tablekit: transaction outcome unknown")

// BatchError reports a Batch that breaks a rule, found before sending.
// Index is the offending operation, or -1 for the batch as a whole.
type BatchError struct {
	Index int
	Err   error
}

func (e *BatchError) Error() string {
	if e.Index < 0 {
		return "tablekit: invalid batch: " + e.Err.Error()
	}
	return fmt.Sprintf("tablekit: invalid batch: operation %d: %v", e.Index, e.Err)
}

func (e *BatchError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrInvalid) true for rule violations.
func (e *BatchError) Is(target error) bool {
	return target == ErrInvalid && !errors.Is(e.Err, ErrInvalidType)
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
	if e.Index < 0 {
		return fmt.Sprintf("tablekit: transaction failed at an unknown operation: %d %s: %s", e.StatusCode, e.Code, e.Message)
	}
	return fmt.Sprintf("tablekit: transaction failed at operation %d (%s): %d %s: %s", e.Index, e.Kind, e.StatusCode, e.Code, e.Message)
}

func (e *TransactionError) Unwrap() error { return e.Err }

// Is maps the failing operation's code onto the sentinels.
func (e *TransactionError) Is(target error) bool { return matchesCode(target, e.Code, e.StatusCode) }

// Submit runs b as one entity group transaction on the client's table. On
// success it returns each operation's new ETag ("" for deletes) and writes
// it, with the Timestamp it encodes, back into each entity passed by
// pointer.
//
// The entities are encoded when they are added to b: changes made to them
// afterwards are not sent (but the new ETags are written into them).
//
// A *TransactionError means the service refused the transaction and nothing
// was written; it names the failing operation. Any other error leaves the
// outcome unknown — a transport failure, or a reply that could not be read
// (ErrOutcomeUnknown) — and the transaction may have been applied: retrying
// upserts is harmless, retried inserts may report ErrAlreadyExists.
func Submit(ctx context.Context, client *aztables.Client, b *Batch) ([]string, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return submitOps(ctx, client, b.ops)
}

// submitOps sends valid operations as one transaction and writes the new
// ETags back into the entities that have a target.
func submitOps(ctx context.Context, client *aztables.Client, ops []batchOp) ([]string, error) {
	actions := make([]aztables.TransactionAction, len(ops))
	for i, op := range ops {
		a := aztables.TransactionAction{ActionType: actionTypes[op.kind], Entity: op.body}
		if op.kind == OpDelete {
			a.Entity = keysBody(op.pk, op.rk)
		}
		if op.etag != "" {
			tag := azcore.ETag(op.etag)
			a.IfMatch = &tag
		}
		actions[i] = a
	}
	results, err := batch.Submit(ctx, client, actions, nil)
	if errors.Is(err, batch.ErrMalformed) {
		err = errors.Join(ErrOutcomeUnknown, err)
	}
	if err != nil {
		var te *batch.TransactionError
		if errors.As(err, &te) {
			out := &TransactionError{Index: te.Op.Index, StatusCode: te.Op.StatusCode, Code: te.Op.Code, Message: te.Op.Message, Err: err}
			if te.Op.Index >= 0 && te.Op.Index < len(ops) {
				out.Kind = ops[te.Op.Index].kind
			} else {
				out.Index = -1
			}
			return nil, out
		}
		return nil, err
	}
	etags := make([]string, len(ops))
	for i, op := range ops {
		if op.kind == OpDelete {
			continue
		}
		etags[i] = results[i].ETag
		if op.target.IsValid() {
			op.shape.setWritten(op.target, etags[i])
		}
	}
	return etags, nil
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

// Submit runs b as one transaction on this table; see the package function.
func (t *Table[T]) Submit(ctx context.Context, b *Batch) ([]string, error) {
	return Submit(ctx, t.client, b)
}
