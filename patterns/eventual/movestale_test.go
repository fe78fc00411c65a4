package eventual_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestMoveBesideAMoveOfANewerVersion: a Move reads the source; before its
// copy, a writer changes the source and a second Move (a redelivered
// message, say) moves that newer version and deletes the source. The
// first Move must not overwrite the target with the version it read (its
// delete then finds nothing, which is a move done): the target holds the
// newer version.
func TestMoveBesideAMoveOfANewerVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	from, to := newStepTable(t, env), newStepTable(t, env)
	if err := from.Insert(ctx, &stepItem{PartitionKey: "p", RowKey: "r", Value: "v1"}); err != nil {
		t.Fatal(err)
	}
	rounds := 0
	edit := func(e *stepItem) error {
		rounds++
		if rounds == 1 {
			changed := stepItem{PartitionKey: "p", RowKey: "r", Value: "v2"}
			if err := from.UpdateAny(ctx, &changed, entity.Replace); err != nil {
				return err
			}
			if err := eventual.Move(ctx, from, to, "p", "r", nil); err != nil {
				return err
			}
		}
		return nil
	}
	if err := eventual.Move(ctx, from, to, "p", "r", edit); err != nil {
		t.Fatal(err)
	}
	got, err := to.Get(ctx, "p", "r")
	if err != nil || got.Value != "v2" {
		t.Errorf("target holds %+v (%v), want v2", got, err)
	}
	if _, err := from.Get(ctx, "p", "r"); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("source still holds it: %v", err)
	}
}

// TestMoveWithoutEditBesideAMoveOfANewerVersion: the same race for a Move
// without edit, which reads the target before the source: between its
// read of the source and its copy, a writer changes the source and a
// second Move moves that newer version. The first Move's copy is refused
// on the target's ETag, and the target holds the newer version.
func TestMoveWithoutEditBesideAMoveOfANewerVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	from, to := newStepTable(t, env), newStepTable(t, env)
	if err := from.Insert(ctx, &stepItem{PartitionKey: "p", RowKey: "r", Value: "v1"}); err != nil {
		t.Fatal(err)
	}
	gate := &patterntest.Before{Match: patterntest.Writes, Fn: func() {
		changed := stepItem{PartitionKey: "p", RowKey: "r", Value: "v2"}
		if err := from.UpdateAny(ctx, &changed, entity.Replace); err != nil {
			t.Error(err)
		}
		if err := eventual.Move(ctx, from, to, "p", "r", nil); err != nil {
			t.Error(err)
		}
	}}
	late := patterntest.View[stepItem](t, env.With(gate), to)
	if err := eventual.Move(ctx, from, late, "p", "r", nil); err != nil {
		t.Fatal(err)
	}
	if !gate.Ran() {
		t.Fatal("the Move wrote nothing to the target")
	}
	got, err := to.Get(ctx, "p", "r")
	if err != nil || got.Value != "v2" {
		t.Errorf("target holds %+v (%v), want v2", got, err)
	}
	if _, err := from.Get(ctx, "p", "r"); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("source still holds it: %v", err)
	}
}
