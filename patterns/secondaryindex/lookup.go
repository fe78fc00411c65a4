package secondaryindex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/entityfields"
	"github.com/tablekit/tablekit/internal/jsonscan"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// hit is one entry found by a lookup.
type hit[T any] struct {
	e        T // the copy, with the primary's keys
	pk, rk   string
	epk, erk string
}

// entryMeta reads the keys of an entry's primary.
type entryMeta struct {
	PartitionKey string
	RowKey       string
	TkPrimaryPK  string
	TkPrimaryRK  string
}

func (s *Set[T]) index(name string) (*index[T], error) {
	ix, ok := s.core.ByName[name]
	if !ok {
		return nil, &StepError{Step: "lookup", Index: name, Err: ErrUnknownIndex}
	}
	return ix, nil
}

// readers returns the table an index's entries are read from.
func (s *Set[T]) readers(ix *index[T]) *entity.Table[json.RawMessage] {
	if ix.Remote() {
		return s.copies
	}
	return s.raw
}

// decodeHit reads an entry as T with its primary's keys (and no ETag: the
// entry's is not the primary's): one decode of T, whose checks of the
// body it relies on, then one scan of the body for the four keys.
//
// An entry of an encrypted table's Set is read for its keys alone: it
// holds no copy of the encrypted values, and a lookup reads the primary
// (Verify).
func decodeHit[T any](raw []byte, keysOnly bool) (hit[T], error) {
	var h hit[T]
	if !keysOnly {
		if err := entity.Unmarshal(raw, &h.e); err != nil {
			return h, err
		}
	}
	m, err := entryKeys(raw)
	if err != nil {
		return h, err
	}
	h.pk, h.rk, h.epk, h.erk = m.TkPrimaryPK, m.TkPrimaryRK, m.PartitionKey, m.RowKey
	if keysOnly {
		return h, nil
	}
	return h, entityfields.SetSystem(&h.e, entityfields.System{PartitionKey: h.pk, RowKey: h.rk})
}

// entryKeys reads an entry's keys and its primary's from its JSON without
// decoding the rest, as entity.Unmarshal into an entryMeta would: each
// of them must be a string (an Edm.String, if annotated), or it is a
// *entity.DecodeError naming it.
func entryKeys(raw []byte) (entryMeta, error) {
	var m entryMeta
	sc := jsonscan.New(raw)
	err := sc.Members(func(name []byte, esc bool) error {
		var p jsonscan.Prop
		if err := sc.Value(&p); err != nil {
			return err
		}
		if esc {
			return nil // none of the four names has an escape
		}
		if prop, ok := bytes.CutSuffix(name, []byte("@odata.type")); ok {
			if entryKeyOf(&m, prop) != nil && (p.Kind != jsonscan.String || string(p.Val) != "Edm.String") {
				return &entity.DecodeError{Property: string(prop), Reason: fmt.Sprintf("stored as %.20s, not a string", p.Val)}
			}
			return nil
		}
		dst := entryKeyOf(&m, name)
		if dst == nil {
			return nil
		}
		switch p.Kind {
		case jsonscan.String:
		case jsonscan.Null:
			return nil // absent
		default:
			return &entity.DecodeError{Property: string(name), Reason: fmt.Sprintf("the JSON value %.20s, not a string", p.Val)}
		}
		v, ok := jsonscan.StringOf(p.Val, p.ValEsc)
		if !ok {
			return &entity.DecodeError{Property: string(name), Reason: "not a valid JSON string"}
		}
		*dst = v
		return nil
	})
	var de *entity.DecodeError
	if err != nil && !errors.As(err, &de) {
		err = &entity.DecodeError{Reason: "not a JSON object", Err: err}
	}
	return m, err
}

// entryKeyOf is the field of m that the property named name fills, or nil.
func entryKeyOf(m *entryMeta, name []byte) *string {
	switch string(name) {
	case "PartitionKey":
		return &m.PartitionKey
	case "RowKey":
		return &m.RowKey
	case PropPrimaryPK:
		return &m.TkPrimaryPK
	case PropPrimaryRK:
		return &m.TkPrimaryRK
	}
	return nil
}

