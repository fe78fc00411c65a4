package rotation_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/rotation"
)

// TestPlainWrites writes beside the Rotation, as the package doc's
// Ownership section says it must not, and records what each write leaves:
//
//   - an entity written through Table(t) (a plain entity.Table of the
//     period that holds t) whose own time lies in another period stays in
//     the table it was written to: Query finds it only when the range
//     overlaps both periods, and it expires with the table it is in, not
//     with its own period;
//   - a period's catalog entry deleted by a plain write: the next write
//     to that period claims it again with a new table; the old table and
//     its entities are no longer read, and Expire never deletes that table
//     (it is not in the catalog).
func TestPlainWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	r := f.open(t, env, rotation.Config[Attempt]{})

	// An entity of hour 2 written into hour 0's table.
	tbl, err := r.Table(ctx, hour(0))
	if err != nil {
		t.Fatal(err)
	}
	stray := Attempt{PartitionKey: "ann", RowKey: keys.TicksKeySeq(hour(2), 0), At: hour(2).Add(time.Minute)}
	if err := tbl.Insert(ctx, &stray); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r, hour(2), hour(3), entity.Query{}); len(got) != 0 {
		t.Errorf("Query of hour 2 found %v in hour 0's table", keysOf(got))
	}
	if got := readAll(t, r, hour(0), hour(3), entity.Query{}); !slices.Equal(keysOf(got), keysOf([]Attempt{stray})) {
		t.Errorf("Query of hours 0 to 2: %v, want the stray entity", keysOf(got))
	}
	if _, err := r.Expire(ctx, hour(1)); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r, hour(0), hour(3), entity.Query{}); len(got) != 0 {
		t.Errorf("after hour 0 expired, Query of hours 0 to 2 found %v: the stray entity of hour 2 should have gone with hour 0's table", keysOf(got))
	}

	// Hour 3's catalog entry deleted by hand.
	first := Attempt{PartitionKey: "bob", RowKey: keys.TicksKeySeq(hour(3), 0), At: hour(3)}
	if err := r.Insert(ctx, &first); err != nil {
		t.Fatal(err)
	}
	periods, err := r.Periods(ctx, hour(3), hour(4))
	if err != nil || len(periods) != 1 {
		t.Fatalf("hour 3's periods: %v, %v", periods, err)
	}
	old := periods[0].Table
	catalog, err := entity.NewTable[entity.DynamicEntity](env.TableService.NewClient(f.catalog))
	if err != nil {
		t.Fatal(err)
	}
	if err := catalog.Delete(ctx, f.name, hour(3).Format("2006010215"), entity.AnyETag); err != nil {
		t.Fatal(err)
	}
	fresh := f.open(t, env, rotation.Config[Attempt]{}) // a process that has not cached hour 3's table
	second := Attempt{PartitionKey: "bob", RowKey: keys.TicksKeySeq(hour(3).Add(time.Minute), 0), At: hour(3).Add(time.Minute)}
	if err := fresh.Insert(ctx, &second); err != nil {
		t.Fatal(err)
	}
	periods, err = fresh.Periods(ctx, hour(3), hour(4))
	if err != nil || len(periods) != 1 || periods[0].Table == old {
		t.Fatalf("hour 3 after its entry was deleted: %v, %v; want a new table", periods, err)
	}
	if got := readAll(t, fresh, hour(3), hour(4), entity.Query{}); !slices.Equal(keysOf(got), keysOf([]Attempt{second})) {
		t.Errorf("Query of hour 3: %v, want only the entity written after the entry was deleted", keysOf(got))
	}
	if _, err := fresh.Expire(ctx, hour(4)); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tablesOf(t, f.name), old) {
		t.Errorf("the table %s left out of the catalog was deleted", old)
	}
	if _, err := env.TableService.NewClient(old).GetEntity(ctx, first.PartitionKey, first.RowKey, nil); err != nil {
		t.Errorf("the entity in the table left out of the catalog: %v", err)
	}
	late := Attempt{PartitionKey: "bob", RowKey: keys.TicksKeySeq(hour(3), 5), At: hour(3)}
	if err := fresh.Insert(ctx, &late); !errors.Is(err, rotation.ErrExpired) {
		t.Errorf("a write to hour 3 after its expiry: %v, want ErrExpired", err)
	}
}

// TestRepeatedSteps runs the writes a handler of package eventual may use
// twice, as a message delivered twice runs them: Upsert leaves one entity
// with the last content, Prepare creates nothing more, and Insert's second
// run is entity.ErrAlreadyExists (a handler counts it as done, as
// eventual.Insert does). Expire's second run finds nothing to do
// (TestExpireKeepsTheRest).
func TestRepeatedSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	r := f.open(t, env, rotation.Config[Attempt]{})
	a := Attempt{PartitionKey: "ann", RowKey: keys.TicksKeySeq(hour(0), 0), At: hour(0), Success: true}
	for run := range 2 {
		if err := r.Prepare(ctx, hour(0)); err != nil {
			t.Fatalf("Prepare, run %d: %v", run+1, err)
		}
		v := a
		if err := r.Upsert(ctx, &v, entity.Replace); err != nil {
			t.Fatalf("Upsert, run %d: %v", run+1, err)
		}
		b := Attempt{PartitionKey: "bob", RowKey: a.RowKey, At: hour(0)}
		err := r.Insert(ctx, &b)
		if run == 0 && err != nil || run == 1 && !errors.Is(err, entity.ErrAlreadyExists) {
			t.Fatalf("Insert, run %d: %v", run+1, err)
		}
	}
	got := readAll(t, r, hour(0), hour(1), entity.Query{})
	if len(got) != 2 || !got[0].Success {
		t.Errorf("after two runs: %+v, want ann's attempt and bob's, once each", got)
	}
	if tables := tablesOf(t, f.name); len(tables) != 2 {
		t.Errorf("tables %v, want hour 0's and the one ahead", tables)
	}
}
