package indexentity_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// wideWorld is the storage of a Set with a TableWide index "city" of 4
// buckets, its lists in a table of their own, kept by patterns/eventual.
type wideWorld struct {
	emps    *entity.Table[Employee]
	entries *entity.Table[entity.DynamicEntity]
	qs      []eventual.Queue
	buckets int
}

func newWideWorld(t testing.TB, buckets int) *wideWorld {
	t.Helper()
	return &wideWorld{emps: patterntest.Table[Employee](t, env), entries: patterntest.Table[entity.DynamicEntity](t, env), qs: patterntest.Queues(t, env, 1), buckets: buckets}
}

func (w *wideWorld) set(t testing.TB, e *integration.Env, cfg eventual.Config) (*indexentity.Set[Employee], *eventual.Processor) {
	t.Helper()
	p, err := eventual.New(patterntest.SameQueues(t, e, w.qs), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := indexentity.New(patterntest.View[Employee](t, e, w.emps), indexentity.Config{Processor: p, Entries: patterntest.View[entity.DynamicEntity](t, e, w.entries), Retry: hot, Outbox: eventual.OutboxConfig{Grace: -1}},
		indexentity.Index[Employee]{Name: "city", Value: city, Placement: indexentity.TableWide, Buckets: w.buckets})
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

// wideLookup returns the keys LookupValueAll yields, "pk/rk".
func wideLookup(t testing.TB, s *indexentity.Set[Employee], value string, opts indexentity.LookupOptions) []string {
	t.Helper()
	var got []string
	for e, err := range s.LookupValueAll(context.Background(), "city", value, opts) {
		if err != nil {
			t.Fatal(err)
		}
		if e.City != value {
			t.Errorf("looking up %s yielded %s/%s of %s", value, e.PartitionKey, e.RowKey, e.City)
		}
		got = append(got, e.PartitionKey+"/"+e.RowKey)
	}
	return got
}

// wideExpect returns, by city, the "pk/rk" of the employees holding it
// in the whole table, in key order, read with a plain client.
func wideExpect(t testing.TB, name string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, row := range rawAll(t, name) {
		if c, _ := row["City"].(string); c != "" {
			out[c] = append(out[c], row["PartitionKey"].(string)+"/"+row["RowKey"].(string))
		}
	}
	return out
}

// TestTableWide inserts employees of one city across partitions (and
// others), and looks the city up without a PartitionKey: after the queue
// drained, LookupValueAll yields them all, in PartitionKey then RowKey
// order, pages with After and Limit, and the drift checker finds nothing.
// A plain write beside the Set is then found (Missing for an insert,
// Orphan for a delete) and Rebuild repairs it.
func TestTableWide(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWideWorld(t, 4)
	s, p := w.set(t, env, patterntest.Fast())
	for _, dept := range []string{"Sales", "HR", "IT", "Ops"} {
		for i, c := range []string{"Paris", "Oslo", "Paris", "Paris", ""} {
			if err := s.Insert(ctx, &Employee{PartitionKey: dept, RowKey: "00000" + string(rune('1'+i)), City: c}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.Modify(ctx, "IT", "000003", func(e *Employee) error { e.City = "Oslo"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "Ops", "000001", ""); err != nil {
		t.Fatal(err)
	}
	if err := patterntest.Drain(ctx, p, w.qs); err != nil {
		t.Fatal(err)
	}
	want := wideExpect(t, w.emps.Name())
	for _, c := range []string{"Paris", "Oslo"} {
		if got := wideLookup(t, s, c, indexentity.LookupOptions{}); !slices.Equal(got, want[c]) {
			t.Errorf("%s: %v, want %v", c, got, want[c])
		}
	}
	if len(want["Paris"]) != 10 {
		t.Fatalf("Paris: %v", want["Paris"])
	}
	// Pages of 4, each after the last of the one before.
	var paged []string
	var after drift.Key
	for range 10 {
		page := wideLookup(t, s, "Paris", indexentity.LookupOptions{Limit: 4, After: after})
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		pk, rk, _ := strings.Cut(page[len(page)-1], "/")
		after = drift.Key{PartitionKey: pk, RowKey: rk}
	}
	if !slices.Equal(paged, want["Paris"]) {
		t.Errorf("paged: %v, want %v", paged, want["Paris"])
	}
	noDrift(t, s)

	// Beside the Set: insert HR/000009 of Paris, delete Sales/000001.
	if err := w.emps.Insert(ctx, &Employee{PartitionKey: "HR", RowKey: "000009", City: "Paris"}); err != nil {
		t.Fatal(err)
	}
	if err := w.emps.Delete(ctx, "Sales", "000001", entity.AnyETag); err != nil {
		t.Fatal(err)
	}
	type got struct {
		kind    drift.Kind
		primary string
	}
	var fs []got
	all := findings(t, s, indexentity.CheckOptions{})
	for _, f := range all {
		fs = append(fs, got{f.Kind, f.Primary.PartitionKey + "/" + f.Primary.RowKey})
	}
	if w := []got{{drift.Missing, "HR/000009"}, {drift.Orphan, "Sales/000001"}}; !slices.Equal(fs, w) {
		t.Fatalf("findings %v, want %v", fs, w)
	}
	// A check resumed from the token of the orphan's list partition finds
	// the orphan again, and nothing before it.
	again := findings(t, s, indexentity.CheckOptions{Resume: all[1].Resume})
	if len(again) != 1 || again[0].Kind != drift.Orphan || again[0].Primary != all[1].Primary {
		t.Errorf("resumed from %q: %v", all[1].Resume, again)
	}
	if _, err := s.Rebuild(ctx, indexentity.CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	noDrift(t, s)
	want = wideExpect(t, w.emps.Name())
	if got := wideLookup(t, s, "Paris", indexentity.LookupOptions{}); !slices.Equal(got, want["Paris"]) {
		t.Errorf("Paris after Rebuild: %v, want %v", got, want["Paris"])
	}
	ms, err := s.ValueMembers(ctx, "city", "Paris")
	if err != nil || len(ms) != len(want["Paris"]) {
		t.Errorf("ValueMembers: %v, %v", ms, err)
	}
	// The other lookups are refused before any request.
	for _, err := range []error{
		func() error { _, err := s.Members(ctx, "city", "Sales", "Paris"); return err }(),
		func() error {
			for _, err := range s.LookupAll(ctx, "city", "Sales", "Paris", indexentity.LookupOptions{}) {
				return err
			}
			return nil
		}(),
	} {
		if !errors.Is(err, indexentity.ErrPlacement) {
			t.Errorf("a partition's lookup of a TableWide index: %v; want ErrPlacement", err)
		}
	}
}

// TestTableWideRefused: a bucket count out of range, or set on another
// placement, is a *DeclarationError; LookupValueAll and ValueMembers of
// an index that is not TableWide match ErrPlacement; nothing is sent.
func TestTableWideRefused(t *testing.T) {
	t.Parallel()
	emps := patterntest.Table[Employee](t, env)
	for _, d := range []indexentity.Index[Employee]{
		{Name: "city", Value: city, Placement: indexentity.OtherPartition, Buckets: 4},
		{Name: "city", Value: city, Placement: indexentity.TableWide, Buckets: indexentity.MaxBuckets + 1},
		{Name: "city", Value: city, Placement: indexentity.TableWide, Buckets: -1},
	} {
		var de *indexentity.DeclarationError
		if _, err := indexentity.New(emps, indexentity.Config{}, d); !errors.As(err, &de) || de.Field != "Buckets" {
			t.Errorf("%v with %d buckets: %v; want a *DeclarationError on Buckets", d.Placement, d.Buckets, err)
		}
	}
	s, err := indexentity.New(emps, indexentity.Config{}, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	var lerr error
	for _, err := range s.LookupValueAll(context.Background(), "lastname", "Jones", indexentity.LookupOptions{}) {
		lerr = err
	}
	if !errors.Is(lerr, indexentity.ErrPlacement) {
		t.Errorf("LookupValueAll of a SamePartition index: %v; want ErrPlacement", lerr)
	}
	if _, err := s.ValueMembers(context.Background(), "lastname", "Jones"); !errors.Is(err, indexentity.ErrPlacement) {
		t.Errorf("ValueMembers of a SamePartition index: %v; want ErrPlacement", err)
	}
}
