package large

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/entityfields"
	"github.com/tablekit/tablekit/internal/errline"
	"github.com/tablekit/tablekit/internal/wtoken"
)

// cond is what a write is conditional on.
type cond uint8

const (
	condInsert cond = iota + 1 // no entity has the keys
	condETag                   // the stored version is the given ETag, or any with entity.AnyETag
	condUpsert                 // whatever is stored, or nothing
)

// slot is one blob field of an entity being written.
type slot struct {
	f       *field
	data    []byte    // a []byte or string value; nil for none
	sum     Ref       // data's size and checksum, under name
	r       io.Reader // a Stream's new value, until uploaded
	keep    *Ref      // a Stream read before: the stored value it keeps
	name    string    // the name of this write's blob for the field
	up      Ref       // this write's blob, once uploaded (zero for an empty Stream)
	sent    bool      // an upload began: the blob may be stored though its upload failed
	done    bool      // uploaded
	started time.Time // when the upload began
	ref     Ref       // what the entity stores in this round (zero: no value)
}

// writer is one call of Insert, Replace or Upsert.
type writer[T any] struct {
	t     *Table[T]
	op    string
	d     *entity.DynamicEntity // the entity without its references
	slots []*slot
	etag  string // the written version's
	old   []Ref  // the references of the version replaced
	tried bool   // an entity write was sent in the last round
}

// write stores e under condition c (etag for condETag): the blobs first,
// each under a name of its own, then the entity with their references,
// then (through the processor) the deletion of the blobs the entity no
// longer references.
func (t *Table[T]) write(ctx context.Context, op string, e *T, c cond, etag string) error {
	if e == nil {
		return &Error{Op: op, Err: invalid("nil entity")}
	}
	d, err := t.codec.ToDynamic(e)
	if err != nil {
		sys, _ := entity.SystemOf(e) // the keys as given, which the error names
		return &Error{Op: op, PartitionKey: sys.PartitionKey, RowKey: sys.RowKey, Err: err}
	}
	w := &writer[T]{t: t, op: op, d: d}
	if err := w.prepare(e); err != nil {
		return w.fail(err)
	}
	switch {
	case c == condInsert:
		err = w.round(ctx, c, "")
	case c == condETag && etag != entity.AnyETag:
		err = w.round(ctx, c, etag)
	default: // any version, or none: from a fresh read until no other writer interferes
		err = t.cfg.Retry.Retry(ctx, func(ctx context.Context) error { return w.round(ctx, c, etag) })
	}
	if err != nil {
		w.cleanUp(ctx, err)
		return w.fail(err)
	}
	// Done: the entity holds the new references.
	rv := reflect.ValueOf(e).Elem()
	final := map[string]bool{}
	refs := make([]Ref, len(w.slots))
	for i, s := range w.slots {
		refs[i] = s.ref
		final[s.ref.Blob] = true
		if s.f.kind == kindStream {
			*s.f.streamOf(rv) = t.stored(d.PartitionKey, d.RowKey, s.f, s.ref)
		}
	}
	var gone, own []string
	for _, r := range w.old {
		if !r.IsZero() && !final[r.Blob] {
			gone = append(gone, r.Blob)
		}
	}
	delay := t.cfg.DeleteDelay // readers of the old version may still want its blobs
	if len(gone) == 0 {
		delay = 0
	}
	for _, s := range w.slots {
		if s.done && !s.up.IsZero() && !final[s.up.Blob] { // uploaded in a round that lost
			own = append(own, s.up.Blob)
		}
	}
	t.hints.put(d.PartitionKey, d.RowKey, refs)
	t.enqueueDisposal(context.WithoutCancel(ctx), d.PartitionKey, d.RowKey, gone, own, delay)
	if err := entityfields.SetWritten(e, w.etag); err != nil {
		return w.fail(err) // cannot happen: New checked T
	}
	return nil
}

func (w *writer[T]) fail(err error) error {
	return &Error{Op: w.op, PartitionKey: w.d.PartitionKey, RowKey: w.d.RowKey, Err: err}
}

