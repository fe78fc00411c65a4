package dataseries_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/dataseries"
)

// sharedTable creates a table for clients built from several views of the
// environment, and returns its name.
func sharedTable(t *testing.T) string {
	t.Helper()
	name := env.TableName(t)
	if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
		t.Fatal(err)
	}
	return name
}

// seriesOn returns a Series over the table name through e's clients.
func seriesOn(t testing.TB, e *integration.Env, name string, cfg dataseries.Config) *dataseries.Series {
	t.Helper()
	tbl, err := entity.NewTable[entity.DynamicEntity](e.TableService.NewClient(name))
	if err != nil {
		t.Fatal(err)
	}
	return newSeries(t, tbl, cfg)
}

// isMerge matches an ETag-guarded merge: the write of an increment.
func isMerge(r *http.Request) bool {
	m := r.Header.Get("If-Match")
	return r.Method == http.MethodPatch && m != "" && m != "*"
}

// isCreate matches an insert: the creation of a series entity by its
// first increment.
func isCreate(r *http.Request) bool {
	return r.Method == http.MethodPost && !strings.HasSuffix(r.URL.Path, "/$batch")
}

// rawEntity reads an entity with aztables alone: its properties, nil when
// it does not exist.
func rawEntity(t *testing.T, client *aztables.Client, pk, rk string) map[string]any {
	t.Helper()
	resp, err := client.GetEntity(t.Context(), pk, rk, nil)
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var e aztables.EDMEntity
	if err := e.UnmarshalJSON(resp.Value); err != nil {
		t.Fatal(err)
	}
	if e.Properties == nil {
		e.Properties = map[string]any{}
	}
	return e.Properties
}

// rawCounter is the Int64 counter name of props (0 when absent).
func rawCounter(t *testing.T, props map[string]any, name string) int64 {
	t.Helper()
	switch v := props[name].(type) {
	case nil:
		return 0
	case aztables.EDMInt64:
		return int64(v)
	case int32:
		return int64(v)
	}
	t.Fatalf("%s holds %T", name, props[name])
	return 0
}

// rawWrite writes an entity as another program would, with aztables
// alone: mode "insert", "merge" (upsert-merge), "replace" (upsert-replace)
// or "delete".
func rawWrite(ctx context.Context, client *aztables.Client, mode, pk, rk string, props map[string]any) error {
	if mode == "delete" {
		_, err := client.DeleteEntity(ctx, pk, rk, nil)
		return err
	}
	e := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: pk, RowKey: rk}, Properties: props}
	body, err := json.Marshal(e)
	if err != nil {
		return err
	}
	switch mode {
	case "insert":
		_, err = client.AddEntity(ctx, body, nil)
	case "merge":
		_, err = client.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge})
	default:
		_, err = client.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
	}
	return err
}

// A's Add(+1) is applied and its reply lost; B's Add(+1) lands before
// azcore resends A's: A's resend is refused (412, or 409 for the series'
// first increment, an insert) and settled as applied.
// A returns the value its own increment produced, B the next one: used for
// sequence numbers, the counter never hands out one number twice.
func TestAddReturnsItsOwnValue(t *testing.T) {
	t.Parallel()
	name := sharedTable(t)
	f := faults.New(faults.Config{})
	a := seriesOn(t, env.With(f), name, dataseries.Config{})
	b := seriesOn(t, env, name, dataseries.Config{})
	ctx := t.Context()
	var handed []int64
	for round := range 5 {
		var bv int64
		var berr error
		isWrite := func(r *http.Request) bool { return isMerge(r) || isCreate(r) }
		f.LoseNextThen(1, isWrite, func(*http.Request) { bv, berr = b.Add(context.Background(), "p", "seq", 3, 1) })
		av, err := a.Add(ctx, "p", "seq", 3, 1)
		if err != nil || berr != nil {
			t.Fatalf("round %d: A: %v, B: %v", round, err, berr)
		}
		if want := int64(2*round + 1); av != want || bv != want+1 {
			t.Fatalf("round %d: A got %d, B got %d; want %d and %d (A's own increment came first)", round, av, bv, want, want+1)
		}
		handed = append(handed, av, bv)
	}
	if f.Stats().LostReplies != 5 {
		t.Fatalf("%d replies lost, want 5", f.Stats().LostReplies)
	}
	slices.Sort(handed)
	if len(slices.Compact(handed)) != 10 {
		t.Fatalf("values handed out %v: duplicates", handed)
	}
	if got := rawCounter(t, rawEntity(t, env.TableService.NewClient(name), "p", "seq"), "C03"); got != 10 {
		t.Fatalf("stored %d, want 10", got)
	}
}

