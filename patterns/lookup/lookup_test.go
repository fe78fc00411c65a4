package lookup_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/internal/clock"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/lookup"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// Department is lookup data: a department's name and cost center, which
// employees refer to by id. Version and Check are written together, so a
// reader that sees them disagree has seen a torn value.
type Department struct {
	PartitionKey string // "departments"
	RowKey       string // the department id
	Name         string
	CostCenter   string
	Version      int64
	Check        string
}

func dept(id string, v int64) *Department {
	return &Department{PartitionKey: "departments", RowKey: id, Name: "Dept " + id, CostCenter: fmt.Sprint("CC-", v), Version: v, Check: fmt.Sprint(v)}
}

func setup(t testing.TB, e *integration.Env, n int) *entity.Table[Department] {
	t.Helper()
	tbl, err := entity.NewTable[Department](e.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	ds := make([]Department, n)
	for i := range ds {
		ds[i] = *dept(fmt.Sprintf("d%03d", i), 1)
	}
	// Another partition, which the cache must not hold.
	ds = append(ds, Department{PartitionKey: "other", RowKey: "d000", Name: "not lookup data"})
	if _, err := tbl.BulkWrite(context.Background(), ds, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	return tbl
}

var departments = entity.Query{Filter: filter.PK("departments")}

// TestLoadOnce: the first lookup loads the partition with one query, the
// next thousand cost nothing, a missing entity is ErrNotFound without a
// request.
func TestLoadOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	tbl := setup(t, env.With(meter.Policy()), 50)
	c, err := lookup.New(tbl, lookup.Config{Query: departments})
	if err != nil {
		t.Fatal(err)
	}
	if c.Cached() != nil {
		t.Error("a snapshot before the first lookup")
	}
	before := meter.Snapshot()
	for i := range 1000 {
		d, err := c.Get(ctx, "departments", fmt.Sprintf("d%03d", i%50))
		if err != nil || d.Name != fmt.Sprintf("Dept d%03d", i%50) {
			t.Fatalf("Get: %+v, %v", d, err)
		}
	}
	if _, err := c.Get(ctx, "other", "d000"); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("an entity outside the query: %v", err)
	}
	used := meter.Snapshot().Sub(before)
	if used.Total() != 1 || used.Count(cost.Table, cost.OpQuery) != 1 {
		t.Errorf("1,000 lookups cost %v, want one query", used)
	}
	s := c.Cached()
	if s == nil || s.Len() != 50 || !s.Full || s.Read != 50 || s.Newest.IsZero() {
		t.Errorf("snapshot: %+v", s)
	}
	n := 0
	prev := ""
	for d := range s.All() {
		if d.RowKey <= prev {
			t.Errorf("All: %s after %s", d.RowKey, prev)
		}
		prev = d.RowKey
		n++
	}
	if n != 50 {
		t.Errorf("All yielded %d", n)
	}
}

// TestTTL: within the TTL a change is not seen and nothing is read; the
// first lookup after it revalidates with one query of what changed, which
// brings the change and the new entity.
func TestTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	tbl := setup(t, env.With(meter.Policy()), 20)
	fake := clock.NewFake(time.Now())
	c, err := lookup.New(tbl, lookup.Config{Query: departments, TTL: time.Minute, Now: fake.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "departments", "d001"); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Upsert(ctx, dept("d001", 2), entity.Replace); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Upsert(ctx, dept("d999", 1), entity.Replace); err != nil {
		t.Fatal(err)
	}
	fake.Advance(59 * time.Second)
	before := meter.Snapshot()
	if d, _ := c.Get(ctx, "departments", "d001"); d.Version != 1 {
		t.Errorf("within the TTL: version %d", d.Version)
	}
	if n := meter.Snapshot().Sub(before).Total(); n != 0 {
		t.Errorf("a lookup within the TTL cost %d requests", n)
	}
	fake.Advance(2 * time.Second)
	d, err := c.Get(ctx, "departments", "d001")
	if err != nil || d.Version != 2 || d.CostCenter != "CC-2" {
		t.Errorf("after the TTL: %+v, %v", d, err)
	}
	if _, err := c.Get(ctx, "departments", "d999"); err != nil {
		t.Errorf("the new department after the TTL: %v", err)
	}
	used := meter.Snapshot().Sub(before)
	if used.Total() != 1 || used.Count(cost.Table, cost.OpQuery) != 1 {
		t.Errorf("the revalidation cost %v, want one query", used)
	}
	if s := c.Cached(); s.Full || s.Len() != 21 {
		t.Errorf("after the revalidation: full %v, %d held", s.Full, s.Len())
	}
}