// placed returns the index named name if its placement is (tableWide) or
// is not TableWide, and opts are valid: the lookups with a PartitionKey serve SamePartition
// and OtherPartition indexes, those without (LookupValue...) TableWide
// ones. paged says the lookup takes LookupOptions.After.
//
// On an encrypted table every lookup verifies (opts.Verify is set): it
// returns primaries read and decrypted, never the entries.
func (s *Set[T]) placed(step, name string, tableWide, paged bool, opts *LookupOptions) (*index[T], error) {
	ix, err := s.index(name)
	if err != nil {
		return nil, err
	}
	if opts.Limit < 0 {
		return nil, &ConfigError{Field: "LookupOptions.Limit", Reason: "is negative"}
	}
	if !paged && opts.paged() {
		return nil, &ConfigError{Field: "LookupOptions.After", Reason: "pages LookupAll and LookupValueAll only, whose order is the primaries' keys"}
	}
	if (ix.Placement == TableWide) != tableWide {
		return nil, &StepError{Step: step, Index: name, Err: fmt.Errorf("%w: the index is %s", ErrPlacement, ix.Placement)}
	}
	if s.core.Protected != nil {
		opts.Verify = true
	}
	return ix, nil
}

// Lookup returns the entity whose value in the unique index named index
// is value, among the primaries of partition pk: one point query, and one
// more with opts.Verify. No such entity is an error matching
// entity.ErrNotFound. A TableWide index is an error matching ErrPlacement:
// use LookupValue.
func (s *Set[T]) Lookup(ctx context.Context, index, pk, value string, opts LookupOptions) (T, error) {
	if err := s.ok(); err != nil {
		return *new(T), err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return *new(T), err
	}
	ix, err := s.placed("lookup", index, false, false, &opts)
	if err != nil {
		var zero T
		return zero, err
	}
	return s.lookupOne(ctx, ix, pk, value, opts)
}

// LookupValue returns the entity whose value in the unique TableWide
// index named index is value, wherever its partition: one point query
// (the entry's partition derives from the value), and one more with
// opts.Verify. No such entity is an error matching entity.ErrNotFound; an
// index that is not TableWide one matching ErrPlacement (use Lookup).
func (s *Set[T]) LookupValue(ctx context.Context, index, value string, opts LookupOptions) (T, error) {
	if err := s.ok(); err != nil {
		return *new(T), err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return *new(T), err
	}
	ix, err := s.placed("lookup", index, true, false, &opts)
	if err != nil {
		var zero T
		return zero, err
	}
	return s.lookupOne(ctx, ix, "", value, opts)
}

func (s *Set[T]) lookupOne(ctx context.Context, ix *index[T], pk, value string, opts LookupOptions) (T, error) {
	var zero T
	if !ix.Unique {
		return zero, &StepError{Step: "lookup", Index: ix.Name, Err: ErrNotUnique}
	}
	text, want, err := s.lookedUp(ix, value)
	if err != nil {
		return zero, err
	}
	for e, err := range s.point(ctx, ix, pk, text, want, opts) {
		return e, err
	}
	epk, erk := ix.entryAt(text, pk, "")
	return zero, &StepError{Step: "lookup", Index: ix.Name, PartitionKey: epk, RowKey: erk, Err: entity.ErrNotFound}
}

// LookupAll yields the entities whose value in the index named index is
// value, among the primaries of partition pk, in the order of their
// entries' keys (the primaries' RowKeys, for a non-unique index): a point
// query for a unique index, a range query otherwise. A TableWide index is
// an error matching ErrPlacement: use LookupValueAll.
//
// An entry that does not decode as T, or (with Verify) a primary that
// does not, is yielded as a *StepError naming its keys, and the sequence
// goes on with the next entry for as long as the caller ranges over it;
// any other error (a failed query) ends it.
func (s *Set[T]) LookupAll(ctx context.Context, index, pk, value string, opts LookupOptions) iter.Seq2[T, error] {
	if err := s.ok(); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	ix, err := s.placed("lookup", index, false, true, &opts)
	if err != nil {
		return fail[T](err)
	}
	return s.lookupAll(ctx, ix, pk, value, opts)
}

