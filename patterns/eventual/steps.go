package eventual

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/errline"
	"github.com/tablekit/tablekit/keys"
)

// The steps handlers compose (design guide §6.3, the eventually consistent
// transactions pattern, and the patterns built on it: §6.2, §6.4, §6.5,
// §6.11). Each may run twice — the message is delivered again after a
// crash, or twice at once, or azcore resent a request whose reply was
// lost — and leaves the same state as running once; each is one storage
// operation where the service allows it. Steps report what they did only
// where a lost reply cannot make that report wrong: Once and
// PutBlobIfAbsent check their attempt id; deletes report only that the
// thing is gone.

// settleAttempts bounds the repeats of a step whose outcome was unknown
// (entity.ErrOutcomeUnknown: a reply was lost and reading back could not
// tell). A repeat settles it: the step is idempotent.
const settleAttempts = 3

// settle runs step until its outcome is known, at most settleAttempts
// times.
func settle(step func() error) error {
	var err error
	for range settleAttempts {
		if err = step(); !errors.Is(err, entity.ErrOutcomeUnknown) {
			return err
		}
	}
	return err
}

// errRound makes entity.RetryPolicy.Retry start a round again from its read.
var errRound = fmt.Errorf("eventual: the outcome is unknown, reading again: %w", entity.ErrPreconditionFailed)

// Insert adds e; an entity with the same keys counts as done (this step's
// own insert, run before or resent by azcore after a lost reply). Use it
// for entities whose content is fixed by their keys; Upsert otherwise.
func Insert[T any](ctx context.Context, t *entity.Table[T], e *T) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if t == nil {
		return nilArg("table")
	}
	err := settle(func() error { return t.Insert(ctx, e) })
	if errors.Is(err, entity.ErrAlreadyExists) {
		return nil
	}
	return err
}

// Upsert writes e whatever is stored under its keys (InsertOrReplace).
func Upsert[T any](ctx context.Context, t *entity.Table[T], e *T) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if t == nil {
		return nilArg("table")
	}
	return t.Upsert(ctx, e, entity.Replace)
}

// Delete removes an entity whatever its version; a missing one counts as
// done. A missing table is still an error.
func Delete[T any](ctx context.Context, t *entity.Table[T], partitionKey, rowKey string) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if t == nil {
		return nilArg("table")
	}
	return settle(func() error {
		_, err := t.DeleteIfExists(ctx, partitionKey, rowKey)
		return err
	})
}