// prepare reads e's blob fields into slots, hashing the values held in
// memory, and checks the entity with its references against the
// service's limits: everything that can be refused is, before any
// request.
func (w *writer[T]) prepare(e *T) error {
	t := w.t
	rv := reflect.ValueOf(e).Elem()
	check := &entity.DynamicEntity{PartitionKey: w.d.PartitionKey, RowKey: w.d.RowKey, Properties: maps.Clone(w.d.Properties)}
	for i := range t.fields {
		f := &t.fields[i]
		if _, taken := w.d.Properties[f.Name]; taken {
			return invalid("property %s holds the blob reference of field %s: the entity may not set it otherwise", f.Name, f.GoName)
		}
		s := &slot{f: f, name: newBlobName(t.prefix, w.d.PartitionKey, w.d.RowKey, f.Name)}
		if f.kind == kindStream {
			st := f.streamOf(rv)
			if st.r != nil {
				s.r = st.r
			} else if !st.ref.IsZero() {
				k := st.ref
				s.keep = &k
			}
		} else if s.data = f.bytesOf(rv); s.data != nil {
			s.sum = sumRef(s.name, t.cfg.Checksum, s.data)
		}
		// The longest reference the entity may store for the field (a
		// SHA-256 is longer than a CRC-32C).
		switch {
		case s.keep != nil:
			check.Set(f.Name, s.keep.encode())
		case s.data != nil || s.r != nil:
			check.Set(f.Name, Ref{Blob: s.name, Size: math.MaxInt64}.encode())
		}
		w.slots = append(w.slots, s)
	}
	// and the longest write token the table adds.
	check.Set(wtoken.Property, strings.Repeat("x", 6+8*wtoken.MaxTokens))
	return entity.Validate(check)
}

// raced is a write that lost to another writer in a round that may be
// retried: it matches entity.ErrPreconditionFailed.
type raced struct{ err error }

func (e *raced) Error() string { return e.err.Error() }
func (e *raced) Unwrap() error { return e.err }
func (e *raced) Is(target error) bool {
	return target == entity.ErrPreconditionFailed
}