// LookupValueAll yields the entities whose value in the TableWide index
// named index is value, wherever their partitions, in the order of the
// primaries' keys (PartitionKey, then RowKey): a point query for a unique
// index, one range query in one partition otherwise (the value's bucket).
// Errors are yielded as by LookupAll; an index that is not TableWide is an
// error matching ErrPlacement (use LookupAll).
func (s *Set[T]) LookupValueAll(ctx context.Context, index, value string, opts LookupOptions) iter.Seq2[T, error] {
	if err := s.ok(); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	ix, err := s.placed("lookup", index, true, true, &opts)
	if err != nil {
		return fail[T](err)
	}
	return s.lookupAll(ctx, ix, "", value, opts)
}

func (s *Set[T]) lookupAll(ctx context.Context, ix *index[T], pk, value string, opts LookupOptions) iter.Seq2[T, error] {
	value, want, err := s.lookedUp(ix, value)
	if err != nil {
		return fail[T](err)
	}
	if ix.Unique {
		return s.point(ctx, ix, pk, value, want, opts)
	}
	from, to := ix.exactRange(value)
	q := s.rangeQuery(ix, ix.entryPK(value, pk), from, to, opts)
	if opts.paged() {
		// The entries are in the order of their primaries' keys: start
		// after the entry of the primary After.
		a := opts.After
		switch c := keys.Compare(a.PartitionKey, pk); {
		case ix.Placement == TableWide:
			q = s.rangeQueryAfter(ix, ix.entryPK(value, pk), ix.entryRK(value, a.PartitionKey, a.RowKey), to, opts)
		case c == 0:
			q = s.rangeQueryAfter(ix, ix.entryPK(value, pk), ix.entryRK(value, pk, a.RowKey), to, opts)
		case c > 0:
			return func(func(T, error) bool) {} // the partition's primaries all come before After
		}
	}
	return s.scan(ctx, ix, q, want, opts)
}

// LookupPrefix yields the entities whose value in the index named index
// starts with prefix, among the primaries of partition pk, in the order of
// the values: one range query ("RowKey ge 'email_a' and RowKey lt
// 'email_b'", guide §6.1). An entry or primary that does not decode is
// yielded as an error and the sequence goes on, as for LookupAll. A
// TableWide index is an error matching ErrPlacement: use
// LookupValuePrefix.
func (s *Set[T]) LookupPrefix(ctx context.Context, index, pk, prefix string, opts LookupOptions) iter.Seq2[T, error] {
	if err := s.ok(); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	ix, err := s.placed("lookup", index, false, false, &opts)
	if err != nil {
		return fail[T](err)
	}
	if err := ix.prefixable("lookup"); err != nil {
		return fail[T](err)
	}
	from, to := ix.prefixRange(prefix)
	return s.scan(ctx, ix, s.rangeQuery(ix, ix.entryPK("", pk), from, to, opts), nil, opts)
}

// LookupValuePrefix yields the entities whose value in the TableWide index
// named index starts with prefix, wherever their partitions, in the order
// of the values (then of the primaries' keys, for a non-unique index):
// exact and ordered, it costs one range query per bucket (Index.Buckets
// queries, their first pages read Config.Concurrency at once, the next
// ones as the merge needs them), merged as they are read. Errors
// are yielded as by LookupAll; an index that is not TableWide is an error
// matching ErrPlacement (use LookupPrefix). A bucket whose first page
// fails ends the lookup before any entity with a *StepError naming the
// index and the partition of the first failing bucket in bucket order;
// the reads of the buckets after it are cancelled and none after it is
// started.
func (s *Set[T]) LookupValuePrefix(ctx context.Context, index, prefix string, opts LookupOptions) iter.Seq2[T, error] {
	if err := s.ok(); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	ix, err := s.placed("lookup", index, true, false, &opts)
	if err != nil {
		return fail[T](err)
	}
	if err := ix.prefixable("lookup"); err != nil {
		return fail[T](err)
	}
	from, to := ix.prefixRange(prefix)
	sources := make([]source, 0, ix.buckets)
	for b := range keys.Buckets(ix.buckets) {
		sources = append(sources, source{epk: ix.prefix + b, query: s.rangeQuery(ix, ix.prefix+b, from, to, opts)})
	}
	return s.scan(ctx, ix, mergeByRowKey(ix.Name, sources, s.cfg.Concurrency), nil, opts)
}