// Move is the design guide's archive step (§6.3): read the entity from
// from, write it into to (after edit, if not nil, changed the copy, keys
// included) on condition that to's entity with its keys is still the one
// read before (an insert when there was none), and delete it from from on
// condition that it did not change since the read — a concurrent change
// restarts the round from the reads, so the target ends with the latest
// version. The target is read before the version it gets, so that a Move
// that read an older version cannot write it over the newer one another
// Move (a redelivered message) copied before deleting the source
// (TestMoveBesideAMoveOfANewerVersion): without edit, the target and then
// the source are read — four storage operations; with edit, the copy's
// keys are known only once the source is read and edited, so the target
// is read after it and the source once more, unchanged — five. For a T
// without an ETag field the source's version cannot be told: with edit
// the older copy is not caught, nor, either way, a change between the
// read and the delete. A missing source counts as done.
//
// A source that another writer changes between every read and delete
// does not keep Move looping: after 10 rounds (entity.RetryPolicy's
// default) it returns an error that names Move and the keys and matches
// entity.ErrContention, leaving the source as the writer left it and
// nothing written to the target, each round having found the source
// changed before its copy (TestMoveGivesUpUnderEndlessContention); the
// message runs again. Every error of Move is prefixed "eventual: move" and names
// the keys; an error of edit is returned wrapped (errors.Is reaches it).
//
// Between the insert and the delete the entity is in both tables (there
// is no isolation); a crash there leaves it so until the message runs
// again.
func Move[T any](ctx context.Context, from, to *entity.Table[T], partitionKey, rowKey string, edit func(*T) error) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	switch {
	case from == nil:
		return nilArg("from")
	case to == nil:
		return nilArg("to")
	case from.Protected() && !to.Protected():
		// The entity read in clear would be written in clear.
		return &ConfigError{Field: "to", Reason: "is not encrypted and from is (package crypt): move into a table of crypt's Table.Entity"}
	}
	// The target's entity is read and written as a bag, so that the copy
	// can be conditional on its ETag whatever T holds.
	toBags, err := entity.ViewAs[entity.DynamicEntity](to)
	if err != nil {
		return &ConfigError{Field: "to", Reason: err.Error()}
	}
	// readTarget reads the etag of the target's entity with keys pk/rk:
	// "" when there is none.
	readTarget := func(ctx context.Context, pk, rk string) (string, error) {
		cur, err := toBags.Get(ctx, pk, rk)
		switch {
		case err == nil:
			return cur.ETag, nil
		case errors.Is(err, entity.ErrNotFound) && !errors.Is(err, entity.ErrTableNotFound):
			return "", nil
		}
		return "", err
	}
	err = entity.RetryPolicy{}.Retry(ctx, func(ctx context.Context) error {
		// The target is read before the version it gets is: a Move of a
		// newer version writes it after that read, which fails this
		// copy's condition — else the copy of an older version could
		// land over a newer one another Move copied before it deleted
		// the source. Without edit the copy has the source's keys, and
		// the target is read first; with edit its keys are known once
		// the source is read and edited, and the source is read again,
		// unchanged, after the target.
		var targetETag string
		if edit == nil {
			if targetETag, err = readTarget(ctx, partitionKey, rowKey); err != nil {
				return err
			}
		}
		e, err := from.Get(ctx, partitionKey, rowKey)
		if errors.Is(err, entity.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		sys, err := entity.SystemOf(&e)
		if err != nil {
			return err
		}
		etag := sys.ETag // the Upsert below overwrites the field
		if etag == "" {
			etag = entity.AnyETag // T has no ETag field
		}
		if edit != nil {
			if err := edit(&e); err != nil {
				return err
			}
			keys, err := entity.SystemOf(&e)
			if err != nil {
				return err
			}
			if targetETag, err = readTarget(ctx, keys.PartitionKey, keys.RowKey); err != nil {
				return err
			}
			if etag != entity.AnyETag {
				again, err := from.Get(ctx, partitionKey, rowKey)
				if errors.Is(err, entity.ErrNotFound) {
					return errRound // moved or deleted meanwhile: the next round's read tells
				}
				if err != nil {
					return err
				}
				if s, err := entity.SystemOf(&again); err != nil || s.ETag != etag {
					return errRound
				}
			}
		}
		d, err := to.ToDynamic(&e)
		if err != nil {
			return err
		}
		if targetETag != "" {
			d.ETag = targetETag
			err = toBags.Update(ctx, d, entity.Replace)
		} else {
			err = toBags.Insert(ctx, d)
		}
		switch {
		case err == nil:
		case errors.Is(err, entity.ErrTableNotFound):
			return err
		case errors.Is(err, entity.ErrPreconditionFailed), errors.Is(err, entity.ErrAlreadyExists),
			errors.Is(err, entity.ErrNotFound), errors.Is(err, entity.ErrOutcomeUnknown):
			return errRound // the target changed since its read (or a lost reply): read again
		default:
			return err
		}
		err = from.Delete(ctx, partitionKey, rowKey, etag)
		switch {
		case errors.Is(err, entity.ErrNotFound):
			return nil // deleted by another run
		case errors.Is(err, entity.ErrOutcomeUnknown):
			return errRound // a lost reply: the next round's read tells
		}
		return err // ErrPreconditionFailed: changed since the read; Retry reads again
	})
	if err != nil {
		return fmt.Errorf("eventual: move (%s) from %s to %s: %w", argerr.EntityKeys(partitionKey, rowKey), from.Name(), to.Name(), err)
	}
	return nil
}

