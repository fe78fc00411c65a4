package compound_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/compound"
)

// Reading is a device's telemetry reading, keyed by the device and the
// instant it was taken.
type Reading struct {
	PartitionKey string
	RowKey       string
	At           time.Time
	Value        int64
}

// timeParts are the two orders a time-keyed relation can take.
var timeParts = []struct {
	name string
	part compound.Part[time.Time]
}{{"Time", compound.Time()}, {"NewestFirst", compound.NewestFirst()}}

func timeRelation(t testing.TB, tbl *entity.Table[Reading], part compound.Part[time.Time]) *compound.Relation[Reading, string, time.Time] {
	t.Helper()
	rel, err := compound.New(tbl, compound.Config[string, time.Time]{Prefix: "r", Parent: compound.Text(), Child: part})
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// inWindow reports whether key is in [from, to) in the service's order.
func inWindow(key, from, to string) bool {
	return keys.Compare(from, key) <= 0 && keys.Compare(key, to) < 0
}

// TestWindowKeys: for both time orders, the range In returns holds the key
// of an instant exactly when From ≤ instant < To: at both bounds, for
// bounds between two ticks, for an empty or reversed window, and for
// bounds outside .NET DateTime's range, which are no bound.
func TestWindowKeys(t *testing.T) {
	base := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	tick := 100 * time.Nanosecond
	ids := []time.Time{keys.FromTicks(0), keys.FromTicks(1), keys.FromTicks(keys.MaxTicks - 1), keys.FromTicks(keys.MaxTicks)}
	for k := -4; k <= 4; k++ {
		ids = append(ids, base.Add(time.Duration(k)*tick))
	}
	windows := []compound.Window[time.Time]{
		{From: base, To: base.Add(tick)},                                         // exactly the one at base
		{From: base, To: base.Add(3 * tick)},                                     // base, +1, +2
		{From: base.Add(-tick / 2), To: base.Add(tick / 2)},                      // bounds between ticks: base
		{From: base.Add(tick / 2), To: base.Add(tick + tick/2)},                  // +1
		{From: base.Add(tick / 2), To: base.Add(tick / 2)},                       // empty
		{From: base, To: base},                                                   // empty
		{From: base.Add(tick), To: base},                                         // reversed: empty
		{To: base},                                                               // everything before base
		{From: base, To: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},           // from base on
		{From: time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), To: keys.FromTicks(1)}, // tick 0
		{From: keys.FromTicks(keys.MaxTicks), To: time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{From: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC)}, // empty
	}
	for _, tp := range timeParts {
		rel := timeRelation(t, &entity.Table[Reading]{}, tp.part)
		parentFrom, parentTo, _ := rel.Range("dev")
		for _, w := range windows {
			from, to, err := rel.In("dev", w)
			if err != nil {
				t.Fatalf("%s %v: %v", tp.name, w, err)
			}
			if keys.Compare(from, parentFrom) < 0 || keys.Compare(parentTo, to) < 0 || keys.Compare(to, from) < 0 {
				t.Fatalf("%s %v: [%q, %q) is not within the parent's [%q, %q)", tp.name, w, from, to, parentFrom, parentTo)
			}
			for _, id := range ids {
				key, err := rel.Key("dev", id)
				if err != nil {
					t.Fatal(err)
				}
				want := !id.Before(w.From) && id.Before(w.To)
				if got := inWindow(key, from, to); got != want {
					t.Errorf("%s: %v in [%v, %v): key %q in [%q, %q) = %v, want %v", tp.name, id, w.From, w.To, key, from, to, got, want)
				}
			}
		}
	}
	// A part whose keys sort as its ids: In is Between, empty when reversed.
	years, err := compound.New(&entity.Table[Review]{}, guideKeys())
	if err != nil {
		t.Fatal(err)
	}
	f1, t1, _ := years.In(123, compound.Window[int64]{From: 2012, To: 2014})
	f2, t2, _ := years.Between(123, 2012, 2014)
	if f1 != f2 || t1 != t2 {
		t.Errorf("Int: In %q %q, Between %q %q", f1, t1, f2, t2)
	}
	if f, to, err := years.In(123, compound.Window[int64]{From: 2014, To: 2012}); err != nil || f != to {
		t.Errorf("Int, reversed: %q %q %v, want an empty range", f, to, err)
	}
	if _, _, err := years.In(123, compound.Window[int64]{From: -1, To: 2012}); err == nil {
		t.Error("Int: a negative id made a window")
	}
}

