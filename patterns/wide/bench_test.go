package wide_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/google/uuid"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/wide"
)

// Benchmarks of a 1,000-property entity beside the same data split by hand
// into 4 raw aztables entities of 250 properties, on the same Azurite in
// the same run, with the storage transactions and the client CPU time each
// costs:
//
//	go test -run '^$' -bench . -benchtime 200x ./patterns/wide/

// benchProps is the benchmark's property bag: 1,000 properties, 125 of
// each EDM type, in the canonical Go types.
func benchProps() map[string]any {
	props := make(map[string]any, 1000)
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	for i := range 125 {
		n := fmt.Sprintf("%03d", i)
		props["S"+n] = "skill rating note " + n
		props["I"+n] = int32(i)
		props["L"+n] = int64(i) << 40
		props["D"+n] = float64(i) + 0.5
		props["B"+n] = i%2 == 0
		props["T"+n] = at.Add(time.Duration(i) * time.Hour)
		props["G"+n] = uuid.NewSHA1(uuid.NameSpaceOID, []byte(n))
		props["X"+n] = []byte("binary " + n)
	}
	return props
}

// rawSplit is the handwritten way: the bag in 4 aztables entities of 250
// properties, RowKeys id_1 … id_4, values in aztables' EDM wrappers.
func rawSplit(pk, id string, props map[string]any) [4]aztables.EDMEntity {
	var out [4]aztables.EDMEntity
	for k := range out {
		out[k] = aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("%s_%d", id, k+1)}, Properties: make(map[string]any, 250)}
	}
	i := 0
	for name, v := range props {
		switch x := v.(type) {
		case int64:
			v = aztables.EDMInt64(x)
		case time.Time:
			v = aztables.EDMDateTime(x)
		case uuid.UUID:
			v = aztables.EDMGUID(x.String())
		case []byte:
			v = aztables.EDMBinary(x)
		}
		out[i%4].Properties[name] = v
		i++
	}
	return out
}

// metered returns a client whose transactions m counts.
func metered(b *testing.B, m *cost.Meter) *aztables.Client {
	return env.With(m.Policy()).Table(b)
}

// measure starts counting an op's storage transactions and this process's
// CPU time (Azurite runs in another process: only the client's counts);
// the returned function reports both per op.
func measure(b *testing.B, m *cost.Meter) func() {
	before, cpu := m.Snapshot(), cpuNow()
	return func() {
		b.ReportMetric(float64(m.Snapshot().Sub(before).Total())/float64(b.N), "storage-tx/op")
		b.ReportMetric(float64((cpuNow()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWrite writes a new 1,000-property entity per op: one
// transaction of 5 rows (tablekit), or 4 separate inserts (raw).
func BenchmarkWrite(b *testing.B) {
	ctx := context.Background()
	props := benchProps()
	b.Run("tablekit", func(b *testing.B) {
		m := cost.NewMeter()
		w := wrap[Bag](b, metered(b, m), wide.Config{})
		report := measure(b, m)
		i := 0
		for b.Loop() {
			v := Bag{PartitionKey: "p", RowKey: keys.Pad(int64(i), 6), Props: props}
			if err := w.Insert(ctx, &v); err != nil {
				b.Fatal(err)
			}
			i++
		}
		report()
	})
	b.Run("raw", func(b *testing.B) {
		m := cost.NewMeter()
		client := metered(b, m)
		report := measure(b, m)
		i := 0
		for b.Loop() {
			for _, e := range rawSplit("p", keys.Pad(int64(i), 6), props) {
				body, err := json.Marshal(e)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := client.AddEntity(ctx, body, nil); err != nil {
					b.Fatal(err)
				}
			}
			i++
		}
		report()
	})
}

// BenchmarkRead reads a 1,000-property entity per op: one range query
// (tablekit, checked to be one version), or one range query over the 4 raw
// entities, merged by hand (raw).
func BenchmarkRead(b *testing.B) {
	ctx := context.Background()
	props := benchProps()
	const entities = 20
	b.Run("tablekit", func(b *testing.B) {
		m := cost.NewMeter()
		w := wrap[Bag](b, metered(b, m), wide.Config{})
		for i := range entities {
			if err := w.Insert(ctx, &Bag{PartitionKey: "p", RowKey: keys.Pad(int64(i), 6), Props: props}); err != nil {
				b.Fatal(err)
			}
		}
		report := measure(b, m)
		i := 0
		for b.Loop() {
			v, err := w.Get(ctx, "p", keys.Pad(int64(i%entities), 6))
			if err != nil || len(v.Props) != len(props) {
				b.Fatal(err, len(v.Props))
			}
			i++
		}
		report()
	})
	b.Run("raw", func(b *testing.B) {
		m := cost.NewMeter()
		client := metered(b, m)
		for i := range entities {
			for _, e := range rawSplit("p", keys.Pad(int64(i), 6), props) {
				body, _ := json.Marshal(e)
				if _, err := client.AddEntity(ctx, body, nil); err != nil {
					b.Fatal(err)
				}
			}
		}
		report := measure(b, m)
		i := 0
		for b.Loop() {
			id := keys.Pad(int64(i%entities), 6)
			f, err := filter.PK("p").And(filter.RowKeyPrefix(id + "_")).Build()
			if err != nil {
				b.Fatal(err)
			}
			got := make(map[string]any, len(props))
			pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &f})
			for pager.More() {
				page, err := pager.NextPage(ctx)
				if err != nil {
					b.Fatal(err)
				}
				for _, raw := range page.Entities {
					var e aztables.EDMEntity
					if err := json.Unmarshal(raw, &e); err != nil {
						b.Fatal(err)
					}
					maps.Copy(got, e.Properties)
				}
			}
			if len(got) != len(props) {
				b.Fatal(len(got))
			}
			i++
		}
		report()
	})
}
