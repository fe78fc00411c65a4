package dataseries_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/patterns/dataseries"
)

// BenchmarkReadDay reads a day of 24 hourly counters: the guide's series in
// one entity (Series.Get, one point query) against its first design, one
// entity per hour read with a 24-entity range query through aztables.
func BenchmarkReadDay(b *testing.B) {
	ctx := context.Background()
	meter := cost.NewMeter()
	metered := env.With(meter.Policy())
	report := func(b *testing.B, before cost.Snapshot) {
		b.ReportMetric(float64(meter.Snapshot().Sub(before).Total())/float64(b.N), "storage-tx/op")
	}
	b.Run("tablekit", func(b *testing.B) {
		s := newSeries(b, newTable(b, metered), dataseries.Config{})
		deltas := map[int]int64{}
		for h := range 24 {
			deltas[h] = int64(100 + h)
		}
		if err := s.AddMany(ctx, "alice", "2024-05-01", deltas); err != nil {
			b.Fatal(err)
		}
		before := meter.Snapshot()
		for b.Loop() {
			day, err := s.Get(ctx, "alice", "2024-05-01")
			if err != nil || day[23] != 123 {
				b.Fatal(day, err)
			}
		}
		report(b, before)
	})
	b.Run("raw", func(b *testing.B) {
		client := metered.Table(b)
		for h := range 24 {
			e := aztables.EDMEntity{
				Entity:     aztables.Entity{PartitionKey: "alice", RowKey: fmt.Sprintf("2024-05-01_%02d", h)},
				Properties: map[string]any{"Count": aztables.EDMInt64(100 + h)},
			}
			body, _ := e.MarshalJSON()
			if _, err := client.AddEntity(ctx, body, nil); err != nil {
				b.Fatal(err)
			}
		}
		filter := "PartitionKey eq 'alice' and RowKey ge '2024-05-01_' and RowKey lt '2024-05-01`'"
		before := meter.Snapshot()
		for b.Loop() {
			page, err := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter}).NextPage(ctx)
			if err != nil || len(page.Entities) != 24 {
				b.Fatal(len(page.Entities), err)
			}
			day := make([]int64, 24)
			for h, body := range page.Entities {
				var e aztables.EDMEntity
				if err := e.UnmarshalJSON(body); err != nil {
					b.Fatal(err)
				}
				day[h] = int64(e.Properties["Count"].(aztables.EDMInt64))
			}
			if day[23] != 123 {
				b.Fatal(day)
			}
		}
		report(b, before)
	})
}

// BenchmarkIncrement adds 1 to an hourly counter, one writer: Series.Add
// (read, ETag-guarded merge of the one slot) against the same loop written
// by hand on aztables (GetEntity, then UpdateEntity with If-Match).
func BenchmarkIncrement(b *testing.B) {
	ctx := context.Background()
	meter := cost.NewMeter()
	metered := env.With(meter.Policy())
	report := func(b *testing.B, before cost.Snapshot) {
		b.ReportMetric(float64(meter.Snapshot().Sub(before).Total())/float64(b.N), "storage-tx/op")
	}
	b.Run("tablekit", func(b *testing.B) {
		s := newSeries(b, newTable(b, metered), dataseries.Config{})
		if _, err := s.Add(ctx, "alice", "2024-05-01", 0, 1); err != nil {
			b.Fatal(err)
		}
		before := meter.Snapshot()
		i := 0
		for b.Loop() {
			if _, err := s.Add(ctx, "alice", "2024-05-01", i%24, 1); err != nil {
				b.Fatal(err)
			}
			i++
		}
		report(b, before)
	})
	b.Run("raw", func(b *testing.B) {
		client := metered.Table(b)
		e := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "alice", RowKey: "2024-05-01"}, Properties: map[string]any{}}
		for h := range 24 {
			e.Properties[fmt.Sprintf("C%02d", h)] = aztables.EDMInt64(0)
		}
		body, _ := e.MarshalJSON()
		if _, err := client.AddEntity(ctx, body, nil); err != nil {
			b.Fatal(err)
		}
		before := meter.Snapshot()
		i := 0
		for b.Loop() {
			resp, err := client.GetEntity(ctx, "alice", "2024-05-01", nil)
			if err != nil {
				b.Fatal(err)
			}
			var cur aztables.EDMEntity
			if err := cur.UnmarshalJSON(resp.Value); err != nil {
				b.Fatal(err)
			}
			name := fmt.Sprintf("C%02d", i%24)
			upd := aztables.EDMEntity{Entity: cur.Entity, Properties: map[string]any{name: cur.Properties[name].(aztables.EDMInt64) + 1}}
			body, _ := upd.MarshalJSON()
			etag := azcore.ETag(resp.ETag)
			if _, err := client.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeMerge}); err != nil {
				b.Fatal(err)
			}
			i++
		}
		report(b, before)
	})
}
