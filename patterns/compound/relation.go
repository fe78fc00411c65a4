package compound

import (
	"context"
	"iter"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/entityfields"
	"github.com/tablekit/tablekit/keys"
)

// Config declares the keys of one relation.
type Config[P, C any] struct {
	// Prefix is the first part of every key ("empid"), so that the
	// relation's entities do not mix with other types in the partition;
	// "" means none. It must be a valid key.
	Prefix string
	// Parent encodes the parent's id (Int(6) for the guide's employee ids).
	Parent Part[P]
	// Child encodes the child's id under its parent (Int(4) for a year).
	Child Part[C]
}

// Relation is one-to-many data kept in a partition under compound RowKeys:
// the children of type T of each parent, each child found by one point
// query (Get) and all of a parent's children, or those between two child
// ids, by one range query (Children, Between). It is safe for concurrent
// use.
type Relation[T, P, C any] struct {
	t   *entity.Table[T]
	cfg Config[P, C]
}

// New returns the relation of cfg over table t.
func New[T, P, C any](t *entity.Table[T], cfg Config[P, C]) (*Relation[T, P, C], error) {
	if t == nil {
		return nil, &ConfigError{Field: "table", Reason: ReasonNil}
	}
	if !cfg.Parent.ok() {
		return nil, &ConfigError{Field: "Config.Parent", Reason: ReasonZeroPart}
	}
	if !cfg.Child.ok() {
		return nil, &ConfigError{Field: "Config.Child", Reason: ReasonZeroPart}
	}
	if err := keys.Validate(cfg.Prefix); err != nil {
		return nil, &ConfigError{Field: "Config.Prefix", Reason: err.Error()}
	}
	return &Relation[T, P, C]{t: t, cfg: cfg}, nil
}

// ok refuses a nil or zero Relation, which New never returns.
func (r *Relation[T, P, C]) ok() error {
	if r == nil || r.t == nil || !r.cfg.Parent.ok() || !r.cfg.Child.ok() {
		return &ConfigError{Field: "Relation", Reason: ReasonZeroValue}
	}
	return nil
}

// parts returns the key parts before the child's: the prefix, if any, and
// the parent's id.
func (r *Relation[T, P, C]) parts(p P) ([]string, error) {
	ps, err := r.cfg.Parent.format(p)
	if err != nil {
		return nil, &KeyError{Part: "parent", Err: err}
	}
	if r.cfg.Prefix == "" {
		return []string{ps}, nil
	}
	return []string{r.cfg.Prefix, ps}, nil
}

// Key returns the RowKey of child c of parent p: with prefix "empid",
// Int(6) and Int(4), Key(123, 2012) is "empid 000123 2012".
func (r *Relation[T, P, C]) Key(p P, c C) (string, error) {
	if err := r.ok(); err != nil {
		return "", err
	}
	parts, err := r.parts(p)
	if err != nil {
		return "", err
	}
	cs, err := r.cfg.Child.format(c)
	if err != nil {
		return "", &KeyError{Part: "child", Err: err}
	}
	key, err := keys.CompoundChecked(append(parts, cs)...)
	if err != nil {
		return "", &KeyError{Part: "key", Err: err}
	}
	return key, nil
}

// ParentKey returns the RowKey the parent's own entity may have, one part
// shorter than its children's ("empid 000123"): it sorts just before
// them and is not in Range.
func (r *Relation[T, P, C]) ParentKey(p P) (string, error) {
	if err := r.ok(); err != nil {
		return "", err
	}
	parts, err := r.parts(p)
	if err != nil {
		return "", err
	}
	key, err := keys.CompoundChecked(parts...)
	if err != nil {
		return "", &KeyError{Part: "key", Err: err}
	}
	return key, nil
}

