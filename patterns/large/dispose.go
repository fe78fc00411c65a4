package large

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// disposal is the message that deletes blobs that an entity no longer
// references: a replaced or deleted version's, or a failed write's. Its
// handler deletes a blob only when the entity, read first, does not
// reference it — an insert whose reply was lost may have been resent and
// applied again after the delete that sent the message — and, for Blobs,
// only once the blob is older than Config.Grace, when no write can still
// add a reference to it (see Sweep).
type disposal struct {
	// Blobs were referenced by a version of the entity: the write that
	// uploaded them may still be resending its request.
	Blobs []string `json:"blobs,omitempty"`
	// Own were uploaded by the write that sent the message, which ended
	// without referencing them: no request of it is outstanding.
	Own []string `json:"own,omitempty"`
	// Entity names the entity the blobs belong to; nil in messages of
	// versions that did not send it, whose blobs' metadata says.
	Entity *owned `json:"entity,omitempty"`
}

// owned is the keys of the entity a disposal's blobs belong to.
type owned struct {
	PartitionKey string `json:"pk"`
	RowKey       string `json:"rk"`
}

// enqueueDisposal sends the message that deletes old (blobs of a version
// of the entity pk, rk) and own (blobs the calling write uploaded and
// does not reference), after delay. A failure leaves them to Sweep: it is
// not the caller's concern; so does a Table without a processor.
func (t *Table[T]) enqueueDisposal(ctx context.Context, pk, rk string, old, own []string, delay time.Duration) {
	if len(old) == 0 && len(own) == 0 || t.proc == nil {
		return
	}
	_ = t.sendDisposal(ctx, disposal{Blobs: old, Own: own, Entity: &owned{PartitionKey: pk, RowKey: rk}}, delay)
}

func (t *Table[T]) sendDisposal(ctx context.Context, d disposal, delay time.Duration) error {
	m, err := t.kind.Message(d)
	if err != nil {
		return err
	}
	if delay > 0 {
		m.Delay = min(delay, eventual.MaxDelay)
	}
	return t.proc.Enqueue(ctx, m)
}

// dispose is the handler of disposal messages.
func (t *Table[T]) dispose(ctx context.Context, d disposal) error {
	for _, name := range append(append([]string(nil), d.Blobs...), d.Own...) {
		if !strings.HasPrefix(name, t.prefix) {
			return fmt.Errorf("large: blob %q is not under the prefix %q", name, t.prefix)
		}
	}
	if d.Entity != nil {
		return t.disposeOf(ctx, *d.Entity, d.Blobs, d.Own)
	}
	// An older message: each blob's metadata names its entity.
	for _, name := range append(append([]string(nil), d.Blobs...), d.Own...) {
		props, err := t.blobs.NewBlobClient(name).GetProperties(ctx, nil)
		switch {
		case bloberror.HasCode(err, bloberror.BlobNotFound):
			continue
		case err != nil:
			return fmt.Errorf("large: reading the metadata of blob %s: %w", name, err)
		}
		o, ok := ownerOf(props.Metadata)
		if !ok {
			continue // not one of this package's blobs: Sweep leaves it too
		}
		if err := t.disposeOf(ctx, owned{PartitionKey: o.pk, RowKey: o.rk}, []string{name}, nil); err != nil {
			return err
		}
	}
	return nil
}

// disposeOf deletes the blobs of entity e in old and own that e does not
// reference, those of old only once they are older than Config.Grace; the
// younger ones go into a new message, delayed until they are old enough.
func (t *Table[T]) disposeOf(ctx context.Context, e owned, old, own []string) error {
	now := t.cfg.Now() // before the read: the ages are judged as of it
	hs, err := t.holdings(ctx, e.PartitionKey, e.RowKey, e.RowKey)
	if err != nil {
		return err
	}
	h := hs[e.RowKey]
	var young []string
	for i, name := range append(append([]string(nil), old...), own...) {
		held, err := t.holds(ctx, h, name)
		if err != nil {
			return err
		}
		if held {
			continue // the entity references it: whoever writes the entity next disposes of it
		}
		opts := &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)}
		if i < len(old) && t.cfg.Grace > 0 {
			cutoff := now.Add(-t.cfg.Grace)
			opts.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfUnmodifiedSince: &cutoff}}
		}
		_, err = t.blobs.NewBlobClient(name).Delete(ctx, opts)
		switch {
		case err == nil, bloberror.HasCode(err, bloberror.BlobNotFound):
		case bloberror.HasCode(err, bloberror.ConditionNotMet):
			young = append(young, name)
		default:
			return fmt.Errorf("large: deleting blob %s: %w", name, err)
		}
	}
	if len(young) == 0 {
		return nil
	}
	return t.sendDisposal(ctx, disposal{Blobs: young, Entity: &e}, t.untilOld(ctx, young, now))
}