// TestRevalidationReadsOnlyChanges checks that a revalidation reads the
// changed entities, not the whole partition, and that deletions wait for a
// full load.
func TestRevalidationReadsOnlyChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := setup(t, env, 200)
	// The load's start bounds the next revalidation's mark, taken from the
	// Date of its answers, which has whole seconds: the 200 must be stamped
	// more than a second (plus Margin) before the load.
	time.Sleep(1200 * time.Millisecond)
	// The newest entity when the cache loads.
	if err := tbl.Upsert(ctx, dept("d200", 1), entity.Replace); err != nil {
		t.Fatal(err)
	}
	c, err := lookup.New(tbl, lookup.Config{Query: departments, TTL: -1, Margin: 50 * time.Millisecond, FullEvery: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if err := tbl.Upsert(ctx, dept("d007", 5), entity.Replace); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Delete(ctx, "departments", "d008", entity.AnyETag); err != nil {
		t.Fatal(err)
	}
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	s := c.Cached()
	if s.Full || s.Read < 1 || s.Read > 2 {
		t.Errorf("the revalidation read %d entities (full %v), want the change and at most the newest", s.Read, s.Full)
	}
	if d, _ := s.Get("departments", "d007"); d.Version != 5 {
		t.Errorf("d007 after Refresh: version %d", d.Version)
	}
	if _, ok := s.Get("departments", "d008"); !ok {
		t.Error("a revalidation saw a delete: it cannot")
	}
	// Loads go full, change, change, full: the fourth load sees the
	// delete.
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if s := c.Cached(); s.Full || s.Len() != 201 {
		t.Errorf("the third load: full %v, %d held", s.Full, s.Len())
	}
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if s := c.Cached(); !s.Full || s.Len() != 200 {
		t.Errorf("the fourth load: full %v, %d held", s.Full, s.Len())
	}
	if _, err := c.Get(ctx, "departments", "d008"); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("d008 after a full load: %v", err)
	}
}

// TestClientClockSkew: a client clock hours off the service's in either
// direction delays or hastens revalidations but never makes one miss a
// change, because the service's Timestamps decide what it asks for.
func TestClientClockSkew(t *testing.T) {
	t.Parallel()
	for _, skew := range []time.Duration{-3 * time.Hour, 3 * time.Hour} {
		t.Run(fmt.Sprint(skew), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			tbl := setup(t, env, 5)
			c, err := lookup.New(tbl, lookup.Config{Query: departments, TTL: -1, Margin: -1, Now: func() time.Time { return time.Now().Add(skew) }})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Reload(ctx); err != nil {
				t.Fatal(err)
			}
			for v := int64(2); v <= 4; v++ {
				if err := tbl.Upsert(ctx, dept("d003", v), entity.Replace); err != nil {
					t.Fatal(err)
				}
				if err := c.Refresh(ctx); err != nil {
					t.Fatal(err)
				}
				if d, _ := c.Get(ctx, "departments", "d003"); d.Version != v {
					t.Errorf("after writing version %d, the cache serves %d", v, d.Version)
				}
				if c.Cached().Full {
					t.Error("a revalidation was a full load")
				}
			}
		})
	}
}

