package large

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/errline"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// SweepResult counts what a Sweep found.
type SweepResult struct {
	Blobs      int // blobs listed under the prefix
	Young      int // younger than Config.Grace: left alone
	Foreign    int // without this package's metadata, or of a property this Table does not know: left alone
	Referenced int // referenced by their entity: kept
	Unreadable int // of a property whose stored value is not a reference (ErrBadReference): kept
	Unchecked  int // whose entity's references could not be read: left for the next Sweep
	Deleted    int // orphans: deleted
}

// sweepConcurrency is how many orphans Sweep deletes at once.
const sweepConcurrency = 8

// Sweep deletes the orphans among the blobs under the table's prefix:
// blobs older than Config.Grace that their entity does not reference.
// Orphans are what a crash leaves — a blob uploaded by a write that never
// wrote its entity, a replaced version's blob whose deletion was never
// enqueued — and what a write whose outcome stayed unknown leaves; the
// processor deletes every other blob that falls out of use. Run it now and
// then, in the background.
//
// It lists the blobs (one List Blobs request per 5,000, with their
// metadata), and for each partition of a page the entities they belong
// to (one query over their RowKey range, reading only the references),
// then deletes each orphan. A blob that is young, or not of this package,
// is left alone. A partition whose references cannot be read, or an
// orphan whose deletion fails, does not stop it: it goes on with the
// others and returns their errors joined (SweepResult.Unchecked;
// TestSweepGoesPastABadBlob). A listing that fails, or a cancelled ctx,
// stops it: every error reads "large: sweep" or names the partition, and
// matches its cause, context.Canceled for a cancelled one
// (TestSweepErrorsNameTheStep).
//
// A blob of a property whose stored value is not a reference
// (ErrBadReference: tampered, or written by other software) is kept:
// nothing tells which blob that value meant (SweepResult.Unreadable;
// TestSweepKeepsTheBlobOfAnUnreadableReference).
//
// Why the grace period is safe: a write sends no request for its entity
// later than Grace/2 after starting its uploads, so a blob older than
// Grace gains no reference — unless a request sent before that deadline
// is executed more than Grace/2 later (see the package doc) — and one
// that Sweep finds unreferenced stays so.
func (t *Table[T]) Sweep(ctx context.Context) (SweepResult, error) {
	if err := t.ok(); err != nil {
		return SweepResult{}, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return SweepResult{}, err
	}
	var res SweepResult
	pager := t.blobs.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{
		Prefix:  &t.prefix,
		Include: container.ListBlobsInclude{Metadata: true},
	})
	var errs []error // of partitions or blobs that failed: Sweep goes on with the others
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			err = fmt.Errorf("large: sweep: listing the blobs under %q: %w", t.prefix, err)
			return res, errline.Join(append(errs, err)...)
		}
		now := t.cfg.Now()
		// candidates by partition, then RowKey
		cands := map[string]map[string][]candidate{}
		for _, item := range page.Segment.BlobItems {
			if item.Name == nil {
				continue
			}
			res.Blobs++
			o, ok := ownerOf(item.Metadata)
			if !ok || !slices.Contains(t.props, o.prop) {
				res.Foreign++
				continue
			}
			if t.cfg.Grace > 0 && !createdBefore(item.Properties, now.Add(-t.cfg.Grace)) {
				res.Young++
				continue
			}
			if cands[o.pk] == nil {
				cands[o.pk] = map[string][]candidate{}
			}
			cands[o.pk][o.rk] = append(cands[o.pk][o.rk], candidate{name: *item.Name, prop: o.prop})
		}
		var orphans []string
		for pk, byRK := range cands {
			hs, err := t.referenced(ctx, pk, byRK)
			if err != nil {
				if ctx.Err() != nil {
					return res, errline.Join(append(errs, err)...)
				}
				errs = append(errs, err)
				for _, cs := range byRK {
					res.Unchecked += len(cs)
				}
				continue
			}
			for rk, cs := range byRK {
				h := hs[rk]
				for _, c := range cs {
					switch {
					case h != nil && h.names[c.name]:
						res.Referenced++
					case h != nil && h.unreadable[c.prop]:
						res.Unreadable++
					default:
						orphans = append(orphans, c.name)
					}
				}
			}
		}
		n, err := t.deleteAll(ctx, orphans)
		res.Deleted += n
		if err != nil {
			if ctx.Err() != nil {
				return res, errline.Join(append(errs, err)...)
			}
			errs = append(errs, err)
		}
	}
	return res, errline.Join(errs...)
}

// candidate is an old blob that may be an orphan.
type candidate struct {
	name, prop string
}

// createdBefore reports a blob created (or, when the service does not
// say, last modified: this package never modifies a blob) before t.
func createdBefore(p *container.BlobProperties, t time.Time) bool {
	switch {
	case p == nil:
		return false
	case p.CreationTime != nil:
		return p.CreationTime.Before(t)
	case p.LastModified != nil:
		return p.LastModified.Before(t)
	}
	return false
}

// referenced reads what the entities of partition pk with the RowKeys
// of byRK reference: one query over their RowKey range, reading only the
// references.
func (t *Table[T]) referenced(ctx context.Context, pk string, byRK map[string][]candidate) (map[string]*holding, error) {
	var lo, hi string
	first := true
	for rk := range byRK {
		if first || keys.Compare(rk, lo) < 0 {
			lo = rk
		}
		if first || keys.Compare(rk, hi) > 0 {
			hi = rk
		}
		first = false
	}
	return t.holdings(ctx, pk, lo, hi)
}

// deleteAll deletes the blobs names, sweepConcurrency at once, and
// returns how many it deleted (or found gone).
func (t *Table[T]) deleteAll(ctx context.Context, names []string) (int, error) {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		n    int
		errs []error
	)
	sem := make(chan struct{}, sweepConcurrency)
	for _, name := range names {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			err := eventual.DeleteBlob(ctx, t.blobs, name)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("large: sweep: %w", err))
				return
			}
			n++
		})
	}
	wg.Wait()
	return n, errline.Join(errs...)
}