// Add with a delta of 0 returns the slot's value, changes nothing and
// creates nothing.
func TestAddZeroReturnsTheValue(t *testing.T) {
	t.Parallel()
	name := sharedTable(t)
	raw := env.TableService.NewClient(name)
	ctx := t.Context()
	for i, cfg := range []dataseries.Config{{}, {Slots: 10, SlotsPerEntity: 3}} {
		s := seriesOn(t, env, name, cfg)
		rk := "zero" + strconv.Itoa(i)
		if v, err := s.Add(ctx, "p", rk, 7, 0); err != nil || v != 0 {
			t.Fatalf("Add(0) on a series never written: %d, %v", v, err)
		}
		if e := rawEntity(t, raw, "p", rk); e != nil {
			t.Fatalf("Add(0) created %v", e)
		}
		if _, err := s.Add(ctx, "p", rk, 7, 5); err != nil {
			t.Fatal(err)
		}
		if v, err := s.Add(ctx, "p", rk, 7, 0); err != nil || v != 5 {
			t.Fatalf("Add(0) after +5: %d, %v; want 5", v, err)
		}
		if v, err := s.Add(ctx, "p", rk, 6, 0); err != nil || v != 0 {
			t.Fatalf("Add(0) of another slot: %d, %v; want 0", v, err)
		}
		if _, err := s.Add(ctx, "p", rk, cfg.Slots+30, 0); !errors.Is(err, dataseries.ErrInvalid) {
			t.Fatalf("Add(0) of a slot out of range: %v, want ErrInvalid", err)
		}
	}
}