// Parse returns the parent and child ids of a RowKey made by Key, and a
// *KeyError (errors.Is(err, ErrNotInRelation)) for any other string.
func (r *Relation[T, P, C]) Parse(rowKey string) (P, C, error) {
	if err := r.ok(); err != nil {
		var p P
		var c C
		return p, c, err
	}
	var p P
	var c C
	parts, err := keys.SplitCompound(rowKey)
	if err != nil {
		return p, c, &KeyError{Part: "key", Key: rowKey, Err: err}
	}
	if r.cfg.Prefix != "" {
		if len(parts) == 0 || parts[0] != r.cfg.Prefix {
			return p, c, &KeyError{Part: "prefix", Key: rowKey, Err: ErrNotInRelation}
		}
		parts = parts[1:]
	}
	if len(parts) != 2 {
		return p, c, &KeyError{Part: "key", Key: rowKey, Err: ErrNotInRelation}
	}
	if p, err = r.cfg.Parent.parse(parts[0]); err != nil {
		return p, c, &KeyError{Part: "parent", Key: rowKey, Err: err}
	}
	if c, err = r.cfg.Child.parse(parts[1]); err != nil {
		return p, c, &KeyError{Part: "child", Key: rowKey, Err: err}
	}
	// Only the canonical key of (p, c) is the relation's: "0123" is not a
	// key of Int(6), even if it parses.
	if again, err := r.Key(p, c); err != nil || again != rowKey {
		return p, c, &KeyError{Part: "key", Key: rowKey, Err: ErrNotInRelation}
	}
	return p, c, nil
}

// Range returns the RowKey range [from, to) of the children of p — the
// guide's "RowKey ge 'empid_000123' and RowKey lt 'empid_000124'" — which
// leaves out the parent's own entity (ParentKey).
func (r *Relation[T, P, C]) Range(p P) (from, to string, err error) {
	if err := r.ok(); err != nil {
		return "", "", err
	}
	parts, err := r.parts(p)
	if err != nil {
		return "", "", err
	}
	_, to = keys.CompoundPrefix(parts...)
	// Compound(parts..., "") is the smallest key of a child: the parent's
	// key followed by the separator.
	return keys.Compound(append(parts, "")...), to, nil
}

// Between returns the RowKey range [Key(p, from), Key(p, to)): the
// children of p whose keys sort from from's on and before to's. For a
// part whose keys sort as its ids do, those are the ids in [from, to);
// for NewestFirst, whose keys sort newest first, the instants in
// (to, from] — In takes the window in the ids' own order.
func (r *Relation[T, P, C]) Between(p P, from, to C) (string, string, error) {
	if err := r.ok(); err != nil {
		return "", "", err
	}
	lo, err := r.Key(p, from)
	if err != nil {
		return "", "", err
	}
	hi, err := r.Key(p, to)
	if err != nil {
		return "", "", err
	}
	return lo, hi, nil
}

// Get reads child c of parent p in partition pk: one point query. A
// missing child is an error matching entity.ErrNotFound.
func (r *Relation[T, P, C]) Get(ctx context.Context, pk string, p P, c C) (T, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return *new(T), err
	}
	if err := r.ok(); err != nil {
		var zero T
		return zero, err
	}
	key, err := r.Key(p, c)
	if err != nil {
		var zero T
		return zero, err
	}
	return r.t.Get(ctx, pk, key)
}

// Children reads the children of parent p in partition pk, in key order:
// one range query (per page of 1,000). q's Filter, if any, narrows the
// range further (a partition scan within it); its Select, PageSize and
// Limit apply as in entity.Table.Query.
func (r *Relation[T, P, C]) Children(ctx context.Context, pk string, p P, q entity.Query) iter.Seq2[T, error] {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	if err := r.ok(); err != nil {
		return func(yield func(T, error) bool) {
			var zero T
			yield(zero, err)
		}
	}
	from, to, err := r.Range(p)
	return r.query(ctx, pk, from, to, err, q)
}

// ChildrenBetween reads the children of p in partition pk whose keys are
// in Between(p, from, to): one range query. For NewestFirst that is the
// instants in (to, from], to being the earlier: ChildrenIn reads a time
// window in time order.
func (r *Relation[T, P, C]) ChildrenBetween(ctx context.Context, pk string, p P, from, to C, q entity.Query) iter.Seq2[T, error] {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	if err := r.ok(); err != nil {
		return func(yield func(T, error) bool) {
			var zero T
			yield(zero, err)
		}
	}
	lo, hi, err := r.Between(p, from, to)
	return r.query(ctx, pk, lo, hi, err, q)
}

func (r *Relation[T, P, C]) query(ctx context.Context, pk, from, to string, err error, q entity.Query) iter.Seq2[T, error] {
	if err == nil {
		err = checkPartition(pk)
	}
	if err != nil {
		return func(yield func(T, error) bool) {
			var zero T
			yield(zero, err)
		}
	}
	q.Filter = filter.PK(pk).And(filter.RowKeyRange(from, to), q.Filter)
	return r.t.Query(ctx, q)
}