// FuzzWindow checks TestWindowKeys's rule for arbitrary instants and
// windows: an instant's key is in In's range exactly when the instant is
// in the window, for both time orders.
func FuzzWindow(f *testing.F) {
	f.Add(int64(638500000000000000), int64(1714557600), int64(0), int64(1714557600), int64(100))
	f.Add(int64(638500000000000000), int64(1714557600), int64(50), int64(1714557600), int64(150))
	f.Add(int64(0), int64(-62135596800), int64(0), int64(-62135596800), int64(100))
	f.Add(keys.MaxTicks, int64(253402300799), int64(999999900), int64(253402300800), int64(0))
	rels := make([]*compound.Relation[Reading, string, time.Time], len(timeParts))
	for i, tp := range timeParts {
		rels[i] = timeRelation(f, &entity.Table[Reading]{}, tp.part)
	}
	f.Fuzz(func(t *testing.T, idTicks, fromSec, fromNsec, toSec, toNsec int64) {
		id := keys.FromTicks(idTicks) // clamped to DateTime's range
		from := time.Unix(fromSec%(1<<40), fromNsec%1e9)
		to := time.Unix(toSec%(1<<40), toNsec%1e9)
		want := !id.Before(from) && id.Before(to)
		for i, rel := range rels {
			lo, hi, err := rel.In("d", compound.Window[time.Time]{From: from, To: to})
			if err != nil {
				t.Fatal(err)
			}
			key, err := rel.Key("d", id)
			if err != nil {
				t.Fatal(err)
			}
			if got := inWindow(key, lo, hi); got != want {
				t.Fatalf("%s: %v in [%v, %v) = %v, key %q in [%q, %q) = %v", timeParts[i].name, id, from, to, want, key, lo, hi, got)
			}
		}
	})
}

