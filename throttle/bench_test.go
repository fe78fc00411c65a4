package throttle_test

import (
	"testing"

	"github.com/tablekit/tablekit/throttle"
)

// BenchmarkBulkWriteThrottled: BulkWrite of 10 partitions × 600 entities
// against a simulated service of 200 entities/s per partition (2,000/s in
// all), with a Limiter (/tablekit) and with azcore's default retry alone
// (/raw). Reported: entities/s, its share of the simulated limit, and the
// share of requests throttled. With TABLEKIT_FULL=1 it runs at full size:
// 10 partitions × 10,000 entities at TABLEKIT_FULL_RATE (default
// throttle.PartitionTarget) per partition.
func BenchmarkBulkWriteThrottled(b *testing.B) {
	partitions, per, rate := 10, 600, 200.0
	if full() {
		rate, per = fullSize(b)
		partitions = fullPartitions
	}
	rs := readings(partitions, per)
	run := func(b *testing.B, limited bool) {
		var throttled, requests int64
		for b.Loop() {
			sim, _ := throttle.NewSimulator(throttle.SimConfig{PartitionRate: rate})
			var r loadResult
			if limited {
				lim, _ := throttle.NewLimiter(throttle.Config{PartitionRate: rate})
				r = bulkLoadB(b, sim, rs, lim, sim)
			} else {
				r = bulkLoadB(b, sim, rs, sim)
			}
			if r.failed != 0 {
				b.Logf("%d entities not written", r.failed)
			}
			throttled += r.throttled
			requests += r.requests
		}
		eps := float64(len(rs)*b.N) / b.Elapsed().Seconds()
		b.ReportMetric(eps, "entities/s")
		b.ReportMetric(eps/(float64(partitions)*rate), "of-limit")
		b.ReportMetric(float64(throttled)/float64(requests), "throttled/req")
	}
	b.Run("tablekit", func(b *testing.B) { run(b, true) })
	b.Run("raw", func(b *testing.B) { run(b, false) })
}
