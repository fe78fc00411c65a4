package dataseries_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/dataseries"
)

// 16 writers × 50 increments over the 24 hourly counters of one entity, all
// at once: every counter ends at exactly the sum of the increments reported
// as done.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSeries(t, newTable(t, env), dataseries.Config{Retry: entity.RetryPolicy{Attempts: 100, BaseDelay: 5 * time.Millisecond, MaxDelay: 200 * time.Millisecond}})
	const writers, increments = 16, 50
	var mu sync.Mutex
	want := make([]int64, 24)
	var wg sync.WaitGroup
	errs := make(chan error, writers*increments)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range increments {
				slot, delta := (w*increments+i)%24, int64(1+i%3)
				if _, err := s.Add(ctx, "alice", "2024-05-01", slot, delta); err != nil {
					errs <- err
					continue
				}
				mu.Lock()
				want[slot] += delta
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Add: %v", err)
	}
	got, err := s.Get(ctx, "alice", "2024-05-01")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("counters\n%v\nwant the reported increments\n%v", got, want)
	}
}

// A series longer than one entity holds rolls over to further entities of
// the partition; Get reads it with one range query, and a series of one
// entity with one point query.
func TestRolloverAndReadCost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	tbl := newTable(t, env.With(meter.Policy()))
	long := newSeries(t, tbl, dataseries.Config{Slots: 600, SlotsPerEntity: dataseries.MaxSlotsPerEntity, Prefix: "M"})
	want := make([]int64, 600)
	deltas := map[int]int64{0: 1, 250: 2, 251: 3, 501: 4, 502: 5, 599: 6}
	if err := long.AddMany(ctx, "dev1", "minutes", deltas); err != nil {
		t.Fatal(err)
	}
	for slot, d := range deltas {
		want[slot] += d
	}
	if v, err := long.Add(ctx, "dev1", "minutes", 599, -10); err != nil || v != -4 {
		t.Fatalf("Add(599, -10) = %d, %v; want -4", v, err)
	}
	want[599] -= 10

	// A full entity is at the service's limit of 252 properties, never
	// over it (Azurite does not check): 251 counters and the write token.
	full := map[int]int64{}
	for slot := range dataseries.MaxSlotsPerEntity {
		full[slot] = 1
		want[slot]++
	}
	if err := long.AddMany(ctx, "dev1", "minutes", full); err != nil {
		t.Fatal(err)
	}
	first, err := tbl.Get(ctx, "dev1", keys.Compound("minutes", "0"))
	if err != nil || len(first.Properties) != entity.MaxUserProperties {
		t.Fatalf("a full entity has %d properties (%v), want 252", len(first.Properties), err)
	}

	before := meter.Snapshot()
	got, err := long.Get(ctx, "dev1", "minutes")
	used := meter.Snapshot().Sub(before)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Get = %v, want %v", err, want)
	}
	if used.Total() != 1 || used.Count(cost.Table, cost.OpQuery) != 1 {
		t.Errorf("reading 600 slots in 3 entities took %v, want one query", used)
	}
	// Three entities, 251 + 251 + 98 slots, under compound keys.
	var rows []string
	for e, err := range tbl.Query(ctx, entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, e.RowKey)
	}
	slices.SortFunc(rows, keys.Compare) // the service's order is not the claim (Cosmos DB keeps none)
	if want := []string{keys.Compound("minutes", "0"), keys.Compound("minutes", "1"), keys.Compound("minutes", "2")}; !slices.Equal(rows, want) {
		t.Errorf("entities %q, want %q", rows, want)
	}

	day := newSeries(t, tbl, dataseries.Config{Prefix: "H"})
	if _, err := day.Add(ctx, "dev1", "2024-05-01", 23, 7); err != nil {
		t.Fatal(err)
	}
	before = meter.Snapshot()
	got, err = day.Get(ctx, "dev1", "2024-05-01")
	used = meter.Snapshot().Sub(before)
	if err != nil || got[23] != 7 || len(got) != 24 {
		t.Fatalf("Get = %v, %v", got, err)
	}
	if used.Total() != 1 || used.Count(cost.Table, cost.OpGet) != 1 {
		t.Errorf("reading a day took %v, want one point query", used)
	}
	e, err := tbl.Get(ctx, "dev1", "2024-05-01")
	if err != nil || e.Properties["H23"] != int64(7) {
		t.Errorf("stored entity %v, %v; want H23 = Int64 7", e.Properties, err)
	}
	// A series never written reads as zeros.
	if got, err := day.Get(ctx, "dev1", "1999-01-01"); err != nil || slices.ContainsFunc(got, func(v int64) bool { return v != 0 }) {
		t.Errorf("unwritten series = %v, %v; want zeros", got, err)
	}
}

