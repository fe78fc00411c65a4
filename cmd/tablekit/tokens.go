package main

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
// WithWriteTokens, every row of the index patterns) carries TkWrite, which
// entity strips from every write without a token. copy writes such a row
// through entity and then merges its TkWrite back onto the version it
// wrote, conditional on that version's ETag, as package backup's Import
// does, so the destination holds the source's rows verbatim and a rerun
// in insert mode finds them already there.

func hasToken(d *entity.DynamicEntity) bool {
	_, ok := d.Properties[wtoken.Property]
	return ok
}

// lacksToken reports whether stored is what a write of d through entity
// stored: d but for the TkWrite d has and stored lacks.
func lacksToken(stored, d entity.DynamicEntity) bool {
	if !hasToken(&d) || hasToken(&stored) {
		return false
	}
	d.Properties = maps.Clone(d.Properties)
	delete(d.Properties, wtoken.Property)
	return stored.SameContent(d)
}

// fence is the TkWrite of one entity to merge onto the version of it that
// was written (etag; "" to read the entity and merge only if it lacks its
// TkWrite and is otherwise d).
type fence struct {
	i    int // the entity's index in its page
	etag string
	err  error
}

// restoreTokens merges each fence's TkWrite, up to n at once, and sets its
// err.
func restoreTokens(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], items []entity.DynamicEntity, fences []fence, n int) {
	if n <= 0 {
		n = entity.DefaultConcurrency
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for k := range fences {
		f := &fences[k]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f.err = restoreToken(ctx, tbl, &items[f.i], f.etag)
		}()
	}
	wg.Wait()
}

// restoreToken merges d's TkWrite onto the stored version etag of d's
// entity. A version changed or deleted since (412, 404) is another
// writer's, whose change stands; so is a resent merge whose first try was
// applied.
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

// refused reports whether the service refused a fence's content (400):
// a failure of that entity alone.
func refused(err error) bool {
	var re *azcore.ResponseError
	return permanent(err) || errors.As(err, &re) && re.StatusCode == http.StatusBadRequest
}
