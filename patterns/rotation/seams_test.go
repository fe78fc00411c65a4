package rotation_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/patterns/rotation"
)

// catalogState is the catalog of a rotation as a plain aztables client
// reads it: the expiry mark and the period entries' tables by label.
type catalogState struct {
	mark    time.Time
	entries map[string]string // label → table
}

func readCatalogRaw(t testing.TB, f *fixture) catalogState {
	t.Helper()
	s := catalogState{entries: map[string]string{}}
	filter := "PartitionKey eq '" + f.name + "'"
	for p := env.TableService.NewClient(f.catalog).NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter}); p.More(); {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Entities {
			var row map[string]any
			if err := json.Unmarshal(raw, &row); err != nil {
				t.Fatal(err)
			}
			rk, _ := row["RowKey"].(string)
			if rk == "meta" {
				if v, ok := row["ExpiredBefore"].(string); ok {
					m, err := time.Parse(time.RFC3339Nano, v)
					if err != nil {
						t.Fatal(err)
					}
					s.mark = m.UTC()
				}
				continue
			}
			tbl, _ := row["Table"].(string)
			s.entries[rk] = tbl
		}
	}
	return s
}

// checkCatalog asserts what every reader and writer relies on, read with
// plain clients: the rotation's tables are exactly those its catalog
// entries name, and no entry (so no table) is of a period before the
// expiry mark.
func checkCatalog(t testing.TB, f *fixture) catalogState {
	t.Helper()
	s := readCatalogRaw(t, f)
	var named []string
	for label, tbl := range s.entries {
		start, err := time.Parse("2006010215", label)
		if err != nil {
			t.Fatalf("catalog entry %q: %v", label, err)
		}
		if start.Before(s.mark) {
			t.Errorf("catalog entry %s (table %s) is of a period before the expiry mark %v", label, tbl, s.mark)
		}
		named = append(named, tbl)
	}
	slices.Sort(named)
	if got := tablesOf(t, f.name); !slices.Equal(got, named) {
		t.Errorf("tables %v, catalog entries name %v", got, named)
	}
	return s
}

// TestExpireCrashRecoveredByFreshRotation kills Expire(hour 2) after each
// of its storage requests — the catalog read, the move of the expiry
// mark, each table's deletion, the entries' deletion — and lets a fresh
// Rotation, which knows only what is stored, call Expire(hour 0): every
// expired period's table and entry is gone, the others are intact.
func TestExpireCrashRecoveredByFreshRotation(t *testing.T) {
	t.Parallel()
	n := crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		f := newFixture(t)
		w := f.open(t, env, rotation.Config[Attempt]{})
		var all, kept []Attempt
		for h := range 4 {
			as := attempts(hour(h), 2, 5)
			write(t, w, as)
			all = append(all, as...)
			if h >= 2 {
				kept = append(kept, as...)
			}
		}
		initial := readCatalogRaw(t, f)
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				r := f.open(t, kenv, rotation.Config[Attempt]{})
				_, err := r.Expire(ctx, hour(2))
				return err
			},
			Recover: func(ctx context.Context) error {
				fresh := f.open(t, env, rotation.Config[Attempt]{})
				_, err := fresh.Expire(ctx, hour(0))
				return err
			},
			Check: func(t *testing.T) {
				s := checkCatalog(t, f)
				periods := map[string]string{}
				for label, tbl := range initial.entries {
					// Unless the crash came before the mark moved, the
					// periods before hour 2 are gone.
					if s.mark.Before(hour(2)) || label >= hour(2).Format("2006010215") {
						periods[label] = tbl
					}
				}
				if !s.mark.IsZero() && !s.mark.Equal(hour(0)) && !s.mark.Equal(hour(2)) {
					t.Errorf("expiry mark %v, want none, hour 0 (the recovery's) or hour 2", s.mark)
				}
				if len(s.entries) != len(periods) {
					t.Errorf("periods %v left, want %v", s.entries, periods)
				}
				for label, tbl := range periods {
					if s.entries[label] != tbl {
						t.Errorf("period %s has table %q, want %q", label, s.entries[label], tbl)
					}
				}
				want := kept
				if s.mark.Before(hour(2)) {
					want = all
				}
				r := f.open(t, env, rotation.Config[Attempt]{})
				if got := readAll(t, r, hour(0), hour(5), entity.Query{}); !slices.Equal(keysOf(got), sorted(want)) {
					t.Errorf("read %d entities, want %d", len(got), len(want))
				}
			},
		}
	}})
	// The catalog read, the mark, two table deletions, the entries'.
	if n != 5 {
		t.Errorf("Expire made %d requests, want 5", n)
	}
}

// TestAheadEveryPeriod writes one period after another: with Ahead: n,
// the table of each period exists before its first write — also when
// that period's own table was created ahead of another.
func TestAheadEveryPeriod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, ahead := range []int{1, 2} {
		f := newFixture(t)
		r := f.open(t, env, rotation.Config[Attempt]{Ahead: ahead})
		for h := range 6 {
			a := attempts(hour(h), 1, 1)[0]
			if err := r.Insert(ctx, &a); err != nil {
				t.Fatal(err)
			}
			tables := tablesOf(t, f.name)
			for next := h + 1; next <= h+ahead; next++ {
				prefix := f.name + hour(next).Format("2006010215")
				if !slices.ContainsFunc(tables, func(n string) bool { return strings.HasPrefix(n, prefix) }) {
					t.Errorf("Ahead %d: after the first write of hour %d, hour %d has no table (tables %v)", ahead, h, next, tables)
				}
			}
		}
		if got := len(tablesOf(t, f.name)); got != 6+ahead {
			t.Errorf("Ahead %d: %d tables for 6 periods written, want %d", ahead, got, 6+ahead)
		}
		checkCatalog(t, f)
	}
}
