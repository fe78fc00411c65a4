package entity_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
)

// BenchmarkModifyHotRow: 20 writers share b.N increments of one row —
// Modify with default options against the same read-modify-write loop
// written on aztables (GetEntity, UpdateEntity with If-Match, again at
// once on 412, without limit). An op is one increment. It fails on any
// ErrContention or a lost increment, and reports increments/s,
// storage-tx/op, rounds/op and the most rounds one increment took.
//
//	go test -run '^$' -bench ModifyHotRow -benchtime 2000x ./entity/   # 20 writers × 100
func BenchmarkModifyHotRow(b *testing.B) {
	const writers = 20
	ctx := context.Background()
	run := func(b *testing.B, m *cost.Meter, client *aztables.Client, increment func(ctx context.Context) (int, error)) {
		body, _ := aztables.EDMEntity{
			Entity:     aztables.Entity{PartitionKey: "hot", RowKey: "row"},
			Properties: map[string]any{"N": aztables.EDMInt64(0)},
		}.MarshalJSON()
		if _, err := client.AddEntity(ctx, body, nil); err != nil {
			b.Fatal(err)
		}
		before := m.Snapshot()
		b.ResetTimer()
		r := hotRow(ctx, writers, b.N, increment)
		b.StopTimer()
		if r.err != nil {
			b.Fatal(r.err)
		}
		if r.contention != 0 {
			b.Fatalf("%d of %d increments failed with ErrContention", r.contention, b.N)
		}
		resp, err := client.GetEntity(ctx, "hot", "row", nil)
		if err != nil {
			b.Fatal(err)
		}
		var e aztables.EDMEntity
		if err := e.UnmarshalJSON(resp.Value); err != nil || int(e.Properties["N"].(aztables.EDMInt64)) != b.N {
			b.Fatalf("stored %v (%v), want N=%d", e.Properties, err, b.N)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "increments/s")
		b.ReportMetric(float64(m.Snapshot().Sub(before).Total())/float64(b.N), "storage-tx/op")
		b.ReportMetric(r.roundsPerOp(), "rounds/op")
		b.ReportMetric(float64(r.maxRounds()), "max-rounds")
	}
	b.Run("tablekit", func(b *testing.B) {
		m := cost.NewMeter()
		client := env.With(m.Policy()).TableWith(b, entity.ClientOptions(env.ClientOptions()))
		counters, err := entity.NewTable[Counter](client)
		if err != nil {
			b.Fatal(err)
		}
		run(b, m, client, modifyIncrement(counters, "hot", "row"))
	})
	b.Run("raw", func(b *testing.B) {
		m := cost.NewMeter()
		client := env.With(m.Policy()).Table(b)
		run(b, m, client, func(ctx context.Context) (int, error) {
			for rounds := 1; ; rounds++ {
				got, err := client.GetEntity(ctx, "hot", "row", nil)
				if err != nil {
					return rounds, err
				}
				var e aztables.EDMEntity
				if err := e.UnmarshalJSON(got.Value); err != nil {
					return rounds, err
				}
				e.Properties["N"] = e.Properties["N"].(aztables.EDMInt64) + 1
				body, err := e.MarshalJSON()
				if err != nil {
					return rounds, err
				}
				_, err = client.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{IfMatch: &got.ETag, UpdateMode: aztables.UpdateModeMerge})
				var re *azcore.ResponseError
				if errors.As(err, &re) && re.StatusCode == http.StatusPreconditionFailed {
					continue
				}
				return rounds, err
			}
		})
	})
}