// TestConcurrentReaders runs readers against a writer that changes the
// data and refreshes the cache after each change, with a TTL short enough
// that readers revalidate too: no reader sees a torn value or a version
// older than one it saw before, and once the writer is done every reader
// sees the last version. Run it with -race.
func TestConcurrentReaders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := setup(t, env, 4)
	c, err := lookup.New(tbl, lookup.Config{Query: departments, TTL: 5 * time.Millisecond, Margin: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const readers, versions = 8, 15
	ids := []string{"d000", "d001", "d002", "d003"}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads sync.Map
	for r := range readers {
		wg.Go(func() {
			seen := map[string]int64{}
			n := 0
			for {
				select {
				case <-stop:
					reads.Store(r, n)
					return
				default:
				}
				id := ids[n%len(ids)]
				var d Department
				var err error
				if r%2 == 0 {
					d, err = c.Get(ctx, "departments", id)
				} else {
					var s *lookup.Snapshot[Department]
					if s, err = c.Snapshot(ctx); err == nil {
						d, _ = s.Get("departments", id)
					}
				}
				if err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				if d.Check != fmt.Sprint(d.Version) || d.CostCenter != fmt.Sprint("CC-", d.Version) {
					t.Errorf("reader %d: torn value %+v", r, d)
				}
				if d.Version < seen[id] {
					t.Errorf("reader %d: %s went back from version %d to %d", r, id, seen[id], d.Version)
				}
				seen[id] = d.Version
				n++
			}
		})
	}
	for v := int64(2); v <= versions; v++ {
		for _, id := range ids {
			if err := tbl.Upsert(ctx, dept(id, v), entity.Replace); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if d, err := c.Get(ctx, "departments", id); err != nil || d.Version < v {
				t.Errorf("after writing version %d and Refresh, %s is at %d (%v)", v, id, d.Version, err)
			}
		}
	}
	close(stop)
	wg.Wait()
	reads.Range(func(k, v any) bool {
		if v.(int) == 0 {
			t.Errorf("reader %v read nothing", k)
		}
		return true
	})
}

// TestLoadFailure: a failed load keeps the last snapshot and reports a
// LoadError; the next lookup loads again.
func TestLoadFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := env.TableWith(t, env.NoRetryClientOptions())
	tbl, err := entity.NewTable[Department](client)
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.Upsert(ctx, dept("d001", 1), entity.Replace); err != nil {
		t.Fatal(err)
	}
	c, err := lookup.New(tbl, lookup.Config{Query: departments, TTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tbl.DeleteTable(ctx); err != nil {
		t.Fatal(err)
	}
	err = c.Refresh(ctx)
	var le *lookup.LoadError
	if !errors.As(err, &le) || !errors.Is(err, entity.ErrTableNotFound) {
		t.Errorf("a refresh of a deleted table: %v", err)
	}
	if d, err := c.Get(ctx, "departments", "d001"); err != nil || d.Version != 1 {
		t.Errorf("after the failed refresh: %+v, %v", d, err)
	}
}

// TestConfig checks what New refuses.
func TestConfig(t *testing.T) {
	tbl := &entity.Table[Department]{}
	if _, err := lookup.New[Department](nil, lookup.Config{}); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("a nil table: %v", err)
	}
	if _, err := lookup.New(tbl, lookup.Config{FullEvery: -1}); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("FullEvery -1: %v", err)
	}
	if _, err := lookup.New(tbl, lookup.Config{Query: entity.Query{Filter: filter.Eq("bad name", 1)}}); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("a bad filter: %v", err)
	}
}

// TestNil calls every method on a nil and a zero Cache and a nil Snapshot:
// typed errors or zero results, no panic.
func TestNil(t *testing.T) {
	ctx := context.Background()
	for _, c := range []*lookup.Cache[Department]{nil, {}} {
		_, err1 := c.Get(ctx, "a", "b")
		_, err2 := c.Snapshot(ctx)
		for i, err := range []error{err1, err2, c.Refresh(ctx), c.Reload(ctx)} {
			if !errors.Is(err, entity.ErrInvalid) {
				t.Errorf("call %d on %#v: %v", i, c, err)
			}
		}
		if c.Cached() != nil {
			t.Error("Cached of a nil or zero cache")
		}
	}
	var s *lookup.Snapshot[Department]
	if _, ok := s.Get("a", "b"); ok || s.Len() != 0 {
		t.Error("a nil snapshot holds something")
	}
	for range s.All() {
		t.Error("a nil snapshot yields something")
	}
}