// Stamp writes the keys of child c of parent p in partition pk into e,
// keeping its ETag, so that e can be written with the table (Insert,
// Upsert, or a transaction with other entities of the partition).
func (r *Relation[T, P, C]) Stamp(e *T, pk string, p P, c C) error {
	if err := r.ok(); err != nil {
		return err
	}
	key, err := r.Key(p, c)
	if err != nil {
		return err
	}
	if err := checkPartition(pk); err != nil {
		return err
	}
	sys, err := entity.SystemOf(e)
	if err != nil {
		return err
	}
	sys.PartitionKey, sys.RowKey = pk, key
	return entityfields.SetSystem(e, entityfields.System(sys))
}

// Window is a span of child ids in the ids' own order: From ≤ id < To. For
// the time parts, Time and NewestFirst, that is chronological — From is
// the earlier instant — whichever way the part's keys sort, and exact to
// the 100 ns tick that ids are stored in: a bound between two ticks
// stands for the next tick, so the window holds exactly the ids id with
// From ≤ id < To. The zero time.Time, and instants outside .NET
// DateTime's range (years 1 to 9999), are no bound: Window{To: t} is every
// id before t, Window{From: t} every id from t on.
type Window[C any] struct {
	From, To C
}

// In returns the RowKey range [from, to) of the children of p whose ids
// are in w (see Window), from == to when there are none. For parts whose
// keys sort as their ids do it is Between(p, w.From, w.To); for
// NewestFirst it is the reverse span, exact to the tick.
func (r *Relation[T, P, C]) In(p P, w Window[C]) (from, to string, err error) {
	if err := r.ok(); err != nil {
		return "", "", err
	}
	if r.cfg.Child.window == nil {
		from, to, err := r.Between(p, w.From, w.To)
		if err != nil {
			return "", "", err
		}
		if keys.Compare(from, to) >= 0 {
			return from, from, nil
		}
		return from, to, nil
	}
	parts, err := r.parts(p)
	if err != nil {
		return "", "", err
	}
	first, end, err := r.Range(p)
	if err != nil {
		return "", "", err
	}
	lo, hi, empty := r.cfg.Child.window(w.From, w.To)
	if empty {
		return first, first, nil
	}
	key := func(part string) (string, error) {
		k, err := keys.CompoundChecked(append(parts[:len(parts):len(parts)], part)...)
		if err != nil {
			return "", &KeyError{Part: "key", Err: err}
		}
		return k, nil
	}
	from, to = first, end
	if lo != "" {
		if from, err = key(lo); err != nil {
			return "", "", err
		}
	}
	if hi != "" {
		if to, err = key(hi); err != nil {
			return "", "", err
		}
	}
	return from, to, nil
}

// ChildrenIn reads the children of p in partition pk whose ids are in w,
// From ≤ id < To in the ids' own order — for Time and NewestFirst a
// chronological window, From the earlier instant — in key order (newest
// first for NewestFirst): one range query, none when w is empty. q
// narrows it as for Children.
//
// With NewestFirst, ChildrenIn(ctx, pk, p, Window[time.Time]{From: t1,
// To: t2}, q) reads the children stamped t1 ≤ t < t2, where
// ChildrenBetween(ctx, pk, p, t2, t1, q) would read t1 < t ≤ t2
// (TestChildrenInIsChronological).
func (r *Relation[T, P, C]) ChildrenIn(ctx context.Context, pk string, p P, w Window[C], q entity.Query) iter.Seq2[T, error] {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	if err := r.ok(); err != nil {
		return func(yield func(T, error) bool) {
			var zero T
			yield(zero, err)
		}
	}
	from, to, err := r.In(p, w)
	if err == nil && from == to {
		if err := checkPartition(pk); err != nil {
			return func(yield func(T, error) bool) {
				var zero T
				yield(zero, err)
			}
		}
		return func(func(T, error) bool) {}
	}
	return r.query(ctx, pk, from, to, err, q)
}

// checkPartition refuses a PartitionKey the service would, before any
// request: a *KeyError naming the partition.
func checkPartition(pk string) error {
	if err := keys.Validate(pk); err != nil {
		return &KeyError{Part: "partition", Key: pk, Err: err}
	}
	return nil
}
