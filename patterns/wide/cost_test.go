package wide_test

import (
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
