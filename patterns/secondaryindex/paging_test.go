package secondaryindex_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestLookupPages: LookupAll and LookupValueAll page with Limit and After
// (HasAfter), as patterns/indexentity's LookupValueAll does: the pages of
// a popular value, with and without Verify, join into the one lookup's
// sequence, none skipped or repeated, whatever the keys (the empty
// PartitionKey, the compound separator ' ' and escape '!'). The lookups
// ordered by value refuse After before any request.
func TestLookupPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	qs := patterntest.Queues(t, env, 1)
	wide, p := wideSet(t, qs, tbl, nil, fast())
	local := localSet(t, employees(t, env))
	pks := []string{"", " ", "!", "a b", "a!b", "Sales", "Sales "}
	n := 0
	for _, pk := range pks {
		for i := range 3 {
			n++
			e := &Employee{PartitionKey: pk, RowKey: empid(n), LastName: "Jones", Email: empid(n) + "@contoso.com"}
			if i == 1 {
				e.RowKey = "empid_ " + empid(n)[6:] // a space in the RowKey
			}
			if err := wide.Insert(ctx, e); err != nil {
				t.Fatal(err)
			}
			if err := local.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: e.RowKey, LastName: "Jones"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	drainWide(t, p, qs)
	keysOf := func(seq func(func(Employee, error) bool)) []drift.Key {
		var out []drift.Key
		for e, err := range seq {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, drift.Key{PartitionKey: e.PartitionKey, RowKey: e.RowKey})
		}
		return out
	}
	for _, c := range []struct {
		name   string
		lookup func(secondaryindex.LookupOptions) func(func(Employee, error) bool)
		want   int
	}{
		{"LookupValueAll", func(o secondaryindex.LookupOptions) func(func(Employee, error) bool) {
			return wide.LookupValueAll(ctx, "name", "Jones", o)
		}, 3 * len(pks)},
		{"LookupAll", func(o secondaryindex.LookupOptions) func(func(Employee, error) bool) {
			return local.LookupAll(ctx, "name", "Sales", "Jones", o)
		}, 3 * len(pks)},
	} {
		for _, verify := range []bool{false, true} {
			all := keysOf(c.lookup(secondaryindex.LookupOptions{Verify: verify}))
			if len(all) != c.want {
				t.Fatalf("%s: %d, want %d: %v", c.name, len(all), c.want, all)
			}
			var paged []drift.Key
			opts := secondaryindex.LookupOptions{Verify: verify, Limit: 4}
			for range 2 * c.want {
				page := keysOf(c.lookup(opts))
				paged = append(paged, page...)
				if len(page) < opts.Limit {
					break
				}
				opts.After, opts.HasAfter = page[len(page)-1], true
			}
			if !slices.Equal(paged, all) {
				t.Errorf("%s (verify %v) in pages of 4: %v, want %v", c.name, verify, paged, all)
			}
		}
	}
	// After the last, nothing; before a partition's first, all of it.
	last := keysOf(local.LookupAll(ctx, "name", "Sales", "Jones", secondaryindex.LookupOptions{}))
	if got := keysOf(local.LookupAll(ctx, "name", "Sales", "Jones", secondaryindex.LookupOptions{After: last[len(last)-1]})); len(got) != 0 {
		t.Errorf("after the last: %v", got)
	}
	if got := keysOf(local.LookupAll(ctx, "name", "Sales", "Jones", secondaryindex.LookupOptions{After: drift.Key{PartitionKey: "A"}})); len(got) != len(last) {
		t.Errorf("after a partition before Sales: %d, want %d", len(got), len(last))
	}
	if got := keysOf(local.LookupAll(ctx, "name", "Sales", "Jones", secondaryindex.LookupOptions{After: drift.Key{PartitionKey: "T"}})); len(got) != 0 {
		t.Errorf("after a partition after Sales: %v", got)
	}
	var ce *secondaryindex.ConfigError
	for _, err := range wide.LookupValuePrefix(ctx, "name", "J", secondaryindex.LookupOptions{HasAfter: true}) {
		if !errors.As(err, &ce) || ce.Field != "LookupOptions.After" || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("LookupValuePrefix with After: %v", err)
		}
	}
	if _, err := wide.LookupValue(ctx, "email", "x", secondaryindex.LookupOptions{After: drift.Key{PartitionKey: "x"}}); !errors.As(err, &ce) {
		t.Errorf("LookupValue with After: %v", err)
	}
}