// An increment applied whose reply is lost, while another program
// changes the same entity inside azcore's retry window: Add returns the
// value its own increment produced, or entity.ErrOutcomeUnknown — never
// a refusal, never another writer's value — and the stored counter, read
// with aztables alone, holds every increment reported done once.
func TestLostReplySeams(t *testing.T) {
	t.Parallel()
	name := sharedTable(t)
	raw := env.TableService.NewClient(name)
	other := seriesOn(t, env, name, dataseries.Config{})
	const pk = "seam"
	cases := []struct {
		name   string
		exists bool                                       // the series entity holds C00 = 10 first
		lose   func(*http.Request) bool                   // A's request whose reply is lost
		then   func(ctx context.Context, rk string) error // the other writer
		want   int64                                      // A's value when it reports success
		final  func(stored map[string]any) bool           // the stored entity after A, success or unknown
	}{
		{"another Add", true, isMerge, func(ctx context.Context, rk string) error {
			_, err := other.Add(ctx, pk, rk, 0, 1)
			return err
		}, 11, func(s map[string]any) bool { return rawCounter(t, s, "C00") == 12 }},
		{"merge of another property", true, isMerge, func(ctx context.Context, rk string) error {
			return rawWrite(ctx, raw, "merge", pk, rk, map[string]any{"Note": "x"})
		}, 11, func(s map[string]any) bool { return rawCounter(t, s, "C00") == 11 && s["Note"] == "x" }},
		{"replace", true, isMerge, func(ctx context.Context, rk string) error {
			return rawWrite(ctx, raw, "replace", pk, rk, map[string]any{"C00": aztables.EDMInt64(100)})
		}, 11, func(s map[string]any) bool { return rawCounter(t, s, "C00") == 100 }},
		{"delete", true, isMerge, func(ctx context.Context, rk string) error {
			return rawWrite(ctx, raw, "delete", pk, rk, nil)
		}, 11, func(s map[string]any) bool { return s == nil }},
		{"delete and insert", true, isMerge, func(ctx context.Context, rk string) error {
			if err := rawWrite(ctx, raw, "delete", pk, rk, nil); err != nil {
				return err
			}
			return rawWrite(ctx, raw, "insert", pk, rk, map[string]any{"C00": aztables.EDMInt64(50)})
		}, 11, func(s map[string]any) bool { return rawCounter(t, s, "C00") == 50 }},
		// The first increment inserts the entity; another program sets the
		// counter by hand before the resend, which meets it (409): the
		// insert is found applied by its write token, which a merge keeps.
		{"merge beside the creation", false, isCreate, func(ctx context.Context, rk string) error {
			return rawWrite(ctx, raw, "merge", pk, rk, map[string]any{"C00": aztables.EDMInt64(5)})
		}, 1, func(s map[string]any) bool { return rawCounter(t, s, "C00") == 5 }},
		// A replace removes the token: nothing proves the insert, which
		// is ErrOutcomeUnknown, never applied again on top of the 5.
		{"replace beside the creation", false, isCreate, func(ctx context.Context, rk string) error {
			return rawWrite(ctx, raw, "replace", pk, rk, map[string]any{"C00": aztables.EDMInt64(5)})
		}, 1, func(s map[string]any) bool { return rawCounter(t, s, "C00") == 5 }},
		{"delete beside the creation", false, isCreate, func(ctx context.Context, rk string) error {
			return rawWrite(ctx, raw, "delete", pk, rk, nil)
		}, 1, func(s map[string]any) bool { return rawCounter(t, s, "C00") == 1 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			rk := c.name
			if c.exists {
				if err := rawWrite(ctx, raw, "insert", pk, rk, map[string]any{"C00": aztables.EDMInt64(10)}); err != nil {
					t.Fatal(err)
				}
			}
			f := faults.New(faults.Config{})
			a := seriesOn(t, env.With(f), name, dataseries.Config{})
			var otherErr error
			f.LoseNextThen(1, c.lose, func(*http.Request) { otherErr = c.then(context.Background(), rk) })
			v, err := a.Add(ctx, pk, rk, 0, 1)
			if otherErr != nil || f.Stats().LostReplies != 1 {
				t.Fatalf("the other writer: %v; %d replies lost", otherErr, f.Stats().LostReplies)
			}
			t.Logf("Add: %d, %v", v, err)
			switch {
			case err == nil && v != c.want:
				t.Fatalf("Add returned %d, want its own increment's value %d", v, c.want)
			case err != nil && !errors.Is(err, entity.ErrOutcomeUnknown):
				t.Fatalf("Add: %v, want success or ErrOutcomeUnknown", err)
			}
			if stored := rawEntity(t, raw, pk, rk); !c.final(stored) {
				t.Fatalf("stored %v", stored)
			}
		})
	}
}

// chunked is a series of 6 slots over 3 entities of 2 slots.
var chunked = dataseries.Config{Slots: 6, SlotsPerEntity: 2}

// chunkKey is the RowKey of chunk c of the chunked series rk.
func chunkKey(rk string, c int) string { return keys.Compound(rk, keys.Pad(int64(c), 1)) }

