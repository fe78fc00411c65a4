package secondaryindex_test

import (
	"context"
	"errors"
	"iter"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// first is the first error seq yields.
func first[T any](seq iter.Seq2[T, error]) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestRefusalsMatchErrInvalid: every call refused before any request —
// an unknown index ("" or "nope"), a lookup of the other placement's
// indexes, a single-value lookup of a non-unique index, a resume token
// this package did not make, a negative Limit — matches
// entity.ErrInvalid and its specific sentinel, and sends nothing.
func TestRefusalsMatchErrInvalid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	e := env.With(meter.Policy())
	tbl := employees(t, env)
	qs := patterntest.Queues(t, env, 1)
	wide, _ := wideSetOn(t, e, qs, tbl, nil, fast())
	local := localSet(t, patterntest.View[Employee](t, e, tbl))
	none := secondaryindex.LookupOptions{}
	one := func(_ Employee, err error) error { return err }
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"LookupValue of index \"\"", one(wide.LookupValue(ctx, "", "x", none)), secondaryindex.ErrUnknownIndex},
		{"LookupValue of index nope", one(wide.LookupValue(ctx, "nope", "x", none)), secondaryindex.ErrUnknownIndex},
		{"LookupValueAll of index nope", first(wide.LookupValueAll(ctx, "nope", "x", none)), secondaryindex.ErrUnknownIndex},
		{"LookupValuePrefix of index nope", first(wide.LookupValuePrefix(ctx, "nope", "x", none)), secondaryindex.ErrUnknownIndex},
		{"Lookup of index nope", one(local.Lookup(ctx, "nope", "Sales", "x", none)), secondaryindex.ErrUnknownIndex},
		{"LookupAll of index nope", first(local.LookupAll(ctx, "nope", "Sales", "x", none)), secondaryindex.ErrUnknownIndex},
		{"LookupPrefix of index \"\"", first(local.LookupPrefix(ctx, "", "Sales", "x", none)), secondaryindex.ErrUnknownIndex},
		{"Repair of index nope", local.Repair(ctx, drift.Finding{Kind: drift.Missing, Index: "nope"}), secondaryindex.ErrUnknownIndex},
		{"Lookup of a TableWide index", one(wide.Lookup(ctx, "email", "Sales", "x", none)), secondaryindex.ErrPlacement},
		{"LookupAll of a TableWide index", first(wide.LookupAll(ctx, "name", "Sales", "x", none)), secondaryindex.ErrPlacement},
		{"LookupValue of a SamePartition index", one(local.LookupValue(ctx, "email", "x", none)), secondaryindex.ErrPlacement},
		{"LookupValuePrefix of a SamePartition index", first(local.LookupValuePrefix(ctx, "name", "x", none)), secondaryindex.ErrPlacement},
		{"LookupValue of a non-unique index", one(wide.LookupValue(ctx, "name", "x", none)), secondaryindex.ErrNotUnique},
		{"Lookup of a non-unique index", one(local.Lookup(ctx, "name", "Sales", "x", none)), secondaryindex.ErrNotUnique},
		{"Check from a foreign token", first(wide.Check(ctx, secondaryindex.CheckOptions{Resume: "nonsense"})), secondaryindex.ErrInvalidToken},
		{"Rebuild from a foreign token", func() error { _, err := local.Rebuild(ctx, secondaryindex.CheckOptions{Resume: "ie1.e30"}); return err }(), secondaryindex.ErrInvalidToken},
		{"Repair of an entry in another table", local.Repair(ctx, drift.Finding{Kind: drift.Orphan, Index: "name", Entry: drift.Key{Table: "elsewhere", PartitionKey: "Sales", RowKey: "name_x empid_1"}}), secondaryindex.ErrInvalidToken},
		{"a negative Limit", first(wide.LookupValueAll(ctx, "name", "x", secondaryindex.LookupOptions{Limit: -1})), secondaryindex.ErrInvalidConfig},
		// A nil entity, as entity.Table refuses it.
		{"Insert(nil)", local.Insert(ctx, nil), entity.ErrInvalidType},
		{"Update(nil)", wide.Update(ctx, nil), entity.ErrInvalidType},
	} {
		if !errors.Is(c.err, c.want) || !errors.Is(c.err, entity.ErrInvalid) {
			t.Errorf("%s: %v; want an error matching %v and entity.ErrInvalid", c.name, c.err, c.want)
		}
	}
	if n := meter.Snapshot().Total(); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}