// An increment changes only its slots: the application's own properties of
// the entity stay, a slot stored as something else than an integer is
// refused, and an increment past Int64 is refused before writing.
func TestIncrementKeepsOtherProperties(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newTable(t, env)
	s := newSeries(t, tbl, dataseries.Config{})
	app := &entity.DynamicEntity{PartitionKey: "p", RowKey: "r"}
	app.Set("Owner", "alice").Set("C05", int32(4)).Set("C06", "six")
	if err := tbl.Insert(ctx, app); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Add(ctx, "p", "r", 5, 1); err != nil || v != 5 {
		t.Fatalf("Add to an Int32 slot = %d, %v; want 5", v, err)
	}
	if _, err := s.Add(ctx, "p", "r", 6, 1); !errors.Is(err, dataseries.ErrStoredType) {
		t.Errorf("Add to a String slot = %v, want ErrStoredType", err)
	}
	if _, err := s.Add(ctx, "p", "r", 7, math.MaxInt64); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, "p", "r", 7, 1); !errors.Is(err, dataseries.ErrOverflow) {
		t.Errorf("Add past MaxInt64 = %v, want ErrOverflow", err)
	}
	e, err := tbl.Get(ctx, "p", "r")
	if err != nil {
		t.Fatal(err)
	}
	if e.Properties["Owner"] != "alice" || e.Properties["C05"] != int64(5) || e.Properties["C06"] != "six" || e.Properties["C07"] != int64(math.MaxInt64) {
		t.Errorf("entity after the increments: %v", e.Properties)
	}
}

// Bad arguments are refused with an *ArgError before any request: the
// table points at a closed port, so a request would fail differently.
func TestInvalidInputSendsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, err := entity.NewTableFromConnectionString[entity.DynamicEntity](
		"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="+
			"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;"+
			"TableEndpoint=http://127.0.0.1:1/devstoreaccount1/", "nowhere", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := newSeries(t, tbl, dataseries.Config{})
	long := newSeries(t, tbl, dataseries.Config{Slots: 1000, SlotsPerEntity: 10})
	errOf := func(_ any, err error) error { return err }
	cases := map[string]error{
		"Slots -1":            errOf(dataseries.New(tbl, dataseries.Config{Slots: -1})),
		"SlotsPerEntity 252":  errOf(dataseries.New(tbl, dataseries.Config{SlotsPerEntity: 252})),
		"1,001 entities":      errOf(dataseries.New(tbl, dataseries.Config{Slots: 1001, SlotsPerEntity: 1})),
		"prefix 1x":           errOf(dataseries.New(tbl, dataseries.Config{Prefix: "1x"})),
		"prefix with a space": errOf(dataseries.New(tbl, dataseries.Config{Prefix: "a b"})),
		"nil table":           errOf(dataseries.New(nil, dataseries.Config{})),
		"slot -1":             errOf(s.Add(ctx, "p", "r", -1, 1)),
		"slot 24":             errOf(s.Add(ctx, "p", "r", 24, 1)),
		"slot 1000":           long.AddMany(ctx, "p", "r", map[int]int64{3: 1, 1000: 1}),
		"partition key":       errOf(s.Add(ctx, "a/b", "r", 1, 1)),
		"row key":             errOf(s.Get(ctx, "p", "r?")),
		"row key too long":    errOf(long.Get(ctx, "p", strings.Repeat("r", keys.MaxKeyLength-1))),
	}
	for name, err := range cases {
		var ae *dataseries.ArgError
		var ce *dataseries.ConfigError // New's arguments
		if !errors.As(err, &ae) && !errors.As(err, &ce) || !errors.Is(err, dataseries.ErrInvalid) || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("%s: %v; want an *ArgError or *ConfigError matching ErrInvalid", name, err)
		}
	}
}
