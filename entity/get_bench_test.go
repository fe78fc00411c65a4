package entity_test

import (
	"context"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
)

// BenchmarkGet is Table.Get (/tablekit) against aztables' GetEntity decoded
// into an EDMEntity (/raw), on the same 1,000 entities; /paired alternates
// the two in one loop, so that their ratio (speed-vs-raw: raw's time over
// tablekit's, above 1 when tablekit is faster) holds on a noisy machine.
//
//	go test -run '^$' -bench 'BenchmarkGet$' -benchmem -count 5 ./entity/
func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	client := benchTable(b)
	loadBench(b, client, []string{"p"}, 1000)
	tbl, err := entity.NewTable[BenchPerson](client)
	if err != nil {
		b.Fatal(err)
	}
	tk := func(b *testing.B, i int) {
		if _, err := tbl.Get(ctx, "p", keys.Pad(int64(i%1000), 6)); err != nil {
			b.Fatal(err)
		}
	}
	raw := func(b *testing.B, i int) {
		resp, err := client.GetEntity(ctx, "p", keys.Pad(int64(i%1000), 6), nil)
		if err != nil {
			b.Fatal(err)
		}
		var e aztables.EDMEntity
		if err := e.UnmarshalJSON(resp.Value); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("tablekit", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			tk(b, i)
		}
	})
	b.Run("raw", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			raw(b, i)
		}
	})
	b.Run("paired", func(b *testing.B) {
		var d [2]time.Duration
		ops := [2]func(b *testing.B, i int){tk, raw}
		for i := 0; b.Loop(); i++ {
			for k := range ops {
				j := (k + i) % 2
				t0 := time.Now()
				ops[j](b, i)
				d[j] += time.Since(t0)
			}
		}
		b.ReportMetric(float64(d[0].Microseconds())/float64(b.N), "tablekit-µs/op")
		b.ReportMetric(float64(d[1].Microseconds())/float64(b.N), "raw-µs/op")
		b.ReportMetric(float64(d[1])/float64(d[0]), "speed-vs-raw")
	})
}
