package entity_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
)

// TestCancelledContextSendsNothing: a write whose context ended before it
// started is certainly not applied, so it reports the context's error —
// never ErrOutcomeUnknown — sends nothing (the cost meter counts no
// request) and stores nothing, read raw.
func TestCancelledContextSendsNothing(t *testing.T) {
	t.Parallel()
	meter := cost.NewMeter()
	client := env.With(meter.Policy()).Table(t)
	people, err := entity.NewTable[Person](client)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := Person{Dept: "Sales", ID: "1", Name: "n"}
	b := people.NewBatch()
	b.Insert(&Person{Dept: "Sales", ID: "2", Name: "m"})
	before := meter.Snapshot()
	for name, err := range map[string]error{
		"Insert":            people.Insert(ctx, &p),
		"Upsert":            people.Upsert(ctx, &p, entity.Merge),
		"Insert with token": people.WithWriteTokens().Insert(ctx, &p),
		"Submit":            func() error { _, err := people.Submit(ctx, b); return err }(),
		"Modify": func() error {
			_, err := people.Modify(ctx, "Sales", "1", func(*Person) error { return nil }, entity.ModifyOptions{Create: true})
			return err
		}(),
		"BulkWrite": func() error { _, err := people.BulkWrite(ctx, []Person{p}, entity.BulkOptions{}); return err }(),
	} {
		if !errors.Is(err, context.Canceled) || errors.Is(err, entity.ErrOutcomeUnknown) {
			t.Errorf("%s with a cancelled context: %v; want context.Canceled, not ErrOutcomeUnknown", name, err)
		}
	}
	if n := meter.Snapshot().Sub(before).Total(); n != 0 {
		t.Errorf("%d requests sent with a cancelled context", n)
	}
	pager := env.TableService.NewClient(people.Name()).NewListEntitiesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entities) != 0 {
			t.Errorf("stored: %s", page.Entities)
		}
	}
}
