package secondaryindex_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestTableWidePrefixPastABadEntry: one entry of a TableWide index, in one
// of the buckets a prefix lookup merges, is given a primary's PartitionKey
// (TkPrimaryPK) that is not a string by a write around the Set (read back with a raw client). The
// prefix lookup yields that entry's error, naming its keys, and goes on
// with every other entry, still in value order.
func TestTableWidePrefixPastABadEntry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	qs := patterntest.Queues(t, env, 1)
	s, p := wideSet(t, qs, tbl, nil, fast())
	for i := range 8 {
		e := Employee{PartitionKey: fmt.Sprintf("Dept%d", i%3), RowKey: empid(i), FirstName: "F", LastName: fmt.Sprintf("Jones%d", i), Email: fmt.Sprintf("u%d@x.com", i)}
		if err := s.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
	}
	drainWide(t, p, qs)
	ks, _ := rawScan(t, tbl.Name())
	var bad string // "pk/rk" of Jones3's name entry
	for _, k := range ks {
		if strings.HasPrefix(k, "name_") && strings.Contains(k, "/name_Jones3 ") {
			bad = k
		}
	}
	if bad == "" {
		t.Fatalf("no name entry of Jones3 among %v", ks)
	}
	epk, erk, _ := strings.Cut(bad, "/")
	rawMerge(t, rawTable(t, tbl.Name()), epk, erk, map[string]any{"TkPrimaryPK": 7})

	var got []string
	var errs []error
	for e, err := range s.LookupValuePrefix(ctx, "name", "Jones", secondaryindex.LookupOptions{}) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got = append(got, e.LastName)
	}
	want := "Jones0 Jones1 Jones2 Jones4 Jones5 Jones6 Jones7"
	var se *secondaryindex.StepError
	if !inOrder(got, strings.Fields(want)) || len(errs) != 1 || !errors.As(errs[0], &se) || se.RowKey != erk {
		t.Fatalf("prefix lookup past a bad entry: %v, %v; want %s and one error naming %q", got, errs, want, erk)
	}
}
