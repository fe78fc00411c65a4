package lookup

import (
	"context"
	"encoding/json"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/pipeline"
	"github.com/tablekit/tablekit/keys"
)

// Config says what a Cache holds and how fresh it keeps it. Each field
// says what 0 means.
type Config struct {
	// Query is the data the cache holds: a partition
	// (filter.PK("departments")), a range, or a whole small table (the zero
	// Query). Its Select, if set, limits the properties held. Its Limit and
	// PageSize apply to each load.
	Query entity.Query
	// TTL is how long a load serves lookups before the next lookup
	// revalidates it; 0 means 1 minute; negative means only when asked
	// (Refresh, Reload).
	TTL time.Duration
	// Margin is how far before the newest Timestamp the cache holds a
	// revalidation asks for changes: Timestamps are stamped by the
	// service's servers, whose clocks differ, and a change becomes visible
	// a little after it is stamped. 0 means 1 minute, which costs nothing
	// but re-reading the entities changed in the minute before the newest
	// change; negative means no margin.
	Margin time.Duration
	// FullEvery makes every FullEvery'th load a full reload, which also
	// drops deleted entities (a query of what changed cannot see a
	// delete); 0 means 10; 1 means every load is full.
	FullEvery int
	// Timeout bounds one load, which runs on behalf of every lookup
	// waiting for it, not under any one caller's context; 0 means 30 s.
	Timeout time.Duration
	// Now is the clock the TTL is measured with; nil means time.Now. The
	// service's Timestamps and the Date of its answers, not this clock,
	// decide what a revalidation asks for, so a skewed client clock delays
	// or hastens revalidations but never makes one miss a change (on a
	// client built with entity.ClientOptions: see the package's Clocks).
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.TTL == 0 {
		c.TTL = time.Minute
	}
	switch {
	case c.Margin == 0:
		c.Margin = time.Minute
	case c.Margin < 0:
		c.Margin = 0
	}
	if c.FullEvery <= 0 {
		c.FullEvery = 10
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// key addresses one cached entity.
type key struct {
	pk, rk string
}

// Snapshot is one load of the cache: immutable, so that a reader that
// holds it sees one consistent state however many lookups it makes (a
// join of many rows against one version of the lookup data).
type Snapshot[T any] struct {
	items  map[key]T
	bad    map[key]error // rows the data holds that do not decode as T
	sorted []key         // items' keys in the service's order, made when first asked
	once   sync.Once

	// Loaded is when the load that made it started, by Config.Now.
	Loaded time.Time
	// Newest is the newest Timestamp among the entities held, by the
	// service's clock.
	Newest time.Time
	// Full reports a full load; otherwise a revalidation, which read only
	// the entities changed since Newest - Margin.
	Full bool
	// Read is the number of entities the load read.
	Read int

	sinceFull int       // revalidations since the last full load
	mark      time.Time // the next revalidation asks for changes since mark - Margin
}

// Get returns the entity with keys pk, rk and whether it is held. The
// value shares memory with the snapshot: do not change its slices or maps.
func (s *Snapshot[T]) Get(pk, rk string) (T, bool) {
	if s == nil {
		var zero T
		return zero, false
	}
	v, ok := s.items[key{pk, rk}]
	return v, ok
}

// Failed returns the rows of the data that did not decode as T, each a
// *RowError naming its keys, in no particular order. They are not held:
// Get reports them absent, and Cache.Get returns their error.
func (s *Snapshot[T]) Failed() []error {
	if s == nil {
		return nil
	}
	out := make([]error, 0, len(s.bad))
	for _, err := range s.bad {
		out = append(out, err)
	}
	return out
}

// Len is the number of entities held.
func (s *Snapshot[T]) Len() int {
	if s == nil {
		return 0
	}
	return len(s.items)
}

// All yields the entities held in the service's order, PartitionKey then
// RowKey.
func (s *Snapshot[T]) All() iter.Seq[T] {
	if s == nil {
		return func(func(T) bool) {}
	}
	s.once.Do(func() {
		s.sorted = make([]key, 0, len(s.items))
		for k := range s.items {
			s.sorted = append(s.sorted, k)
		}
		slices.SortFunc(s.sorted, func(a, b key) int {
			if c := keys.Compare(a.pk, b.pk); c != 0 {
				return c
			}
			return keys.Compare(a.rk, b.rk)
		})
	})
	return func(yield func(T) bool) {
		for _, k := range s.sorted {
			if !yield(s.items[k]) {
				return
			}
		}
	}
}

// Cache is a read-through cache of small, rarely changing lookup data
// (departments, product categories) that a service joins in memory
// instead of copying into every entity that refers to it (design guide
// §5, "join in the client"). It is safe for concurrent use; lookups take
// no lock.
type Cache[T any] struct {
	rows *entity.Table[json.RawMessage] // the table, each entity read as sent
	// codec decodes the entities: the table given to New, which decrypts
	// and checks them when it is protected (package crypt).
	codec *entity.Table[T]
	cfg   Config
	snap  atomic.Pointer[Snapshot[T]]

	mu     sync.Mutex
	flight *flight[T] // the last load started; loads run one at a time
}

// flight is one load, shared by the lookups that wait for it.
type flight[T any] struct {
	done chan struct{}
	snap *Snapshot[T]
	err  error
}

// New returns a cache of the data cfg.Query selects in table t. Nothing
// is read until the first lookup (or Reload). The cache only reads t, a
// table that other code writes: it has no Provision, and t's owner
// creates it (t.Provision, or account.Provision with t).
func New[T any](t *entity.Table[T], cfg Config) (*Cache[T], error) {
	if t == nil {
		return nil, &ConfigError{Field: "table", Reason: ReasonNil}
	}
	if cfg.FullEvery < 0 {
		return nil, &ConfigError{Field: "Config.FullEvery", Reason: ReasonNegative}
	}
	if _, err := cfg.Query.Filter.Build(); err != nil {
		return nil, &ConfigError{Field: "Config.Query", Reason: err.Error()}
	}
	rows, err := entity.ViewAs[json.RawMessage](t) // a protected table's filters are checked

	if err != nil {
		return nil, err
	}
	var probe T
	if _, err := entity.SystemOf(&probe); err != nil {
		return nil, &ConfigError{Field: "type T", Reason: err.Error()}
	}
	return &Cache[T]{rows: rows, codec: t, cfg: cfg.withDefaults()}, nil
}

// Get returns the entity with keys pk, rk from the cache, loading or
// revalidating it first when it is older than the TTL. An entity the data
// does not hold is a *NotFoundError (errors.Is(err, entity.ErrNotFound)).
func (c *Cache[T]) Get(ctx context.Context, pk, rk string) (T, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return *new(T), err
	}
	if err := c.ok(); err != nil {
		var zero T
		return zero, err
	}
	s, err := c.Snapshot(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	v, ok := s.Get(pk, rk)
	if !ok {
		if err := s.bad[key{pk, rk}]; err != nil {
			return v, err
		}
		return v, &NotFoundError{PartitionKey: pk, RowKey: rk}
	}
	return v, nil
}

// Snapshot returns the cache's current snapshot, loading or revalidating
// it first when it is older than the TTL: for joins that look many
// entities up in one consistent version.
func (c *Cache[T]) Snapshot(ctx context.Context) (*Snapshot[T], error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	if err := c.ok(); err != nil {
		return nil, err
	}
	if s := c.snap.Load(); c.fresh(s) {
		return s, nil
	}
	return c.load(ctx, false, false)
}

// Cached returns the last snapshot loaded, without any request and
// whatever its age; nil before the first load.
func (c *Cache[T]) Cached() *Snapshot[T] {
	if c == nil {
		return nil
	}
	return c.snap.Load()
}

// ok refuses a nil or zero Cache, which New never returns.
func (c *Cache[T]) ok() error {
	if c == nil || c.rows == nil {
		return &ConfigError{Field: "Cache", Reason: ReasonZeroValue}
	}
	return nil
}

// Refresh revalidates the cache now: a query of the entities changed since
// the newest Timestamp held (less Config.Margin), merged into a new
// snapshot, or a full reload every Config.FullEvery'th time. It returns
// once a load that started after the call has finished, so a change
// written before the call is served afterwards.
func (c *Cache[T]) Refresh(ctx context.Context) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := c.ok(); err != nil {
		return err
	}
	_, err := c.load(ctx, false, true)
	return err
}

// Reload reads the whole query again, which also drops entities deleted
// since the last full load.
func (c *Cache[T]) Reload(ctx context.Context) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := c.ok(); err != nil {
		return err
	}
	_, err := c.load(ctx, true, true)
	return err
}

