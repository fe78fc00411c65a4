package indexentity_test

import (
	"context"
	"errors"
	"iter"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
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
// an unknown index ("" or "nope"), a lookup the index's placement does
// not serve, a resume token this package did not make, a finding of no
// index entity, a negative Limit — matches entity.ErrInvalid and its
// specific sentinel, and sends nothing.
func TestRefusalsMatchErrInvalid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	e := env.With(meter.Policy())
	w := newWideWorld(t, 4)
	wide, _ := w.set(t, e, patterntest.Fast())
	local, err := indexentity.New(patterntest.View[Employee](t, e, w.emps), indexentity.Config{}, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	none := indexentity.LookupOptions{}
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"LookupValueAll of index \"\"", first(wide.LookupValueAll(ctx, "", "x", none)), indexentity.ErrUnknownIndex},
		{"LookupValueAll of index nope", first(wide.LookupValueAll(ctx, "nope", "x", none)), indexentity.ErrUnknownIndex},
		{"ValueMembers of index nope", func() error { _, err := wide.ValueMembers(ctx, "nope", "x"); return err }(), indexentity.ErrUnknownIndex},
		{"LookupAll of index nope", first(local.LookupAll(ctx, "nope", "Sales", "x", none)), indexentity.ErrUnknownIndex},
		{"Members of index \"\"", func() error { _, err := local.Members(ctx, "", "Sales", "x"); return err }(), indexentity.ErrUnknownIndex},
		{"Repair of index nope", local.Repair(ctx, drift.Finding{Kind: drift.Missing, Index: "nope"}), indexentity.ErrUnknownIndex},
		{"LookupAll of a TableWide index", first(wide.LookupAll(ctx, "city", "Sales", "x", none)), indexentity.ErrPlacement},
		{"Members of a TableWide index", func() error { _, err := wide.Members(ctx, "city", "Sales", "x"); return err }(), indexentity.ErrPlacement},
		{"LookupValueAll of a SamePartition index", first(local.LookupValueAll(ctx, "lastname", "x", none)), indexentity.ErrPlacement},
		{"ValueMembers of a SamePartition index", func() error { _, err := local.ValueMembers(ctx, "lastname", "x"); return err }(), indexentity.ErrPlacement},
		{"Check from a foreign token", first(wide.Check(ctx, indexentity.CheckOptions{Resume: "nonsense"})), indexentity.ErrInvalidToken},
		{"Rebuild from a foreign token", func() error { _, err := local.Rebuild(ctx, indexentity.CheckOptions{Resume: "si1.e30"}); return err }(), indexentity.ErrInvalidToken},
		{"Repair of no index entity", local.Repair(ctx, drift.Finding{Kind: drift.Missing, Index: "lastname", Primary: drift.Key{PartitionKey: "Sales", RowKey: "1"}, Entry: drift.Key{PartitionKey: "Sales", RowKey: "nope"}}), indexentity.ErrInvalidToken},
		{"a negative Limit", first(wide.LookupValueAll(ctx, "city", "x", indexentity.LookupOptions{Limit: -1})), indexentity.ErrInvalidConfig},
	} {
		if !errors.Is(c.err, c.want) || !errors.Is(c.err, entity.ErrInvalid) {
			t.Errorf("%s: %v; want an error matching %v and entity.ErrInvalid", c.name, c.err, c.want)
		}
	}
	if n := meter.Snapshot().Total(); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}