// rangeQuery is the query of the entries of ix in partition epk with
// RowKeys from from to to. Its errors are *StepErrors naming ix and epk.
func (s *Set[T]) rangeQuery(ix *index[T], epk, from, to string, opts LookupOptions) func(context.Context) iter.Seq2[json.RawMessage, error] {
	return s.query(ix, epk, filter.PK(epk).And(filter.RowKeyRange(from, to)), opts)
}

// rangeQueryAfter is rangeQuery of the RowKeys after after, up to to.
func (s *Set[T]) rangeQueryAfter(ix *index[T], epk, after, to string, opts LookupOptions) func(context.Context) iter.Seq2[json.RawMessage, error] {
	return s.query(ix, epk, filter.PK(epk).And(filter.Gt(filter.RowKeyProperty, after)).And(filter.Lt(filter.RowKeyProperty, to)), opts)
}

// query is the query of the entries of ix in partition epk that f
// selects.
func (s *Set[T]) query(ix *index[T], epk string, f filter.Expr, opts LookupOptions) func(context.Context) iter.Seq2[json.RawMessage, error] {
	q := entity.Query{Filter: f}
	if !opts.Verify {
		q.Limit = opts.Limit
	}
	return func(ctx context.Context) iter.Seq2[json.RawMessage, error] {
		return func(yield func(json.RawMessage, error) bool) {
			for raw, err := range s.readers(ix).Query(ctx, q) {
				if err != nil {
					err = &StepError{Step: "lookup: read entries", Index: ix.Name, PartitionKey: epk, Err: err}
				}
				if !yield(raw, err) || err != nil {
					return
				}
			}
		}
	}
}

// source is one bucket's query of a merge.
type source struct {
	epk   string
	query func(context.Context) iter.Seq2[json.RawMessage, error]
}

// mergeByRowKey merges queries that each yield in RowKey order into one
// sequence in RowKey order, reading them side by side: the first pages
// concurrency at once, in the sources' order. Of several sources whose
// first page fails, the error of the first in that order is yielded: a
// failure cancels the sources after it and starts none of them, while
// those before it finish. A cancelled ctx starts no more.
func mergeByRowKey(index string, sources []source, concurrency int) func(context.Context) iter.Seq2[json.RawMessage, error] {
	return func(ctx context.Context) iter.Seq2[json.RawMessage, error] {
		return func(yield func(json.RawMessage, error) bool) {
			type head struct {
				epk    string
				next   func() (json.RawMessage, error, bool)
				stop   func()
				cancel context.CancelFunc
				raw    json.RawMessage
				rk     string
			}
			var heads []*head
			defer func() {
				for _, h := range heads {
					h.stop()
					h.cancel()
				}
			}()
			// advance reads the next entry of h; false when h is done.
			advance := func(h *head) (bool, error) {
				raw, err, ok := h.next()
				if !ok {
					return false, nil
				}
				if err != nil {
					return false, err
				}
				// Only the keys: an entry whose other properties do not
				// decode is yielded as one bad row by scan, not the end.
				var m struct{ PartitionKey, RowKey string }
				if err := entity.Unmarshal(raw, &m); err != nil {
					return false, &StepError{Step: "lookup: decode entry keys", Index: index, PartitionKey: h.epk, Err: err}
				}
				h.raw, h.rk = raw, m.RowKey
				return true, nil
			}
			for _, src := range sources {
				hctx, cancel := context.WithCancel(ctx)
				next, stop := iter.Pull2(src.query(hctx))
				heads = append(heads, &head{epk: src.epk, next: next, stop: stop, cancel: cancel})
			}
			// The first pages, concurrency at once.
			live := make([]*head, len(heads))
			err := indexset.Ordered(ctx, len(heads), concurrency,
				func(i int) error {
					ok, err := advance(heads[i])
					if ok {
						live[i] = heads[i]
					}
					return err
				},
				func(i int) { heads[i].cancel() },
				func(i int) error {
					return &StepError{Step: "lookup: read entries", Index: index, PartitionKey: heads[i].epk, Err: ctx.Err()}
				})
			if err != nil {
				yield(nil, err)
				return
			}
			live = slices.DeleteFunc(live, func(h *head) bool { return h == nil })
			for len(live) > 0 {
				m := 0
				for i := 1; i < len(live); i++ {
					if keys.Compare(live[i].rk, live[m].rk) < 0 {
						m = i
					}
				}
				h := live[m]
				if !yield(h.raw, nil) {
					return
				}
				ok, err := advance(h)
				if err != nil {
					yield(nil, err)
					return
				}
				if !ok {
					live = slices.Delete(live, m, m+1)
				}
			}
		}
	}
}

