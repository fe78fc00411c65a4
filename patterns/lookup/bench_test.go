package lookup_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/patterns/lookup"
)

// BenchmarkLookup looks up one of 100 departments by key. /tablekit reads
// it from the cache (the first lookup loads the partition with one query;
// a TTL of a minute keeps it); /raw is a point query with raw aztables for
// every lookup. storage-tx/op is the cost meter's count per lookup.
func BenchmarkLookup(b *testing.B) {
	ctx := context.Background()
	meter := cost.NewMeter()
	metered := env.With(meter.Policy())
	tbl := setup(b, metered, 100)
	raw := metered.TableService.NewClient(tbl.Name())
	b.Run("tablekit", func(b *testing.B) {
		c, err := lookup.New(tbl, lookup.Config{Query: departments, TTL: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		before := meter.Snapshot()
		for i := 0; b.Loop(); i++ {
			d, err := c.Get(ctx, "departments", fmt.Sprintf("d%03d", i%100))
			if err != nil || d.Name == "" {
				b.Fatal(d, err)
			}
		}
		b.ReportMetric(float64(meter.Snapshot().Sub(before).Total())/float64(b.N), "storage-tx/op")
	})
	b.Run("raw", func(b *testing.B) {
		before := meter.Snapshot()
		for i := 0; b.Loop(); i++ {
			resp, err := raw.GetEntity(ctx, "departments", fmt.Sprintf("d%03d", i%100), nil)
			if err != nil {
				b.Fatal(err)
			}
			var d struct{ Name, CostCenter string }
			if err := json.Unmarshal(resp.Value, &d); err != nil || d.Name == "" {
				b.Fatal(d, err)
			}
		}
		b.ReportMetric(float64(meter.Snapshot().Sub(before).Total())/float64(b.N), "storage-tx/op")
	})
}
