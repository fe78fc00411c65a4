package indextest

import (
	"context"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit/entity"
)

// Changes are the layout changes LayoutChange runs: of Buckets (ids of
// one width to two, many to few, few to many), of Placement in every
// direction, into an entries table, of Unique and of the copied
// Properties. A change out of an entries table into the primaries' table
// is not among them: the new Set does not know the old table (drop it).
var Changes = []struct{ From, To Layout }{
	{Layout{Placement: Wide, Buckets: 1}, Layout{Placement: Wide, Buckets: 2}},
	{Layout{Placement: Wide, Buckets: 4}, Layout{Placement: Wide, Buckets: 16}},
	{Layout{Placement: Wide, Buckets: 16}, Layout{Placement: Wide, Buckets: 4}},
	{Layout{Placement: Wide, Buckets: 16}, Layout{Placement: Wide, Buckets: 20}},
	{Layout{Placement: Wide, Buckets: 1}, Layout{Placement: Wide, Buckets: 100}},
	{Layout{Placement: Wide, Buckets: 4, Entries: true}, Layout{Placement: Wide, Buckets: 16, Entries: true}},
	{Layout{Placement: Same}, Layout{Placement: Other}},
	{Layout{Placement: Same}, Layout{Placement: Wide, Buckets: 4}},
	{Layout{Placement: Other}, Layout{Placement: Same}},
	{Layout{Placement: Other}, Layout{Placement: Wide, Buckets: 4}},
	{Layout{Placement: Wide, Buckets: 4}, Layout{Placement: Same}},
	{Layout{Placement: Wide, Buckets: 4}, Layout{Placement: Other}},
	{Layout{Placement: Same}, Layout{Placement: Other, Entries: true}},
	{Layout{Placement: Other}, Layout{Placement: Other, Entries: true}},
	{Layout{Placement: Other, Entries: true}, Layout{Placement: Same, Entries: true}},
	{Layout{Placement: Wide, Buckets: 4, Entries: true}, Layout{Placement: Other, Entries: true}},
	{Layout{Placement: Other, Entries: true}, Layout{Placement: Wide, Buckets: 4, Entries: true}},
	{Layout{Placement: Blob}, Layout{Placement: Same}},
	{Layout{Placement: Same}, Layout{Placement: Blob}},
	{Layout{Placement: Blob}, Layout{Placement: Wide, Buckets: 4}},
	{Layout{Placement: Wide, Buckets: 4, Unique: true}, Layout{Placement: Wide, Buckets: 16, Unique: true}},
	{Layout{Placement: Wide, Buckets: 4}, Layout{Placement: Wide, Buckets: 4, Unique: true}},
	{Layout{Placement: Wide, Buckets: 4, Unique: true}, Layout{Placement: Wide, Buckets: 4}},
	{Layout{Placement: Same, Unique: true}, Layout{Placement: Same}},
	{Layout{Placement: Other, Unique: true}, Layout{Placement: Wide, Buckets: 4, Unique: true}},
	{Layout{Placement: Wide, Buckets: 4}, Layout{Placement: Wide, Buckets: 4, Properties: []string{"Status"}}},
	{Layout{Placement: Same, Properties: []string{"Note"}}, Layout{Placement: Same}},
}

// orders are the orders of LayoutChange: 5 in each of 4 partitions, one
// without a status; three statuses, or one per order when unique.
func orders(unique bool) []*entity.DynamicEntity {
	var out []*entity.DynamicEntity
	statuses := []string{"pending", "shipped", "paid"}
	for i := range 20 {
		status := statuses[i%3]
		if unique {
			status = fmt.Sprintf("s%03d", i)
		}
		if i == 7 {
			status = ""
		}
		out = append(out, Order(PK(i%4), i, status))
	}
	return out
}

func partitions() []string { return []string{PK(0), PK(1), PK(2), PK(3)} }

// LayoutChange runs every change of Changes the adapter's package has, as
// a subtest: a Set of the old layout writes the orders and its queue
// drains; a Set of the new layout runs Rebuild once, and its queue
// drains. Then Check finds nothing, a second Rebuild finds and repairs
// nothing, each value's lookups (listed and found) return exactly its
// holders, and the store holds, read raw, exactly what a Set of the new
// layout writes into a fresh store: no entry or list of the old layout is
// left.
func LayoutChange(t *testing.T, a Adapter) {
	for _, c := range Changes {
		if !a.has(c.From) || !a.has(c.To) {
			continue
		}
		t.Run(c.From.String()+"→"+c.To.String(), func(t *testing.T) {
			t.Parallel()
			layoutChange(t, &a, c.From, c.To)
		})
	}
}

func layoutChange(t *testing.T, a *Adapter, from, to Layout) {
	ctx := context.Background()
	os := orders(from.Unique || to.Unique)
	st := a.NewStore(t)
	p := Processor(t, a.Env)
	old := a.Open(t, a.Env, st, from, p)
	for _, o := range os {
		if err := old.Insert(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	Drain(t, p)
	NoDrift(t, "old layout", old)

	p = Processor(t, a.Env)
	s := a.Open(t, a.Env, st, to, p)
	sum, err := s.Rebuild(ctx)
	if err != nil {
		t.Fatalf("Rebuild: %v (%+v)", err, sum)
	}
	Drain(t, p)
	t.Logf("Rebuild: %+v", sum)
	NoDrift(t, "after one Rebuild", s)
	again, err := s.Rebuild(ctx)
	if err != nil || again.Repaired != 0 || again.Missing+again.Stale+again.Orphans+again.Duplicates != 0 {
		t.Errorf("second Rebuild: %+v, %v; want nothing found", again, err)
	}
	Lookups(t, s, to, partitions(), Holders(os))

	fresh := a.NewStore(t)
	fp := Processor(t, a.Env)
	f := a.Open(t, a.Env, fresh, to, fp)
	for _, o := range orders(from.Unique || to.Unique) {
		if err := f.Insert(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	Drain(t, fp)
	SameContents(t, Contents(t, a.Env, st), Contents(t, a.Env, fresh))
}
