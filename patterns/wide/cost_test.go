package wide_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/wide"
)

// Each operation on a 1,000-property entity costs the storage transactions
// the package documents: one per write and per read; Modify reads, then
// writes.
func TestStorageTransactions(t *testing.T) {
	t.Parallel()
	m := cost.NewMeter()
	client := env.With(m.Policy()).Table(t)
	w := wrap[Thousand](t, client, wide.Config{})
	ctx := t.Context()
	v := Thousand{PK: "Sales", ID: "000123"}
	fill(&v, rand.New(rand.NewPCG(3, 4)))

	steps := []struct {
		name string
		run  func() error
		want map[string]int64
	}{
		{"insert", func() error { return w.Insert(ctx, &v) }, map[string]int64{cost.OpBatch: 1}},
		{"get", func() error { var err error; v, err = w.Get(ctx, "Sales", "000123"); return err }, map[string]int64{cost.OpQuery: 1}},
		{"replace", func() error { v.C0.S = "changed"; return w.Replace(ctx, &v) }, map[string]int64{cost.OpBatch: 1}},
		{"modify", func() error {
			var err error
			v, err = w.Modify(ctx, "Sales", "000123", func(e *Thousand) error { e.C1.L++; return nil }, entity.ModifyOptions{})
			return err
		}, map[string]int64{cost.OpQuery: 1, cost.OpBatch: 1}},
		{"delete", func() error { return w.Delete(ctx, "Sales", "000123", v.ETag) }, map[string]int64{cost.OpBatch: 1}},
	}
	for _, s := range steps {
		before := m.Snapshot()
		if err := s.run(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		used := m.Snapshot().Sub(before)
		var total int64
		for op, n := range s.want {
			total += n
			if got := used.Count(cost.Table, op); got != n {
				t.Errorf("%s: %d %s, want %d (%v)", s.name, got, op, n, used)
			}
		}
		if used.Total() != total {
			t.Errorf("%s: %v, want %d transactions", s.name, used, total)
		}
	}
}

// Config.PageSize is the $top of a read: a 1,000-property entity (a head
// and 5 rows) is one query by default, three with two rows per page, and
// reads back the same. New refuses a page size out of range, and a nil
// table, with a *wide.ConfigError before any request.
func TestPageSize(t *testing.T) {
	t.Parallel()
	m := cost.NewMeter()
	client := env.With(m.Policy()).Table(t)
	ctx := t.Context()
	v := Thousand{PK: "Sales", ID: "paged"}
	fill(&v, rand.New(rand.NewPCG(5, 6)))
	if err := wrap[Thousand](t, client, wide.Config{}).Insert(ctx, &v); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ page, queries int }{{0, 1}, {1000, 1}, {6, 1}, {2, 3}, {1, 6}} {
		w := wrap[Thousand](t, client, wide.Config{PageSize: c.page})
		before := m.Snapshot()
		got, err := w.Get(ctx, v.PK, v.ID)
		used := m.Snapshot().Sub(before)
		if err != nil || got.ETag != v.ETag || got.C4.S != v.C4.S {
			t.Fatalf("PageSize %d: read %q (%v), want the version written", c.page, got.ETag, err)
		}
		if n := used.Count(cost.Table, cost.OpQuery); n != int64(c.queries) {
			t.Errorf("PageSize %d: %d queries, want %d", c.page, n, c.queries)
		}
	}
	tbl, err := entity.NewTable[Thousand](client)
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []wide.Config{{PageSize: -1}, {PageSize: entity.MaxPageSize + 1}} {
		var ce *wide.ConfigError
		if _, err := wide.New(tbl, cfg); !errors.As(err, &ce) || ce.Field != "Config.PageSize" || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("New with PageSize %d: %v, want a *ConfigError naming PageSize", cfg.PageSize, err)
		}
	}
	var ce *wide.ConfigError
	if _, err := wide.New[Thousand](nil, wide.Config{}); !errors.As(err, &ce) || ce.Field != "table" {
		t.Errorf("New with a nil table: %v, want a *ConfigError", err)
	}
}
