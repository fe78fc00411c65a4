package bucket_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/bucket"
)

// BenchmarkInsert8Writers inserts time-ordered events one at a time from 8
// goroutines: spread over 16 buckets (Spread.Write) against all into one
// partition (the prepend/append anti-pattern). Azurite has no per-partition
// throttling, so the two run at the same speed here; on Azure Storage the
// single partition is capped near 2,000 entities/s and 16 buckets are not.
func BenchmarkInsert8Writers(b *testing.B) {
	ctx := context.Background()
	meter := cost.NewMeter()
	tbl := newTable(b, env.With(meter.Policy()))
	run := func(b *testing.B, buckets int) {
		s := newSpread(b, tbl, bucket.Config{Buckets: buckets})
		name := fmt.Sprintf("b%d", buckets)
		var seq keys.Sequencer
		var writer atomic.Int32
		b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
		before := meter.Snapshot()
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			w := writer.Add(1)
			for pb.Next() {
				at, n := seq.Next(time.Now())
				if err := s.Write(ctx, name, &Event{RowKey: keys.InvertedTicksSeq(at, n), Writer: w}); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "entities/s")
		b.ReportMetric(float64(meter.Snapshot().Sub(before).Total())/float64(b.N), "storage-tx/op")
	}
	b.Run("tablekit", func(b *testing.B) { run(b, 16) })
	b.Run("naive", func(b *testing.B) { run(b, 1) })
}
