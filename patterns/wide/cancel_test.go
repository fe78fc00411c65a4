package wide_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/wide"
)

// A context cancelled before an operation starts stops it before any
// request, with an error matching context.Canceled that is not a doubt:
// nothing was sent, so nothing is entity.ErrOutcomeUnknown, and the stored
// entity, read back raw, is as it was.
func TestCancelledBeforeSendingSendsNothing(t *testing.T) {
	t.Parallel()
	m := cost.NewMeter()
	client := env.With(m.Policy()).Table(t)
	w := wrap[Bag](t, client, wide.Config{})
	ctx := t.Context()
	stored := bagOf("p", "kept", 1, 300)
	if err := w.Insert(ctx, stored); err != nil {
		t.Fatal(err)
	}
	before := rawRows(t, client, "p", "kept")

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	changed := bagOf("p", "kept", 2, 40)
	changed.ETag = stored.ETag
	for name, op := range map[string]func() error{
		"insert":     func() error { return w.Insert(cctx, bagOf("p", "new", 1, 3)) },
		"replace":    func() error { return w.Replace(cctx, changed) },
		"upsert":     func() error { return w.Upsert(cctx, bagOf("p", "kept", 3, 3)) },
		"delete":     func() error { return w.Delete(cctx, "p", "kept", stored.ETag) },
		"delete any": func() error { return w.Delete(cctx, "p", "kept", entity.AnyETag) },
		"get":        func() error { _, err := w.Get(cctx, "p", "kept"); return err },
		"modify": func() error {
			_, err := w.Modify(cctx, "p", "kept", func(*Bag) error { return nil }, entity.ModifyOptions{})
			return err
		},
	} {
		sent := m.Snapshot()
		err := op()
		var we *wide.Error
		if !errors.Is(err, context.Canceled) || errors.Is(err, entity.ErrOutcomeUnknown) || !errors.As(err, &we) {
			t.Errorf("%s: %v, want a *wide.Error matching context.Canceled and not entity.ErrOutcomeUnknown", name, err)
		}
		if used := m.Snapshot().Sub(sent); used.Total() != 0 {
			t.Errorf("%s: sent %v", name, used)
		}
	}
	if after := rawRows(t, client, "p", "kept"); len(after) != len(before) || after[keys.Compound("kept", "00")]["WideVersion"] != before[keys.Compound("kept", "00")]["WideVersion"] {
		t.Errorf("stored entity changed: %d rows, head %v; was %d rows, head %v", len(after), after[keys.Compound("kept", "00")], len(before), before[keys.Compound("kept", "00")])
	}
	if rows := rawRows(t, client, "p", "new"); len(rows) != 0 {
		t.Errorf("the cancelled insert stored %d rows", len(rows))
	}
}
