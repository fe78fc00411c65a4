package backup

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/wtoken"
)

// A row written through a write-token view of a table (entity's
// WithWriteTokens, and every row of the index patterns) carries the
// reserved property TkWrite. entity strips it from every write without a
// token, so that a property bag read and written back never restores an
// old chain; a restore must restore it, or an export of the restored table
// is not the backup and an Insert-mode rerun finds every such row "stored
// with other properties". So Import writes such a row through entity
// (which checks it, encrypts it on a protected table and settles its
// outcome) and then merges its TkWrite back onto the version it wrote, in
// a raw merge conditional on that version's ETag: a fence, as entity's
// own transactions send on a protected table. A version changed since by
// another writer keeps that writer's change, and the fence is dropped.

// hasToken reports whether d carries a TkWrite.
func hasToken(d *entity.DynamicEntity) bool {
	_, ok := d.Properties[wtoken.Property]
	return ok
}

// withoutToken is d without its TkWrite: what a write through entity
// stores of it.
func withoutToken(d entity.DynamicEntity) entity.DynamicEntity {
	if _, ok := d.Properties[wtoken.Property]; ok {
		d.Properties = maps.Clone(d.Properties)
		delete(d.Properties, wtoken.Property)
	}
	return d
}

// lacksToken reports whether stored is what a write of d through entity
// stored: d's keys and properties, TkWrite aside, and no TkWrite, while d
// has one, so that its fence is still to be merged.
func lacksToken(stored, d entity.DynamicEntity) bool {
	return hasToken(&d) && !hasToken(&stored) && stored.SameContent(withoutToken(d))
}

// fence is the TkWrite of one entity to merge onto the version of it
// that was written (etag; "" when the write's outcome gave none).
type fence struct {
	d    *entity.DynamicEntity
	etag string
	err  error
}

// restoreTokens merges each fence's TkWrite, up to n at once, and sets
// its err.
func restoreTokens(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], fences []fence, n int) {
	if n <= 0 {
		n = entity.DefaultConcurrency
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i := range fences {
		f := &fences[i]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f.err = restoreToken(ctx, tbl, f.d, f.etag)
		}()
	}
	wg.Wait()
}

// restoreToken merges d's TkWrite onto the stored version etag of d's
// entity, which holds d's other properties. Without an etag it reads the
// entity and merges onto it only if it is d without TkWrite. A version
// changed or deleted since (412, 404) is another writer's: its change
// stands, and nothing is merged; so does a resent merge whose first try
// was applied.
func restoreToken(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], d *entity.DynamicEntity, etag string) error {
	v, ok := d.Properties[wtoken.Property]
	if !ok {
		return nil
	}
	if etag == "" {
		stored, err := tbl.Get(ctx, d.PartitionKey, d.RowKey)
		switch {
		case errors.Is(err, entity.ErrNotFound):
			return nil
		case err != nil:
			return err
		case !lacksToken(stored, *d):
			return nil
		}
		etag = stored.ETag
	}
	body, err := entity.Marshal(&entity.DynamicEntity{PartitionKey: d.PartitionKey, RowKey: d.RowKey, Properties: map[string]any{wtoken.Property: v}})
	if err != nil {
		return err
	}
	match := azcore.ETag(etag)
	_, err = tbl.Client().UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{IfMatch: &match, UpdateMode: aztables.UpdateModeMerge})
	var re *azcore.ResponseError
	if errors.As(err, &re) && (re.StatusCode == http.StatusPreconditionFailed || re.StatusCode == http.StatusNotFound) {
		return nil
	}
	return err
}
