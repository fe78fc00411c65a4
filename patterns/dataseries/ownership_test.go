package dataseries_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/dataseries"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestPlainWrites writes a series entity beside the Series, with a plain
// aztables client, and records what the package doc's Ownership section
// says each leaves: a merge of a slot sets the counter (the increments
// before it are gone) and Add goes on from the value written; a replace
// without the slots resets them to 0; a slot written as a String makes Get
// and Add fail with ErrStoredType until it is written as an integer again.
// (A property that is not a slot is kept: TestIncrementKeepsOtherProperties.)
func TestPlainWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newTable(t, env)
	s := newSeries(t, tbl, dataseries.Config{})
	client := env.TableService.NewClient(tbl.Name())
	slot := func(want int64) {
		t.Helper()
		got, err := s.Get(ctx, "p", "r")
		if err != nil || got[3] != want {
			t.Fatalf("slot 3 = %v, %v; want %d", got[3], err, want)
		}
	}
	for range 5 {
		if _, err := s.Add(ctx, "p", "r", 3, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := rawWrite(ctx, client, "merge", "p", "r", map[string]any{"C03": aztables.EDMInt64(100)}); err != nil {
		t.Fatal(err)
	}
	slot(100)
	if v, err := s.Add(ctx, "p", "r", 3, 1); err != nil || v != 101 {
		t.Fatalf("Add after a plain merge of the slot = %d, %v; want 101", v, err)
	}
	if err := rawWrite(ctx, client, "replace", "p", "r", map[string]any{"Owner": "alice"}); err != nil {
		t.Fatal(err)
	}
	slot(0)
	if err := rawWrite(ctx, client, "merge", "p", "r", map[string]any{"C03": "three"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "p", "r"); !errors.Is(err, dataseries.ErrStoredType) {
		t.Errorf("Get of a String slot: %v, want ErrStoredType", err)
	}
	if _, err := s.Add(ctx, "p", "r", 3, 1); !errors.Is(err, dataseries.ErrStoredType) {
		t.Errorf("Add to a String slot: %v, want ErrStoredType", err)
	}
}

// TestOncePerMessage: Add is not idempotent — a handler of package
// eventual that calls it counts a message delivered twice twice — while a
// handler that increments through eventual.Once (the marker and the
// ETag-guarded merge of the slot in one transaction, in the series'
// partition) counts it once. Each message is enqueued twice with one ID,
// as a resent enqueue or a relay after a crash does.
func TestOncePerMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newTable(t, env)
	s := newSeries(t, tbl, dataseries.Config{})
	qs := patterntest.Queues(t, env, 1)
	p, err := eventual.New(qs, nil, patterntest.Fast())
	if err != nil {
		t.Fatal(err)
	}
	type hit struct{ Slot int }
	var runs atomic.Int32
	add := eventual.NewKind[hit]("dataseries.test.Add.v1")
	once := eventual.NewKind[hit]("dataseries.test.Once.v1")
	if err := eventual.Handle(p, add, func(ctx context.Context, h hit) error {
		runs.Add(1)
		_, err := s.Add(ctx, "p", "add", h.Slot, 1)
		return err
	}, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := eventual.Handle(p, once, func(ctx context.Context, h hit) error {
		runs.Add(1)
		_, err := eventual.Once(ctx, tbl, "p", "count", func(ctx context.Context, b *entity.Batch) error {
			name := s.Property(h.Slot)
			cur, err := tbl.Get(ctx, "p", "once")
			if errors.Is(err, entity.ErrNotFound) {
				b.Insert((&entity.DynamicEntity{PartitionKey: "p", RowKey: "once"}).Set(name, int64(1)))
				return nil
			}
			if err != nil {
				return err
			}
			n, _ := entity.Prop[int64](&cur, name)
			b.Update((&entity.DynamicEntity{PartitionKey: "p", RowKey: "once", ETag: cur.ETag}).Set(name, n+1), entity.Merge)
			return nil
		})
		return err
	}, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []eventual.Kind[hit]{add, once} {
		m, err := k.Message(hit{Slot: 7})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Enqueue(ctx, m, m); err != nil {
			t.Fatal(err)
		}
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := patterntest.Drain(dctx, p, qs); err != nil {
		t.Fatal(err)
	}
	if n := runs.Load(); n != 4 {
		t.Fatalf("the handlers ran %d times, want 4", n)
	}
	client := env.TableService.NewClient(tbl.Name())
	if n := rawCounter(t, rawEntity(t, client, "p", "add"), "C07"); n != 2 {
		t.Errorf("Add in a handler, the message delivered twice: %d, want 2", n)
	}
	if n := rawCounter(t, rawEntity(t, client, "p", "once"), "C07"); n != 1 {
		t.Errorf("Once in a handler, the message delivered twice: %d, want 1", n)
	}
	if got, err := s.Get(ctx, "p", "once"); err != nil || got[7] != 1 {
		t.Errorf("Get of the series counted through Once: %v, %v", got, err)
	}
}
