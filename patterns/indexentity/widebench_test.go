package indexentity_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// BenchmarkLookupValueAll finds the 100 employees of City03 among 1,000
// in 10 departments (100 per city, 10 in each department): through a
// TableWide index of 4 buckets (4 range queries, then 100 point reads,
// 16 at once), through its index read alone (ValueMembers), and, raw,
// with the table scan the index saves ("City eq 'City03'", every page).
// The lists are built by Rebuild.
func BenchmarkLookupValueAll(b *testing.B) {
	ctx := context.Background()
	meter := cost.NewMeter()
	metered := env.With(meter.Policy())
	raw := metered.Table(b)
	emps, err := entity.NewTable[Employee](raw)
	if err != nil {
		b.Fatal(err)
	}
	for d := range 10 {
		es := make([]Employee, 100)
		for i := range es {
			es[i] = Employee{PartitionKey: fmt.Sprintf("D%02d", d), RowKey: keys.Pad(int64(i), 6), City: fmt.Sprintf("City%02d", i%10)}
		}
		if _, err := emps.BulkWrite(ctx, es, entity.BulkOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	p, err := eventual.New(patterntest.Queues(b, env, 1), nil, patterntest.Fast())
	if err != nil {
		b.Fatal(err)
	}
	s, err := indexentity.New(emps, indexentity.Config{Processor: p},
		indexentity.Index[Employee]{Name: "city", Value: city, Placement: indexentity.TableWide, Buckets: 4})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Rebuild(ctx, indexentity.CheckOptions{}); err != nil {
		b.Fatal(err)
	}
	per := func(b *testing.B, start cost.Snapshot) {
		b.ReportMetric(float64(meter.Snapshot().Sub(start).Total())/float64(b.N), "storage-tx/op")
	}
	b.Run("tablekit", func(b *testing.B) {
		start := meter.Snapshot()
		for b.Loop() {
			n := 0
			for _, err := range s.LookupValueAll(ctx, "city", "City03", indexentity.LookupOptions{}) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != 100 {
				b.Fatalf("%d employees", n)
			}
		}
		per(b, start)
	})
	b.Run("tablekit-members", func(b *testing.B) {
		start := meter.Snapshot()
		for b.Loop() {
			ks, err := s.ValueMembers(ctx, "city", "City03")
			if err != nil || len(ks) != 100 {
				b.Fatal(len(ks), err)
			}
		}
		per(b, start)
	})
	b.Run("raw", func(b *testing.B) {
		start := meter.Snapshot()
		for b.Loop() {
			n := 0
			pager := raw.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("City eq 'City03'")})
			for pager.More() {
				page, err := pager.NextPage(ctx)
				if err != nil {
					b.Fatal(err)
				}
				n += len(page.Entities)
			}
			if n != 100 {
				b.Fatalf("%d employees", n)
			}
		}
		per(b, start)
	})
}
