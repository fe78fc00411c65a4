package bucket_test

import (
	"context"
	"runtime"
	"sync"
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
	var seq keys.Sequencer
	// write inserts n events into name from 8 goroutines.
	write := func(b *testing.B, s *bucket.Spread[Event], name string, n int) {
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range n / 8 {
					at, k := seq.Next(time.Now())
					if err := s.Write(ctx, name, &Event{RowKey: keys.InvertedTicksSeq(at, k), Writer: int32(w)}); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	spread, single := newSpread(b, tbl, bucket.Config{Buckets: 16}), newSpread(b, tbl, bucket.Config{Buckets: 1})
	run := func(b *testing.B, s *bucket.Spread[Event], name string) {
		// Warm up Azurite and the connection pool right before measuring,
		// so that neither sub-benchmark pays for running first.
		write(b, s, "warm", 400)
		b.ResetTimer()
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
	b.Run("tablekit", func(b *testing.B) { run(b, spread, "log") })
	b.Run("naive", func(b *testing.B) { run(b, single, "log") })
}
