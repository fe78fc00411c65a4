package large

import (
	"context"
	"errors"
	"io"
	"reflect"
	"sync"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/errline"
	"github.com/tablekit/tablekit/internal/wtoken"
)

// Get reads the entity with these keys and the values of its blob fields:
// a point read, then one Get Blob per []byte or string field that has a
// value, all at once — at the same time as the point read for an entity
// this Table read or wrote recently (Config.Hints), whose blob names it
// remembers; Stream fields are read when opened. Each value's
// size and SHA-256 are checked against the entity's record: a blob that
// differs is a *BlobError matching ErrBlobCorrupt, one that is missing
// matches ErrBlobMissing — never wrong or partial data. A blob deleted
// because a writer replaced the entity between the two reads makes Get
// read the entity again (Config.ReadAttempts). A missing entity matches
// entity.ErrNotFound.
func (t *Table[T]) Get(ctx context.Context, partitionKey, rowKey string) (T, error) {
	if err := t.ok(); err != nil {
		return *new(T), err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return *new(T), err
	}
	var zero T
	var lastETag string
	for attempt := 1; ; attempt++ {
		v, etag, err := t.getOnce(ctx, partitionKey, rowKey)
		if err == nil {
			return v, nil
		}
		// A blob missing from a version not seen before may have been
		// deleted by a writer that replaced it since: read again. Missing
		// twice from the same version, it is gone.
		if errors.Is(err, ErrBlobMissing) && etag != lastETag && attempt < t.cfg.ReadAttempts {
			lastETag = etag
			continue
		}
		return zero, &Error{Op: "get", PartitionKey: partitionKey, RowKey: rowKey, Err: err}
	}
}

// getOnce reads one version of the entity and its blobs; etag is the
// version's.
func (t *Table[T]) getOnce(ctx context.Context, pk, rk string) (out T, etag string, err error) {
	// Start reading the blobs the entity held when last seen, while the
	// entity is read.
	early := make([]*prefetch, len(t.fields))
	for i, ref := range t.hints.get(pk, rk) {
		if f := &t.fields[i]; f.kind != kindStream && !ref.IsZero() {
			pctx, cancel := context.WithCancel(ctx)
			p := &prefetch{ref: ref, cancel: cancel, done: make(chan struct{})}
			go func() {
				defer close(p.done)
				p.data, p.err = t.fetch(pctx, f, ref)
			}()
			early[i] = p
		}
	}
	defer func() {
		// An early read not used (the entity holds another blob, or the
		// Get failed) is cancelled, and waited for: nothing of this Get
		// runs once it has returned.
		for _, p := range early {
			if p != nil {
				p.cancel()
			}
		}
		for _, p := range early {
			if p != nil {
				<-p.done
			}
		}
	}()
	d, err := t.rows.Get(ctx, pk, rk)
	if err != nil {
		if errors.Is(err, entity.ErrNotFound) {
			t.hints.put(pk, rk, nil)
		}
		return out, "", err
	}
	refs, err := t.decode(&d, &out)
	if err != nil {
		return out, d.ETag, err
	}
	rv := reflect.ValueOf(&out).Elem()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for i := range t.fields {
		f := &t.fields[i]
		ref := refs[i]
		switch {
		case f.kind == kindStream:
			*f.streamOf(rv) = t.stored(pk, rk, f, ref)
		case ref.IsZero():
			f.set(rv, nil)
		default:
			p := early[i]
			wg.Go(func() {
				var data []byte
				var err error
				if p != nil && p.ref == ref {
					data, err = p.result() // the blob read early is the one the entity holds
				} else {
					data, err = t.fetch(ctx, f, ref)
				}
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				f.set(rv, data)
			})
		}
	}
	wg.Wait()
	if err := errline.Join(errs...); err != nil {
		return out, d.ETag, err
	}
	t.hints.put(pk, rk, refs)
	return out, d.ETag, nil
}

// decode stores d into out, leaving out the blob fields, and returns the
// references of the blob fields (zero for no value), in field order. d
// loses the reference properties.
func (t *Table[T]) decode(d *entity.DynamicEntity, out *T) ([]Ref, error) {
	refs, err := t.refsOf(d)
	if err != nil {
		return nil, err
	}
	for _, p := range t.props {
		delete(d.Properties, p)
	}
	delete(d.Properties, wtoken.Property) // this package's own bookkeeping
	if err := t.codec.FromDynamic(d, out); err != nil {
		return nil, err
	}
	return refs, nil
}

// refsOf reads the references an entity stores, in field order; one that
// does not parse is zero, and the first such is reported.
func (t *Table[T]) refsOf(d *entity.DynamicEntity) ([]Ref, error) {
	refs := make([]Ref, len(t.fields))
	var first error
	for i, f := range t.fields {
		v, ok := d.Properties[f.Name]
		if !ok {
			continue
		}
		var err error
		if s, ok := v.(string); !ok {
			err = &BlobError{Field: f.GoName, Reason: "property " + f.Name + " is not a String", Err: ErrBadReference}
		} else if refs[i], err = parseRef(s); err != nil {
			err = &BlobError{Field: f.GoName, Reason: "property " + f.Name + ": " + err.Error(), Err: ErrBadReference}
		}
		if first == nil {
			first = err
		}
	}
	return refs, first
}

// stored returns the Stream of a stored value.
func (t *Table[T]) stored(pk, rk string, f *field, ref Ref) Stream {
	if ref.IsZero() {
		return Stream{}
	}
	return Stream{ref: ref, open: func(ctx context.Context) (io.ReadCloser, error) {
		v, err := t.openBlob(ctx, f, ref)
		if err != nil {
			return nil, &Error{Op: "open", PartitionKey: pk, RowKey: rk, Err: err}
		}
		return v, nil
	}}
}