// round reads the stored version (but for an insert), decides each
// field's reference — the stored one when the value is the same, else a
// blob of this write, uploaded once whatever the rounds — and writes the
// entity on condition of the version read.
func (w *writer[T]) round(ctx context.Context, c cond, etag string) error {
	t := w.t
	pk, rk := w.d.PartitionKey, w.d.RowKey
	var cur *entity.DynamicEntity
	have := make([]Ref, len(w.slots))
	w.tried = false
	if c != condInsert {
		got, err := t.rows.Get(ctx, pk, rk)
		switch {
		case errors.Is(err, entity.ErrNotFound) && c == condUpsert:
		case err != nil:
			return err
		case etag != "" && etag != entity.AnyETag && got.ETag != etag:
			return &raced{entity.ErrPreconditionFailed}
		default:
			// A reference that does not parse is replaced like no value;
			// its blob, if any, is Sweep's.
			have, _ = t.refsOf(&got)
			cur = &got
		}
	}
	var todo []*slot
	for i, s := range w.slots {
		switch {
		case s.keep != nil:
			if *s.keep != have[i] {
				return &BlobError{Field: s.f.GoName, Blob: s.keep.Blob, Reason: "the entity no longer holds this value", Err: ErrStaleStream}
			}
			s.ref = have[i]
		case s.data == nil && s.r == nil && !s.done:
			s.ref = Ref{}
		case s.data != nil && s.sum.Checksum == ChecksumSHA256 && sameSum(have[i], s.sum):
			// The same value: keep its blob. Only a SHA-256 tells: two
			// values with one CRC-32C are easily made, or met by chance.
			s.ref = have[i]
		case s.done:
			s.ref = s.up
		default:
			todo = append(todo, s)
		}
	}
	if err := w.upload(ctx, todo); err != nil {
		return err
	}
	// The entity's write must not reach the service later than Grace/2
	// after the first upload it references began, or Sweep may have taken
	// that blob for an orphan: the write runs under that deadline, so that
	// neither a slow first try nor azcore's retries go out after it.
	var deadline time.Time
	if t.cfg.Grace > 0 {
		for _, s := range w.slots {
			if s.done && s.ref == s.up && !s.up.IsZero() {
				if d := s.started.Add(t.cfg.Grace / 2); deadline.IsZero() || d.Before(deadline) {
					deadline = d
				}
			}
		}
	}
	wctx := ctx
	if !deadline.IsZero() {
		if !time.Now().Before(deadline) {
			return ErrUploadExpired
		}
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	body := &entity.DynamicEntity{PartitionKey: pk, RowKey: rk, Properties: maps.Clone(w.d.Properties)}
	for _, s := range w.slots {
		if !s.ref.IsZero() {
			body.Set(s.f.Name, s.ref.encode())
		}
	}
	w.tried = true
	var err error
	if cur == nil {
		err = expired(ctx, wctx, t.rows.Insert(wctx, body))
		if c == condUpsert && errors.Is(err, entity.ErrAlreadyExists) {
			return &raced{err} // inserted meanwhile: read it and replace it
		}
	} else {
		body.ETag = cur.ETag
		if chain, ok := cur.Properties[wtoken.Property]; ok {
			// Extend the version's chain of write tokens, so that a write
			// whose reply was lost is recognised in the version that
			// replaced it (entity.Table.WithWriteTokens).
			body.Properties[wtoken.Property] = chain
		}
		err = expired(ctx, wctx, t.rows.Update(wctx, body, entity.Replace))
		if c == condUpsert && errors.Is(err, entity.ErrNotFound) {
			return &raced{err} // deleted meanwhile: insert it
		}
	}
	if err != nil {
		return err
	}
	w.etag = body.ETag
	w.old = have
	return nil
}

// expired returns err, the answer to an entity write made with wctx (ctx
// with the write's deadline), as ErrUploadExpired when the deadline ended
// the write before anything was sent, and otherwise with the deadline
// named (an outcome left unknown when a try may have been sent).
func expired(ctx, wctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil || !errors.Is(wctx.Err(), context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, entity.ErrOutcomeUnknown) {
		return fmt.Errorf("large: the entity's write was cut off at its deadline, half of Config.Grace after its uploads began: %w", err)
	}
	return fmt.Errorf("%w (the entity's write was not sent: %v)", ErrUploadExpired, err)
}

// upload writes the blobs of todo, all at once.
func (w *writer[T]) upload(ctx context.Context, todo []*slot) error {
	t := w.t
	o := owner{pk: w.d.PartitionKey, rk: w.d.RowKey}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, s := range todo {
		wg.Go(func() {
			o := o
			o.prop = s.f.Name
			s.started = time.Now()
			s.sent = true
			var err error
			if s.data != nil {
				err = t.putBytes(ctx, s.sum, o, s.data)
				s.up = s.sum
			} else {
				s.up, err = t.putStream(ctx, s.name, o, s.r)
				s.r = nil // read: a Stream's value cannot be read twice
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			s.done = true
			s.ref = s.up
		})
	}
	wg.Wait()
	return errline.Join(errs...)
}

// cleanUp disposes of the blobs this write uploaded after it failed, but
// for those the entity may hold: when the outcome of the last entity
// write is unknown, its blobs are left to Sweep. An upload that failed
// may have stored its blob all the same (its reply lost, or cut off by
// ctx after the service executed it): its name is disposed of too, which
// costs a Delete Blob that finds nothing when it was not stored.
func (w *writer[T]) cleanUp(ctx context.Context, err error) {
	unknown := w.tried && errors.Is(err, entity.ErrOutcomeUnknown)
	var names []string
	for _, s := range w.slots {
		switch {
		case s.sent && !s.done:
			names = append(names, s.name)
		case !s.done || s.up.IsZero() || unknown && s.ref == s.up:
		default:
			names = append(names, s.up.Blob)
		}
	}
	w.t.enqueueDisposal(context.WithoutCancel(ctx), w.d.PartitionKey, w.d.RowKey, nil, names, 0)
}