func fail[T any](err error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		yield(zero, err)
	}
}

// lookedUp returns the text of value in ix's keys and, for an Encrypted
// index, the check a verifying lookup makes of each primary read: that
// it holds value itself, not another value of the same beacon.
func (s *Set[T]) lookedUp(ix *index[T], value string) (string, func(*T) bool, error) {
	text, err := ix.keyText(value)
	if err != nil || ix.beacon == nil {
		return text, nil, err
	}
	return text, func(e *T) bool {
		v, ok := ix.Key(e)
		return ok && v == value
	}, nil
}

// prefixable refuses a prefix lookup of an Encrypted index: its keys are
// beacons, which answer equality only.
func (ix *index[T]) prefixable(step string) error {
	if ix.beacon != nil {
		return &StepError{Step: step, Index: ix.Name, Err: fmt.Errorf("%w: its entries are keyed by the beacons of %s", ErrEncrypted, ix.Encrypted)}
	}
	return nil
}

// point reads a unique entry (value is its text in the keys); want, when
// not nil, is what a primary must also satisfy to be returned.
func (s *Set[T]) point(ctx context.Context, ix *index[T], pk, value string, want func(*T) bool, opts LookupOptions) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		epk, erk := ix.entryAt(value, pk, "")
		if err := keys.Validate(erk); err != nil {
			yield(zero, &KeyError{Index: ix.Name, Value: value, Err: err})
			return
		}
		raw, err := s.readers(ix).Get(ctx, epk, erk)
		if errors.Is(err, entity.ErrNotFound) {
			return
		}
		if err != nil {
			yield(zero, err)
			return
		}
		h, err := decodeHit[T](raw, s.core.Protected != nil)
		if err != nil {
			yield(zero, entryError(raw, err))
			return
		}
		if opts.paged() && compareKeys(h.pk, h.rk, opts.After) <= 0 {
			return // not after the page's last
		}
		if !opts.Verify {
			yield(h.e, nil)
			return
		}
		e, ok, err := s.verify(ctx, ix, &h, want, opts)
		if err != nil {
			yield(zero, err)
		} else if ok {
			yield(e, nil)
		}
	}
}

