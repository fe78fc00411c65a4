package eventual

import (
	"context"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/steps"
	"github.com/tablekit/tablekit/keys"
)

// The steps handlers compose. Each may run twice — the message is
// delivered again after a crash, or twice at once — and leaves the same
// state as running once; each is one storage operation where the service
// allows it.

// Insert adds e; an entity with the same keys counts as done (this step's
// own insert, run before or resent by azcore after a lost reply). Use it
// for entities whose content is fixed by their keys; Upsert otherwise.
func Insert[T any](ctx context.Context, t *entity.Table[T], e *T) error {
	return steps.Insert(ctx, t, e)
}

// Upsert writes e whatever is stored under its keys (InsertOrReplace).
func Upsert[T any](ctx context.Context, t *entity.Table[T], e *T) error {
	return steps.Upsert(ctx, t, e)
}

// Delete removes an entity whatever its version; a missing one counts as
// done.
func Delete[T any](ctx context.Context, t *entity.Table[T], partitionKey, rowKey string) error {
	return steps.Delete(ctx, t, partitionKey, rowKey)
}

// Move is the design guide's archive step (§6.3): read the entity from
// from, InsertOrReplace it into to (after edit, if not nil, changed the
// copy, keys included), and delete it from from on condition that it did
// not change since the read — a concurrent change restarts the round from
// the read, so the target ends with the latest version. A missing source
// counts as done. Three storage operations.
//
// Between the insert and the delete the entity is in both tables (there
// is no isolation); a crash there leaves it so until the message runs
// again.
func Move[T any](ctx context.Context, from, to *entity.Table[T], partitionKey, rowKey string, edit func(*T) error) error {
	return steps.Move(ctx, from, to, partitionKey, rowKey, edit, entity.RetryPolicy{})
}

// MarkerPrefix starts the RowKey of every marker entity Once writes:
// MarkerPrefix + keys.Compound(message id, step) (see "Wire format" in the
// package documentation). A scan of a table where handlers run Once can
// tell markers from its own rows by it; no other entity of such a
// partition may have a RowKey that starts with it.
const MarkerPrefix = "tablekit.once_"

// Once applies a change that is not idempotent (an increment, an append)
// exactly once per message and step name, in partition partitionKey of t:
// effect reads what it needs and adds the change's operations to b, which
// already holds the insert of a marker entity for (message ID, step); Once
// submits them as one entity group transaction. A copy of the message
// that runs later finds the marker — the transaction fails at the marker's
// insert and changes nothing. A change whose ETag condition fails (a
// concurrent writer) is retried from effect.
//
// ctx must be a handler's (ErrNoDelivery otherwise). applied reports that
// this call applied the change, also when azcore resent the transaction
// after a lost reply; false with a nil error means a copy of the message
// applied it before. Markers live Config.MarkerTTL; SweepMarkers deletes
// them after that. Two storage operations when effect reads one entity.
func Once[T any](ctx context.Context, t *entity.Table[T], partitionKey, step string, effect func(ctx context.Context, b *entity.Batch) error) (applied bool, err error) {
	d, ok := DeliveryFrom(ctx)
	if !ok {
		return false, ErrNoDelivery
	}
	return steps.Once(ctx, t, partitionKey, keys.Compound(d.ID, step), d.once, effect)
}

// SweepMarkers deletes the markers of Once that expired before now, in
// the given partitions or, with none, in the whole table (a table scan
// limited to the markers' RowKey range: a background job). It returns how
// many expired markers it found; all are gone when the error is nil.
func SweepMarkers[T any](ctx context.Context, t *entity.Table[T], now time.Time, partitions ...string) (int, error) {
	return steps.Sweep(ctx, t, now, steps.OnceConfig{}, partitions...)
}

// PutBlob writes data as the block blob name, replacing what is there.
func PutBlob(ctx context.Context, c *container.Client, name string, data []byte) error {
	return steps.PutBlob(ctx, c, name, data)
}

// PutBlobIfAbsent writes data as the block blob name unless one exists.
// created reports that the stored blob is this call's write, also after a
// lost reply (its metadata carries this call's attempt id); a write of
// this call that another writer replaced inside azcore's retry window
// reports false (internal/steps' TestPutBlobIfAbsentReplacedInTheRetryWindow).
func PutBlobIfAbsent(ctx context.Context, c *container.Client, name string, data []byte) (created bool, err error) {
	return steps.PutBlobIfAbsent(ctx, c, name, data)
}

// DeleteBlob deletes a blob; a missing one counts as done.
func DeleteBlob(ctx context.Context, c *container.Client, name string) error {
	return steps.DeleteBlob(ctx, c, name)
}