// One row of the data that does not decode (written by another program,
// its Version a String) fails alone: every other entity loads and is
// served; a lookup of that row returns its *RowError (keys, ErrDecode),
// never a value; a revalidation that finds a good row changed into a bad
// one stops serving it, and one that finds the bad row mended serves it.
func TestOneUndecodableRowAmongMany(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := setup(t, env, 20)
	raw := env.TableService.NewClient(tbl.Name())
	bad := func(id string) {
		t.Helper()
		if _, err := raw.UpsertEntity(ctx, []byte(`{"PartitionKey":"departments","RowKey":"`+id+`","Name":"x","Version":"not a number"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	bad("d007")
	c, err := lookup.New(tbl, lookup.Config{Query: departments, TTL: -1, Margin: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		id := fmt.Sprintf("d%03d", i)
		d, err := c.Get(ctx, "departments", id)
		var re *lookup.RowError
		switch {
		case id == "d007":
			if !errors.As(err, &re) || re.RowKey != id || !errors.Is(err, entity.ErrDecode) || d.Name != "" {
				t.Fatalf("Get of the bad row: %+v %v, want its RowError and no value", d, err)
			}
		case err != nil || d.Version != 1:
			t.Fatalf("Get %s: %+v %v", id, d, err)
		}
	}
	if f := c.Cached().Failed(); len(f) != 1 {
		t.Fatalf("Failed() = %v, want the one bad row", f)
	}
	// A good row turned bad: a revalidation stops serving it.
	bad("d003")
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "departments", "d003"); !errors.Is(err, entity.ErrDecode) {
		t.Fatalf("Get of a row turned bad: %v, want ErrDecode", err)
	}
	// The bad row mended: served again.
	if err := tbl.Upsert(ctx, dept("d007", 2), entity.Replace); err != nil {
		t.Fatal(err)
	}
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if d, err := c.Get(ctx, "departments", "d007"); err != nil || d.Version != 2 {
		t.Fatalf("Get of the mended row: %+v %v", d, err)
	}
	if f := c.Cached().Failed(); len(f) != 1 {
		t.Fatalf("Failed() = %v, want d003 only", f)
	}
}

// beforeSecondPage runs do once, before the first query request that
// continues a query (the second page), once armed.
type beforeSecondPage struct {
	armed atomic.Bool
	do    func()
}

func (b *beforeSecondPage) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	if raw.Method == http.MethodGet && strings.Contains(raw.URL.RawQuery, "NextRowKey") && b.armed.CompareAndSwap(true, false) {
		b.do()
	}
	return req.Next()
}

// TestLoadStraddledByChangesWithClockAhead: a change a multi-page load
// missed (d000, changed after its page was read) is stamped before a
// change the same load saw on a later page (d004), so the newest
// Timestamp alone would have the next revalidation skip it; the load's
// start bounds the mark, and it is taken on the service's clock (the
// Date of the load's answers), so a client clock three hours ahead — or
// behind — still has the revalidation read the missed change.
func TestLoadStraddledByChangesWithClockAhead(t *testing.T) {
	t.Parallel()
	for _, skew := range []time.Duration{3 * time.Hour, -3 * time.Hour} {
		t.Run(fmt.Sprint(skew), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			tbl := setup(t, env, 5)
			hook := &beforeSecondPage{do: func() {
				if err := tbl.Upsert(ctx, dept("d000", 2), entity.Replace); err != nil {
					t.Error(err)
				}
				time.Sleep(5 * time.Millisecond) // a later Timestamp for d004
				if err := tbl.Upsert(ctx, dept("d004", 2), entity.Replace); err != nil {
					t.Error(err)
				}
			}}
			view := patterntest.View[Department](t, env.With(faults.ShortPages{N: 2}, hook), tbl)
			c, err := lookup.New(view, lookup.Config{Query: departments, TTL: -1, Margin: -1, Now: func() time.Time { return time.Now().Add(skew) }})
			if err != nil {
				t.Fatal(err)
			}
			hook.armed.Store(true)
			if err := c.Reload(ctx); err != nil {
				t.Fatal(err)
			}
			if hook.armed.Load() {
				t.Fatal("the load read one page: no change straddled it")
			}
			if d, _ := c.Get(ctx, "departments", "d000"); d.Version != 1 {
				t.Fatalf("the straddled load read d000 version %d, want 1 (read before the change)", d.Version)
			}
			if err := c.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			if c.Cached().Full {
				t.Error("the revalidation was a full load")
			}
			if d, _ := c.Get(ctx, "departments", "d000"); d.Version != 2 {
				t.Errorf("after the revalidation the cache serves d000 version %d, want 2", d.Version)
			}
		})
	}
}