// Add and AddMany crashed after each of their requests (the process dies:
// no later request is sent): every entity of the series, read with
// aztables alone, holds its whole increment or none of it; the entities
// incremented are the first ones in slot order; and a fresh Series reads
// exactly that and increments on top of it.
func TestCrashAtEveryRequest(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		cfg    dataseries.Config
		deltas map[int]int64
		exists bool
	}{
		{"Add first", dataseries.Config{}, map[int]int64{4: 3}, false},
		{"Add", dataseries.Config{}, map[int]int64{4: 3}, true},
		{"AddMany one entity", dataseries.Config{}, map[int]int64{1: 1, 4: 2, 23: 3}, true},
		{"AddMany three entities", chunked, map[int]int64{0: 1, 1: 2, 2: 3, 5: 4}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
				name := sharedTable(t)
				raw := env.TableService.NewClient(name)
				fresh := seriesOn(t, env, name, c.cfg)
				if c.exists {
					if err := fresh.AddMany(t.Context(), "p", "s", map[int]int64{0: 100}); err != nil {
						t.Fatal(err)
					}
				}
				before, err := fresh.Get(t.Context(), "p", "s")
				if err != nil {
					t.Fatal(err)
				}
				return crashtest.Run{
					Work: func(ctx context.Context, env *integration.Env) error {
						s := seriesOn(t, env, name, c.cfg)
						if len(c.deltas) == 1 {
							for slot, d := range c.deltas {
								_, err := s.Add(ctx, "p", "s", slot, d)
								return err
							}
						}
						return s.AddMany(ctx, "p", "s", c.deltas)
					},
					Recover: func(context.Context) error { return nil },
					Check: func(t *testing.T) {
						per := c.cfg.SlotsPerEntity
						if per == 0 {
							per = 1 << 20
						}
						slots := c.cfg.Slots
						if slots == 0 {
							slots = 24
						}
						stored := make([]int64, slots)
						done := []bool{}
						for chunk := 0; chunk*per < slots; chunk++ {
							rk := "s"
							if c.cfg.SlotsPerEntity > 0 {
								rk = chunkKey("s", chunk)
							}
							props := rawEntity(t, raw, "p", rk)
							applied, untouched := true, true
							for slot := chunk * per; slot < min(slots, (chunk+1)*per); slot++ {
								stored[slot] = rawCounter(t, props, fresh.Property(slot))
								if stored[slot] != before[slot]+c.deltas[slot] {
									applied = false
								}
								if stored[slot] != before[slot] {
									untouched = false
								}
							}
							if !applied && !untouched {
								t.Fatalf("entity %s holds part of its increment: %v (before %v)", rk, stored, before)
							}
							done = append(done, applied && !untouched)
						}
						if i := slices.Index(done, false); i >= 0 && slices.Contains(done[i:], true) {
							t.Fatalf("entities incremented %v: not the first ones in slot order", done)
						}
						got, err := fresh.Get(t.Context(), "p", "s")
						if err != nil || !slices.Equal(got, stored[:len(got)]) {
							t.Fatalf("a fresh Series reads %v (%v), aztables %v", got, err, stored)
						}
						if v, err := fresh.Add(t.Context(), "p", "s", 0, 1); err != nil || v != got[0]+1 {
							t.Fatalf("a fresh Series' Add after the crash: %d, %v; want %d", v, err, got[0]+1)
						}
					},
				}
			}})
		})
	}
}

// One slot that cannot take its delta — stored by another program as a
// string, or at the edge of Int64 — in the last entity of a multi-entity
// AddMany is refused before anything is written: the entities before it
// keep their values (read with aztables), and the error names the entity.
func TestAddManyOneBadSlotWritesNothing(t *testing.T) {
	t.Parallel()
	name := sharedTable(t)
	raw := env.TableService.NewClient(name)
	s := seriesOn(t, env, name, chunked)
	ctx := t.Context()
	for _, c := range []struct {
		name  string
		value any
		want  error
	}{
		{"stored type", "seven", dataseries.ErrStoredType},
		{"overflow", aztables.EDMInt64(math.MaxInt64), dataseries.ErrOverflow},
	} {
		rk := "bad-" + c.name[:4]
		if err := rawWrite(ctx, raw, "insert", "p", chunkKey(rk, 2), map[string]any{s.Property(4): c.value}); err != nil {
			t.Fatal(err)
		}
		err := s.AddMany(ctx, "p", rk, map[int]int64{0: 1, 2: 1, 4: 1})
		var se *dataseries.Error
		if !errors.Is(err, c.want) || !errors.As(err, &se) || se.RowKey != chunkKey(rk, 2) {
			t.Fatalf("%s: AddMany = %v, want %v naming entity %q", c.name, err, c.want, chunkKey(rk, 2))
		}
		for chunk := range 2 {
			if e := rawEntity(t, raw, "p", chunkKey(rk, chunk)); e != nil {
				t.Fatalf("%s: entity %d written: %v", c.name, chunk, e)
			}
		}
	}
}