// scan reads the entries of ix that query yields, in its order.
func (s *Set[T]) scan(ctx context.Context, ix *index[T], query func(context.Context) iter.Seq2[json.RawMessage, error], want func(*T) bool, opts LookupOptions) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		batch := make([]hit[T], 0, 2*s.cfg.Concurrency)
		yielded := 0
		// A verified lookup yields a primary once: two entries of it (a
		// value changed, its old entry not removed yet) can each be
		// verified, when the primary changes between the two reads.
		var seen map[[2]string]bool
		if opts.Verify {
			seen = map[[2]string]bool{}
		}
		// flush verifies a batch of hits in parallel and yields them in
		// order.
		flush := func() bool {
			if len(batch) == 0 {
				return true
			}
			type result struct {
				e   T
				key [2]string
				ok  bool
				err error
			}
			out := make([]result, len(batch))
			sem := make(chan struct{}, s.cfg.Concurrency)
			var wg sync.WaitGroup
			for i := range batch {
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem }()
					out[i].key = [2]string{batch[i].pk, batch[i].rk}
					out[i].e, out[i].ok, out[i].err = s.verify(ctx, ix, &batch[i], want, opts)
				})
			}
			wg.Wait()
			batch = batch[:0]
			for _, r := range out {
				if r.err != nil {
					if !badRow(r.err) {
						yield(zero, r.err)
						return false
					}
					if !yield(zero, r.err) {
						return false // one bad primary: the caller decides
					}
					continue
				}
				if !r.ok || seen[r.key] {
					continue
				}
				seen[r.key] = true
				if !yield(r.e, nil) {
					return false
				}
				if yielded++; opts.Limit > 0 && yielded >= opts.Limit {
					return false
				}
			}
			return true
		}
		for raw, err := range query(ctx) {
			if err != nil {
				yield(zero, err)
				return
			}
			h, err := decodeHit[T](raw, s.core.Protected != nil)
			if err != nil {
				// One entry that does not decode: its error, naming it,
				// and the lookup goes on if the caller does.
				if !yield(zero, entryError(raw, err)) {
					return
				}
				continue
			}
			if !opts.Verify {
				if !yield(h.e, nil) {
					return
				}
				if yielded++; opts.Limit > 0 && yielded >= opts.Limit {
					return
				}
				continue
			}
			if batch = append(batch, h); len(batch) == cap(batch) && !flush() {
				return
			}
		}
		flush()
	}
}

// entryError names the entry raw that did not decode.
func entryError(raw []byte, err error) error {
	var m entryMeta
	_ = entity.Unmarshal(raw, &m)
	return &StepError{Step: "lookup: decode entry", PartitionKey: m.PartitionKey, RowKey: m.RowKey, Err: err}
}

// verify reads the primary of a hit and returns it if it still has the
// hit's entry (and satisfies want, when not nil); otherwise ok is false,
// and the entry is repaired when opts ask for it. A primary that has the
// entry but not the value looked up (an Encrypted index's other value of
// the same beacon) is not returned, and its entry is not an orphan.
func (s *Set[T]) verify(ctx context.Context, ix *index[T], h *hit[T], want func(*T) bool, opts LookupOptions) (T, bool, error) {
	var zero T
	p, found, err := s.read(ctx, h.pk, h.rk)
	if err != nil {
		return zero, false, &StepError{Step: "lookup: read primary", Index: ix.Name, PartitionKey: h.pk, RowKey: h.rk, Err: err}
	}
	if found && s.holds(ix, &p, h.pk, h.rk, h.epk, h.erk) {
		if want != nil && !want(&p.E) {
			return zero, false, nil
		}
		return p.E, true, nil
	}
	if opts.Repair {
		f := drift.Finding{Kind: drift.Orphan, Index: ix.Name, Primary: keyOfDrift(h.pk, h.rk), Entry: s.entryKey(ix, h.epk, h.erk)}
		if err := s.Repair(ctx, f); err != nil && !errors.Is(err, drift.ErrRaced) {
			return zero, false, err
		}
	}
	return zero, false, nil
}

// entryKey is the drift.Key of an entry of ix.
func (s *Set[T]) entryKey(ix *index[T], epk, erk string) drift.Key {
	k := drift.Key{PartitionKey: epk, RowKey: erk}
	if ix.Remote() && s.core.Other {
		k.Table = s.core.Entries.Name()
	}
	return k
}