// untilOld returns how long until every blob of names is older than
// Config.Grace, at least a second.
func (t *Table[T]) untilOld(ctx context.Context, names []string, now time.Time) time.Duration {
	wait := time.Second
	for _, name := range names {
		props, err := t.blobs.NewBlobClient(name).GetProperties(ctx, nil)
		var since *time.Time
		if err == nil {
			since = ageFrom(props.CreationTime, props.LastModified)
		}
		switch {
		case bloberror.HasCode(err, bloberror.BlobNotFound):
		case since == nil:
			wait = max(wait, t.cfg.Grace)
		default:
			wait = max(wait, since.Add(t.cfg.Grace).Sub(now)+time.Second)
		}
	}
	return wait
}

// ageFrom is the time a blob's age for disposal counts from: its last
// modification, which the Delete's If-Unmodified-Since condition tests
// (metadata set after the upload moves it past the creation time),
// else its creation; nil when neither is known.
func ageFrom(created, modified *time.Time) *time.Time {
	switch {
	case modified == nil:
		return created
	case created == nil || modified.After(*created):
		return modified
	}
	return created
}

// holding is what the blob fields of one entity reference.
type holding struct {
	names      map[string]bool // the blobs named by its references
	unreadable map[string]bool // properties whose value is not a reference: their blobs are kept
}

// holds reports whether the entity whose references are h (nil for no
// entity) may reference the blob name. A blob of a property whose value
// does not parse counts as referenced, since nothing tells which blob it
// meant; which property a blob is of is read from its metadata (one Get
// Blob Properties, only for an entity with such a property), as Sweep
// reads it, not from its name: names are for people. A blob without this
// package's metadata is kept, as Sweep keeps it.
func (t *Table[T]) holds(ctx context.Context, h *holding, name string) (bool, error) {
	switch {
	case h == nil:
		return false, nil
	case h.names[name]:
		return true, nil
	case len(h.unreadable) == 0:
		return false, nil
	}
	props, err := t.blobs.NewBlobClient(name).GetProperties(ctx, nil)
	switch {
	case bloberror.HasCode(err, bloberror.BlobNotFound):
		return true, nil // nothing to delete
	case err != nil:
		return false, fmt.Errorf("large: reading the metadata of blob %s: %w", name, err)
	}
	o, ok := ownerOf(props.Metadata)
	return !ok || h.unreadable[o.prop], nil
}

// holdings reads what the entities of partition pk with RowKeys from lo
// to hi reference: one query over the range, reading only the
// references.
func (t *Table[T]) holdings(ctx context.Context, pk, lo, hi string) (map[string]*holding, error) {
	rows := filter.And(filter.Ge(filter.RowKeyProperty, lo), filter.Le(filter.RowKeyProperty, hi))
	if lo == hi {
		rows = filter.RK(lo)
	}
	q := entity.Query{Filter: filter.And(filter.PK(pk), rows), Select: t.props}
	out := map[string]*holding{}
	for d, err := range t.refs.Query(ctx, q) {
		if err != nil {
			return nil, fmt.Errorf("large: reading the references of partition %q: %w", pk, err)
		}
		h := &holding{names: map[string]bool{}}
		for _, p := range t.props {
			v, ok := d.Properties[p]
			if !ok || v == nil {
				continue
			}
			s, ok := v.(string)
			r, err := parseRef(s)
			if !ok || err != nil {
				if h.unreadable == nil {
					h.unreadable = map[string]bool{}
				}
				h.unreadable[p] = true
				continue
			}
			h.names[r.Blob] = true
		}
		out[d.RowKey] = h
	}
	return out, nil
}