func (c *Cache[T]) fresh(s *Snapshot[T]) bool {
	if s == nil {
		return false
	}
	return c.cfg.TTL < 0 || c.cfg.Now().Sub(s.Loaded) < c.cfg.TTL
}

// load joins the load under way (a lookup), or starts a new one after it
// (forced: Refresh and Reload), and waits for it.
func (c *Cache[T]) load(ctx context.Context, full, forced bool) (*Snapshot[T], error) {
	c.mu.Lock()
	prev := c.flight
	if !forced {
		if s := c.snap.Load(); c.fresh(s) {
			c.mu.Unlock()
			return s, nil
		}
		if prev != nil && !isDone(prev) {
			c.mu.Unlock()
			return wait(ctx, prev)
		}
	}
	f := &flight[T]{done: make(chan struct{})}
	c.flight = f
	c.mu.Unlock()
	// The load serves every waiter, so it runs under its own deadline,
	// not the first caller's.
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.Timeout)
	go func() {
		defer cancel()
		defer close(f.done)
		if prev != nil {
			<-prev.done
		}
		f.snap, f.err = c.run(lctx, full)
	}()
	return wait(ctx, f)
}

func isDone[T any](f *flight[T]) bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

func wait[T any](ctx context.Context, f *flight[T]) (*Snapshot[T], error) {
	select {
	case <-f.done:
		return f.snap, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// stamp is what a load reads of every entity besides its value.
type stamp struct {
	PartitionKey string
	RowKey       string
	Timestamp    time.Time `table:",timestamp"`
}

// run makes the next snapshot: a full load, or the last one with what
// changed since merged in.
func (c *Cache[T]) run(ctx context.Context, full bool) (*Snapshot[T], error) {
	old := c.snap.Load()
	full = full || old == nil || old.Newest.IsZero() || old.sinceFull+1 >= c.cfg.FullEvery
	next := &Snapshot[T]{Loaded: c.cfg.Now(), Full: full}
	q := c.cfg.Query
	if full {
		next.items = map[key]T{}
		next.bad = map[key]error{}
	} else {
		next.items = old.items // copied before the first change
		next.bad = old.bad
		next.Newest = old.Newest
		next.sinceFull = old.sinceFull + 1
		q.Filter = q.Filter.And(filter.Ge("Timestamp", old.mark.Add(-c.cfg.Margin)))
	}
	copied := full
	// The call's answers date the load's start on the service's clock.
	qctx, call := pipeline.WithCall(ctx)
	for raw, err := range c.rows.Query(qctx, q) {
		if err != nil {
			return nil, &LoadError{Full: full, Err: err}
		}
		var s stamp
		if err := entity.Unmarshal(raw, &s); err != nil {
			return nil, &LoadError{Full: full, Err: err}
		}
		var v T
		verr := c.codec.Unmarshal(ctx, raw, &v)
		if !copied {
			next.items = make(map[key]T, len(old.items)+1)
			for k, v := range old.items {
				next.items[k] = v
			}
			next.bad = make(map[key]error, len(old.bad))
			for k, e := range old.bad {
				next.bad[k] = e
			}
			copied = true
		}
		k := key{s.PartitionKey, s.RowKey}
		if verr != nil {
			// This row alone: fail-closed (not held, not served stale),
			// and the others load.
			delete(next.items, k)
			next.bad[k] = &RowError{PartitionKey: s.PartitionKey, RowKey: s.RowKey, Err: verr}
		} else {
			delete(next.bad, k)
			next.items[k] = v
		}
		next.Read++
		if s.Timestamp.After(next.Newest) {
			next.Newest = s.Timestamp
		}
	}
	// A change the load did not see was stamped after the load read its
	// entity: after the load started. The newest Timestamp seen is the
	// service's clock, but an entity changed during a load of several
	// pages can show a Timestamp later than a change the load missed in
	// an earlier page; the load's start is that bound, taken on the
	// service's clock too (the Date of the last answer less the local
	// time since the first request left: pipeline.Call.FirstTryNotBefore),
	// so no skew of this process's clock moves it. Only without a dated
	// answer (a client without entity.ClientOptions' policies) is it
	// Loaded, by Config.Now. The earlier of the two is the mark.
	start := next.Loaded
	if t, ok := call.FirstTryNotBefore(); ok {
		start = t
	}
	next.mark = next.Newest
	if start.Before(next.mark) {
		next.mark = start
	}
	c.snap.Store(next)
	return next, nil
}