// TestChildrenInIsChronological: readings of a device 100 ns apart, kept
// oldest first (Time) and newest first (NewestFirst); ChildrenIn with
// Window{From: t1, To: t2} reads, in one range query each, exactly the
// readings t1 ≤ At < t2 in key order — the one at t1 in, the one at t2
// out — and with t2 = t1 + 100 ns exactly the reading at t1; a window
// with bounds between ticks reads the ticks after them; an empty one
// sends nothing; another device's readings never show. Read against
// Azurite, through the relation and checked against a raw listing.
func TestChildrenInIsChronological(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tick := 100 * time.Nanosecond
	t1 := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	t2 := t1.Add(10 * tick)
	var at []time.Time // t1 − 2 ticks … t2 + 2 ticks
	for k := -2; k <= 12; k++ {
		at = append(at, t1.Add(time.Duration(k)*tick))
	}
	for _, tp := range timeParts {
		t.Run(tp.name, func(t *testing.T) {
			t.Parallel()
			meter := cost.NewMeter()
			tbl, err := entity.NewTable[Reading](env.With(meter.Policy()).Table(t))
			if err != nil {
				t.Fatal(err)
			}
			rel := timeRelation(t, tbl, tp.part)
			b := tbl.NewBatch()
			for _, dev := range []string{"dev", "dev2"} {
				for i, a := range at {
					r := Reading{At: a, Value: int64(i)}
					if err := rel.Stamp(&r, "site", dev, a); err != nil {
						t.Fatal(err)
					}
					b.Insert(&r)
				}
			}
			if _, err := tbl.Submit(ctx, b); err != nil {
				t.Fatal(err)
			}
			read := func(w compound.Window[time.Time]) (got []time.Time, requests int64) {
				before := meter.Snapshot()
				for r, err := range rel.ChildrenIn(ctx, "site", "dev", w, entity.Query{}) {
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, r.At.UTC())
				}
				return got, meter.Snapshot().Sub(before).Total()
			}
			// want lists the readings From ≤ At < To in the part's key order.
			want := func(w compound.Window[time.Time]) []time.Time {
				var out []time.Time
				for _, a := range at {
					if !a.Before(w.From) && (w.To.IsZero() || a.Before(w.To)) {
						out = append(out, a)
					}
				}
				if tp.name == "NewestFirst" {
					slices.Reverse(out)
				}
				return out
			}
			for _, w := range []compound.Window[time.Time]{
				{From: t1, To: t2},
				{From: t1, To: t1.Add(tick)},
				{From: t2.Add(-tick), To: t2},
				{From: t1.Add(tick / 2), To: t2.Add(tick / 2)},
				{To: t1},
				{From: t2}, // a zero To is no bound
				{From: t2, To: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)},
			} {
				got, n := read(w)
				if !slices.Equal(got, want(w)) || n != 1 {
					t.Errorf("[%v, %v): read %v in %d requests, want %v in 1", w.From.Format(time.RFC3339Nano), w.To.Format(time.RFC3339Nano), got, n, want(w))
				}
			}
			// The boundaries, spelled out.
			got, _ := read(compound.Window[time.Time]{From: t1, To: t2})
			if len(got) != 10 || !slices.Contains(got, t1) || slices.Contains(got, t2) {
				t.Errorf("[t1, t2) read %v: want the 10 readings from t1, without t2", got)
			}
			if got, _ := read(compound.Window[time.Time]{From: t1, To: t1.Add(tick)}); !slices.Equal(got, []time.Time{t1}) {
				t.Errorf("[t1, t1+100ns) read %v, want exactly t1", got)
			}
			for _, w := range []compound.Window[time.Time]{{From: t2, To: t1}, {From: t1, To: t1}, {From: t1.Add(tick / 4), To: t1.Add(tick / 2)}} {
				if got, n := read(w); len(got) != 0 || n != 0 {
					t.Errorf("empty window [%v, %v): read %v in %d requests", w.From, w.To, got, n)
				}
			}
			if tp.name == "NewestFirst" {
				// ChildrenBetween stays in key order: newer bound first, and
				// the window (older, newer].
				var between []time.Time
				for r, err := range rel.ChildrenBetween(ctx, "site", "dev", t2, t1, entity.Query{}) {
					if err != nil {
						t.Fatal(err)
					}
					between = append(between, r.At.UTC())
				}
				if len(between) != 10 || slices.Contains(between, t1) || !slices.Contains(between, t2) {
					t.Errorf("ChildrenBetween(t2, t1) read %v, want (t1, t2]", between)
				}
			}
			// Against a raw listing of the partition: the device's readings
			// in the window, and no other device's.
			from, to, err := rel.In("dev", compound.Window[time.Time]{From: t1, To: t2})
			if err != nil {
				t.Fatal(err)
			}
			var raw []string
			pager := env.TableService.NewClient(tbl.Name()).NewListEntitiesPager(nil)
			for pager.More() {
				page, err := pager.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range page.Entities {
					var r Reading
					if err := entity.Unmarshal(e, &r); err != nil {
						t.Fatal(err)
					}
					dev, a, err := rel.Parse(r.RowKey)
					if err != nil {
						t.Fatal(err)
					}
					if inWindow(r.RowKey, from, to) {
						raw = append(raw, fmt.Sprint(dev, " ", a.UTC().Format(time.RFC3339Nano)))
					}
				}
			}
			var wantRaw []string
			for _, a := range want(compound.Window[time.Time]{From: t1, To: t2}) {
				wantRaw = append(wantRaw, "dev "+a.Format(time.RFC3339Nano))
			}
			if !slices.Equal(raw, wantRaw) {
				t.Errorf("raw listing within the range: %v, want %v", raw, wantRaw)
			}
		})
	}
}

// A device's readings kept newest first, read for the window 10:00 ≤ At <
// 10:02 in time's terms: the reading at 10:00 is in, the one at 10:02 out,
// newest first.
func ExampleRelation_ChildrenIn() {
	ctx := context.Background()
	client, drop, err := env.ScratchTable(ctx, "readings")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer drop()
	table, _ := entity.NewTable[Reading](client)
	readings, err := compound.New(table, compound.Config[string, time.Time]{
		Prefix: "r", Parent: compound.Text(), Child: compound.NewestFirst(),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	t0 := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	b := table.NewBatch()
	for m := range 4 {
		r := Reading{At: t0.Add(time.Duration(m) * time.Minute), Value: int64(20 + m)}
		if err := readings.Stamp(&r, "site", "dev-7", r.At); err != nil {
			fmt.Println(err)
			return
		}
		b.Insert(&r)
	}
	if _, err := table.Submit(ctx, b); err != nil {
		fmt.Println(err)
		return
	}
	w := compound.Window[time.Time]{From: t0, To: t0.Add(2 * time.Minute)}
	for r, err := range readings.ChildrenIn(ctx, "site", "dev-7", w, entity.Query{}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(r.At.UTC().Format("15:04"), r.Value)
	}
	// Output:
	// 10:01 21
	// 10:00 20
}
