package indexentity_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/indexentity"
)

// department loads the benchmarks' department: 10,000 employees in
// partition Sales, 100 of each of 100 last names (Name000 … Name099),
// with their SamePartition index built by Rebuild. It returns the Set and
// a raw client of the same table, both through meter.
func department(b *testing.B, meter *cost.Meter) (*indexentity.Set[Employee], *aztables.Client, int) {
	b.Helper()
	ctx := context.Background()
	metered := env.With(meter.Policy())
	raw := metered.Table(b)
	emps, err := entity.NewTable[Employee](raw)
	if err != nil {
		b.Fatal(err)
	}
	es := make([]Employee, 10_000)
	for i := range es {
		es[i] = Employee{PartitionKey: "Sales", RowKey: keys.Pad(int64(i), 6), FirstName: "F" + keys.Pad(int64(i), 6), LastName: fmt.Sprintf("Name%03d", i%100)}
	}
	if _, err := emps.BulkWrite(ctx, es, entity.BulkOptions{}); err != nil {
		b.Fatal(err)
	}
	s, err := indexentity.New(emps, indexentity.Config{}, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Rebuild(ctx, indexentity.CheckOptions{}); err != nil {
		b.Fatal(err)
	}
	return s, raw, len(es) + 100 // the employees and one index entity per name
}

// BenchmarkLookup finds the 100 employees named Name042 among the 10,000
// of their department: through the index entity (one read, 100 point
// reads, 16 at once) and, raw, with the partition scan the index saves
// ("PartitionKey eq 'Sales' and LastName eq 'Name042'", every page);
// raw-points is the lookup's 100 point reads alone, made with aztables,
// 16 at once, for what the lookup adds to them.
func BenchmarkLookup(b *testing.B) {
	meter := cost.NewMeter()
	s, raw, _ := department(b, meter)
	ctx := context.Background()
	b.Run("tablekit", func(b *testing.B) {
		start := meter.Snapshot()
		for b.Loop() {
			n := 0
			for _, err := range s.LookupAll(ctx, "lastname", "Sales", "Name042", indexentity.LookupOptions{}) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != 100 {
				b.Fatalf("%d employees", n)
			}
		}
		b.ReportMetric(float64(meter.Snapshot().Sub(start).Total())/float64(b.N), "storage-tx/op")
	})
	b.Run("raw", func(b *testing.B) {
		start := meter.Snapshot()
		for b.Loop() {
			n := 0
			pager := raw.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'Sales' and LastName eq 'Name042'")})
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
		b.ReportMetric(float64(meter.Snapshot().Sub(start).Total())/float64(b.N), "storage-tx/op")
	})
	rks, err := s.Members(ctx, "lastname", "Sales", "Name042")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("raw-points", func(b *testing.B) {
		start := meter.Snapshot()
		for b.Loop() {
			sem := make(chan struct{}, 16)
			var wg sync.WaitGroup
			for _, rk := range rks {
				sem <- struct{}{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					if _, err := raw.GetEntity(ctx, "Sales", rk, nil); err != nil {
						b.Error(err)
					}
				}()
			}
			wg.Wait()
		}
		b.ReportMetric(float64(meter.Snapshot().Sub(start).Total())/float64(b.N), "storage-tx/op")
	})
}

// BenchmarkMembers reads the keys of the 100 employees named Name042
// among the 10,000 of their department: the index read alone (one range
// query of the value's index entity) against the partition scan with
// $select=RowKey.
func BenchmarkMembers(b *testing.B) {
	meter := cost.NewMeter()
	s, raw, _ := department(b, meter)
	ctx := context.Background()
	b.Run("tablekit", func(b *testing.B) {
		start := meter.Snapshot()
		for b.Loop() {
			ms, err := s.Members(ctx, "lastname", "Sales", "Name042")
			if err != nil || len(ms) != 100 {
				b.Fatalf("%d keys, %v", len(ms), err)
			}
		}
		b.ReportMetric(float64(meter.Snapshot().Sub(start).Total())/float64(b.N), "storage-tx/op")
	})
	b.Run("raw", func(b *testing.B) {
		start := meter.Snapshot()
		for b.Loop() {
			n := 0
			pager := raw.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'Sales' and LastName eq 'Name042'"), Select: to.Ptr("RowKey")})
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
		b.ReportMetric(float64(meter.Snapshot().Sub(start).Total())/float64(b.N), "storage-tx/op")
	})
}

// BenchmarkCheck checks the department's index — reading every employee
// and every index entity, and comparing — against raw listing of the same
// table: entities per second of each.
func BenchmarkCheck(b *testing.B) {
	meter := cost.NewMeter()
	s, raw, entities := department(b, meter)
	ctx := context.Background()
	b.Run("tablekit", func(b *testing.B) {
		start := meter.Snapshot()
		for b.Loop() {
			for f, err := range s.Check(ctx, indexentity.CheckOptions{}) {
				if err != nil {
					b.Fatal(err)
				}
				b.Fatalf("drift: %v", f)
			}
		}
		b.ReportMetric(float64(entities)*float64(b.N)/b.Elapsed().Seconds(), "entities/s")
		b.ReportMetric(float64(meter.Snapshot().Sub(start).Total())/float64(b.N), "storage-tx/op")
	})
	b.Run("raw", func(b *testing.B) {
		start := meter.Snapshot()
		for b.Loop() {
			n := 0
			pager := raw.NewListEntitiesPager(nil)
			for pager.More() {
				page, err := pager.NextPage(ctx)
				if err != nil {
					b.Fatal(err)
				}
				n += len(page.Entities)
			}
			if n != entities {
				b.Fatalf("%d entities, want %d", n, entities)
			}
		}
		b.ReportMetric(float64(entities)*float64(b.N)/b.Elapsed().Seconds(), "entities/s")
		b.ReportMetric(float64(meter.Snapshot().Sub(start).Total())/float64(b.N), "storage-tx/op")
	})
}