// deleteExpired deletes the markers of partition partitionKey that a
// sweep found expired, each on condition that it is still the version the
// scan read (If-Match its ETag): a marker rewritten since — a new Once of
// the same key, after another sweep deleted the old one — is kept. One
// transaction per 100; a marker the service refuses in it (rewritten, or
// gone: another sweep, or azcore's resend of a transaction whose reply was
// lost) is left out and the rest submitted again; after an unknown
// outcome, one conditional request per marker. It returns how many of the
// markers are gone; a rewritten one is not counted.
func deleteExpired(ctx context.Context, t *entity.Table[onceMarker], partitionKey string, found []onceMarker) (int, error) {
	gone := 0
	for chunk := range slices.Chunk(found, entity.MaxBatchOperations) {
		chunk = slices.Clone(chunk)
		for len(chunk) > 0 {
			b := t.NewBatch()
			for _, m := range chunk {
				b.Delete(partitionKey, m.RowKey, m.ETag)
			}
			_, err := t.Submit(ctx, b)
			if err == nil {
				gone += len(chunk)
				break
			}
			var te *entity.TransactionError
			if errors.As(err, &te) && te.Index >= 0 && te.Index < len(chunk) {
				switch {
				case errors.Is(err, entity.ErrNotFound):
					gone++
					chunk = slices.Delete(chunk, te.Index, te.Index+1)
					continue
				case errors.Is(err, entity.ErrPreconditionFailed):
					chunk = slices.Delete(chunk, te.Index, te.Index+1)
					continue
				}
			}
			if !errors.Is(err, entity.ErrOutcomeUnknown) {
				return gone, err
			}
			var errs []error
			for _, m := range chunk {
				if ctx.Err() != nil {
					return gone, errline.Join(append(errs, ctx.Err())...)
				}
				err := t.Delete(ctx, partitionKey, m.RowKey, m.ETag)
				switch {
				case err == nil, errors.Is(err, entity.ErrNotFound):
					gone++
				case errors.Is(err, entity.ErrPreconditionFailed):
				default:
					errs = append(errs, err) // the others go on
				}
			}
			if len(errs) > 0 {
				return gone, errline.Join(errs...)
			}
			break
		}
	}
	return gone, nil
}

// MarkerPrefix starts the RowKey of every marker entity Once writes:
// MarkerPrefix + keys.Compound(message id, step) (see "Wire format" in the
// package documentation). A scan of a table where handlers run Once can
// tell markers from its own rows by it; no other entity of such a
// partition may have a RowKey that starts with it.
const MarkerPrefix = "tablekit.once_"

// onceMarker is the entity Once writes next to its change. Expires tells
// SweepMarkers when it may go; Attempt identifies the call that wrote it.
// ETag is the version read, not a stored property: SweepMarkers deletes
// only the version it found expired.
type onceMarker struct {
	PartitionKey string
	RowKey       string
	ETag         string `table:",etag"`
	Expires      time.Time
	Attempt      string
}

// onceConfig tunes onceKey: a Delivery carries the processor's.
type onceConfig struct {
	// TTL is how long a marker is kept; 0 means 8 days, longer than the
	// seven days a queue message lives by default, so that no copy of a
	// message can outlive its marker.
	TTL time.Duration
	// Now is the time source; nil means time.Now.
	Now func() time.Time
	// Retry bounds the rounds lost to concurrent writers.
	Retry entity.RetryPolicy
}

// Once applies a change that is not idempotent (an increment, an append)
// exactly once per message and step name, in partition partitionKey of t:
// effect reads what it needs and adds the change's operations to b, which
// already holds the insert of a marker entity for (message ID, step); Once
// submits them as one entity group transaction. A copy of the message
// that runs later finds the marker — the transaction fails at the marker's
// insert and changes nothing. A change whose ETag condition fails (a
// concurrent writer) is retried from effect, at most 10 rounds
// (entity.RetryPolicy's default); then Once returns an error matching
// entity.ErrContention, having applied nothing
// (TestOnceGivesUpUnderEndlessContention). Every error of Once is
// prefixed "eventual: Once" and names the marker's key and the partition;
// effect's error is wrapped (errors.Is reaches it).
//
// ctx must be a handler's (ErrNoDelivery otherwise). applied reports that
// this call applied the change, also when azcore resent the transaction
// after a lost reply; false with a nil error means a copy of the message
// applied it before. Markers live Config.MarkerTTL; SweepMarkers deletes
// them after that. Two storage operations when effect reads one entity.
func Once[T any](ctx context.Context, t *entity.Table[T], partitionKey, step string, effect func(ctx context.Context, b *entity.Batch) error) (applied bool, err error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return false, err
	}
	if effect == nil {
		return false, nilArg("effect")
	}
	d, ok := DeliveryFrom(ctx)
	if !ok {
		return false, ErrNoDelivery
	}
	return onceKey(ctx, t, partitionKey, keys.Compound(d.ID, step), d.once, effect)
}

