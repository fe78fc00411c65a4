package logtail_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/logtail"
)

// BenchmarkTail100 reads the 100 newest of 2,000 entries: Log.Tail against
// the guide's raw query, aztables' pager with $top=100 and the entities
// decoded by aztables.EDMEntity. Both are one storage transaction.
func BenchmarkTail100(b *testing.B) {
	ctx := context.Background()
	meter := cost.NewMeter()
	client := env.With(meter.Policy()).Table(b)
	tbl, err := entity.NewTable[Attempt](client)
	if err != nil {
		b.Fatal(err)
	}
	l, err := logtail.New(tbl, logtail.Config{})
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]*Attempt, 2000)
	for i := range batch {
		batch[i] = &Attempt{User: "alice", N: int32(i)}
	}
	if err := l.Append(ctx, "alice", batch...); err != nil {
		b.Fatal(err)
	}
	newest := batch[len(batch)-1].RowKey

	report := func(b *testing.B, before cost.Snapshot) {
		b.ReportMetric(float64(meter.Snapshot().Sub(before).Total())/float64(b.N), "storage-tx/op")
	}
	b.Run("tablekit", func(b *testing.B) {
		before := meter.Snapshot()
		for b.Loop() {
			tail, err := l.Tail(ctx, "alice", 100)
			if err != nil || len(tail) != 100 || tail[0].RowKey != newest {
				b.Fatalf("Tail: %d entries, %v", len(tail), err)
			}
		}
		report(b, before)
	})
	b.Run("raw", func(b *testing.B) {
		filter := "PartitionKey eq 'alice'"
		top := int32(100)
		before := meter.Snapshot()
		for b.Loop() {
			page, err := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter, Top: &top}).NextPage(ctx)
			if err != nil || len(page.Entities) != 100 {
				b.Fatalf("raw $top: %d entities, %v", len(page.Entities), err)
			}
			for i, body := range page.Entities {
				var e aztables.EDMEntity
				if err := e.UnmarshalJSON(body); err != nil {
					b.Fatal(err)
				}
				if i == 0 && e.RowKey != newest {
					b.Fatal("raw $top: not the newest entry first")
				}
			}
		}
		report(b, before)
	})
}

// BenchmarkAppend writes entries one at a time: Log.Append (an upsert with
// a sequenced key) against aztables' AddEntity of the same entry with an
// inverted-ticks key computed by hand.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	meter := cost.NewMeter()
	client := env.With(meter.Policy()).Table(b)
	tbl, err := entity.NewTable[Attempt](client)
	if err != nil {
		b.Fatal(err)
	}
	report := func(b *testing.B, before cost.Snapshot) {
		b.ReportMetric(float64(meter.Snapshot().Sub(before).Total())/float64(b.N), "storage-tx/op")
	}
	b.Run("tablekit", func(b *testing.B) {
		l, err := logtail.New(tbl, logtail.Config{})
		if err != nil {
			b.Fatal(err)
		}
		before := meter.Snapshot()
		for b.Loop() {
			if err := l.Append(ctx, "tk", &Attempt{User: "alice", N: 1}); err != nil {
				b.Fatal(err)
			}
		}
		report(b, before)
	})
	b.Run("raw", func(b *testing.B) {
		var seq int64
		before := meter.Snapshot()
		for b.Loop() {
			seq++
			// The guide's C# key, made unique within the tick by hand.
			ticks := time.Now().UnixNano()/100 + 621355968000000000
			rk := fmt.Sprintf("%019d_%010d", 3155378975999999999-ticks, seq)
			e := aztables.EDMEntity{
				Entity:     aztables.Entity{PartitionKey: "raw", RowKey: rk},
				Properties: map[string]any{"User": "alice", "N": int32(1)},
			}
			body, err := e.MarshalJSON()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := client.AddEntity(ctx, body, nil); err != nil {
				b.Fatal(err)
			}
		}
		report(b, before)
	})
}