// onceKey is Once for the marker key MarkerPrefix+key. The marker records
// a random attempt id, so a transaction whose reply was lost and that
// azcore resent is still reported as applied by this call.
func onceKey[T any](ctx context.Context, t *entity.Table[T], partitionKey, key string, cfg onceConfig, effect func(ctx context.Context, b *entity.Batch) error) (applied bool, err error) {
	if t == nil {
		return false, nilArg("table")
	}
	if effect == nil {
		return false, nilArg("effect")
	}
	if cfg.TTL == 0 {
		cfg.TTL = 8 * 24 * time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	rk := MarkerPrefix + key
	if err := keys.Validate(rk); err != nil {
		return false, fmt.Errorf("eventual: Once: marker key for %q: %w", key, err)
	}
	if err := keys.Validate(partitionKey); err != nil {
		return false, fmt.Errorf("eventual: Once: %w", err)
	}
	// A view of t: the marker is written in t's transaction, so through
	// t's protection when t has one, and read back through it.
	markers, err := entity.ViewAs[onceMarker](t)
	if err != nil {
		return false, err
	}
	attempt := uuid.NewString()
	err = cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		b := t.NewBatch().Insert(&onceMarker{
			PartitionKey: partitionKey,
			RowKey:       rk,
			Expires:      cfg.Now().Add(cfg.TTL).UTC(),
			Attempt:      attempt,
		})
		if err := effect(ctx, b); err != nil {
			return err
		}
		_, err := t.Submit(ctx, b)
		if err == nil {
			applied = true
			return nil
		}
		var te *entity.TransactionError
		markerExists := errors.As(err, &te) && te.Index == 0 && errors.Is(err, entity.ErrAlreadyExists)
		if !markerExists && !errors.Is(err, entity.ErrOutcomeUnknown) {
			return err
		}
		// The marker tells: there, the change is applied (by this call if it
		// carries this call's attempt id); absent after an unknown outcome,
		// the transaction was not applied and another round is safe, since
		// the marker lets at most one of them commit.
		m, gerr := markers.Get(ctx, partitionKey, rk)
		switch {
		case gerr == nil:
			applied = m.Attempt == attempt
			return nil
		case errors.Is(gerr, entity.ErrNotFound) && !markerExists:
			return errRound
		}
		// Both wrapped: an unknown outcome the read could not settle still
		// matches entity.ErrOutcomeUnknown.
		return fmt.Errorf("reading the marker after %w: %w", err, gerr)
	})
	if err != nil {
		return false, fmt.Errorf("eventual: Once %q in partition (%s): %w", key, argerr.Keys(partitionKey, ""), err)
	}
	return applied, nil
}

// SweepMarkers deletes the markers of Once that expired before now, in
// the given partitions or, with none, in the whole table (a table scan
// limited to the markers' RowKey range: a background job). Each marker is
// deleted on condition that it is still the version the scan found
// expired (If-Match its ETag), so a marker rewritten between the scan and
// the delete — a new Once of the same key, after another sweep deleted the
// old one — stays (TestSweepMarkersKeepsARewrittenMarker). It returns how
// many expired markers are gone, by its deletes or another sweep's; when
// the error is nil every marker found expired is gone or was rewritten.
// A partition whose deletes fail does not stop the sweep: the others are
// swept, and the error joins one error per failed partition, each
// prefixed "eventual: SweepMarkers" and naming its PartitionKey; the
// markers it left are swept by a later call
// (TestSweepMarkersGoesOnPastAPartitionItCannotDelete).
func SweepMarkers[T any](ctx context.Context, t *entity.Table[T], now time.Time, partitions ...string) (int, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return 0, err
	}
	if t == nil {
		return 0, nilArg("table")
	}
	if err := checkPartitions(partitions); err != nil {
		return 0, err
	}
	markers, err := entity.ViewAs[onceMarker](t)
	if err != nil {
		return 0, err
	}
	q := entity.Query{
		Filter: filter.RowKeyPrefix(MarkerPrefix).And(filter.Lt("Expires", now.UTC())),
		Select: []string{"Expires"},
	}
	if t.Protected() {
		q.Select = nil // an encrypted marker is read whole: its signature covers it
	}
	var found func(yield func(onceMarker, error) bool)
	if len(partitions) == 0 {
		found = markers.Query(ctx, q)
	} else {
		found = markers.QueryPartitions(ctx, partitions, q, entity.FanOutOptions{})
	}
	deleted := 0
	var pending []onceMarker
	var errs []error
	// flush deletes one partition's expired markers; a partition that
	// fails is reported and the sweep goes on with the next.
	flush := func() {
		pk := pending[0].PartitionKey
		n, err := deleteExpired(ctx, markers, pk, pending)
		deleted += n
		pending = pending[:0]
		if err != nil {
			errs = append(errs, fmt.Errorf("eventual: SweepMarkers: partition (%s): %d expired markers gone, the others left for a later sweep: %w", argerr.Keys(pk, ""), n, err))
		}
	}
	for m, err := range found {
		if err != nil {
			return deleted, errline.Join(append(errs, fmt.Errorf("eventual: SweepMarkers: scanning for expired markers: %w", err))...)
		}
		if len(pending) > 0 && pending[0].PartitionKey != m.PartitionKey {
			flush()
			if ctx.Err() != nil {
				return deleted, errline.Join(append(errs, ctx.Err())...)
			}
		}
		pending = append(pending, m)
	}
	if len(pending) > 0 {
		flush()
	}
	return deleted, errline.Join(errs...)
}

// attemptMetadata is the blob metadata name under which PutBlobIfAbsent
// records its attempt id.
const attemptMetadata = "tablekitattempt"

// PutBlob writes data as the block blob name, replacing what is there: one
// Put Blob request, harmless to repeat.
func PutBlob(ctx context.Context, c *container.Client, name string, data []byte) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := checkBlob(c, name); err != nil {
		return err
	}
	_, err := c.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), nil)
	if err != nil {
		return fmt.Errorf("eventual: writing blob %s: %w", name, err)
	}
	return nil
}

// PutBlobIfAbsent writes data as the block blob name unless one exists
// (If-None-Match: *). created reports that the stored blob is this call's
// write, also after a lost reply: its metadata carries this call's attempt
// id, read back (one more request) only when the blob was found to exist.
// A write of this call that another writer replaced inside azcore's retry
// window reports false (TestPutBlobIfAbsentReplacedInTheRetryWindow).
func PutBlobIfAbsent(ctx context.Context, c *container.Client, name string, data []byte) (created bool, err error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return false, err
	}
	if err := checkBlob(c, name); err != nil {
		return false, err
	}
	attempt := uuid.NewString()
	bb := c.NewBlockBlobClient(name)
	_, err = bb.Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), &blockblob.UploadOptions{
		Metadata: map[string]*string{attemptMetadata: to.Ptr(attempt)},
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{
			IfNoneMatch: to.Ptr(azcore.ETagAny),
		}},
	})
	if err == nil {
		return true, nil
	}
	if !bloberror.HasCode(err, bloberror.BlobAlreadyExists) {
		return false, fmt.Errorf("eventual: writing blob %s: %w", name, err)
	}
	props, err := bb.GetProperties(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("eventual: blob %s exists; reading its metadata: %w", name, err)
	}
	for k, v := range props.Metadata {
		if strings.EqualFold(k, attemptMetadata) && v != nil && *v == attempt {
			return true, nil
		}
	}
	return false, nil
}

// DeleteBlob deletes a blob and its snapshots; a missing one counts as
// done.
func DeleteBlob(ctx context.Context, c *container.Client, name string) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := checkBlob(c, name); err != nil {
		return err
	}
	_, err := c.NewBlobClient(name).Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)})
	if err != nil && !bloberror.HasCode(err, bloberror.BlobNotFound) {
		return fmt.Errorf("eventual: deleting blob %s: %w", name, err)
	}
	return nil
}

// nilArg is the *ConfigError of a nil argument.
func nilArg(field string) error { return &ConfigError{Field: field, Reason: ReasonNil} }

// checkBlob refuses, before any request, a nil container or an empty blob
// name.
func checkBlob(c *container.Client, name string) error {
	switch {
	case c == nil:
		return nilArg("container")
	case name == "":
		return &ConfigError{Field: "blob name", Reason: "is empty"}
	}
	return nil
}
