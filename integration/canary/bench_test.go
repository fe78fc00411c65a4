package canary_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/patterns/logtail"
)

// DevicePlain is Device without encryption.
type DevicePlain struct {
	PartitionKey string
	RowKey       string
	ETag         string `table:",etag"`
	Name         string
	APIKey       string
}

// BenchmarkEncryptedAppend compares a pattern's write of an entity with
// one encrypted property (logtail.Append of a Device over crypt's
// Table.Entity) against the same write in clear (/raw: the same Append of
// the same entity without the encrypt tag, over a plain entity.Table), on
// the test's Azurite: storage-tx/op must be equal (encryption adds no
// request), cpu-µs/op is this process's CPU (the client's; Azurite runs
// in another process). /tablekit-shared shares a content key among up to
// 1,024 writes (crypt.Config.ContentKeyWrites). /ratio interleaves the
// three in rounds of appendRound appends and reports the CPU of each over
// /raw's: the figures that hold on a loaded machine. Measured (four runs,
// 2 shared cores): storage-tx/op 1.000 for both; tablekit/raw-cpu 1.07 to
// 1.09, shared/raw-cpu 1.05 to 1.08; raw 260 to 375 cpu-µs/op.
func BenchmarkEncryptedAppend(b *testing.B) {
	ctx := context.Background()
	meter := cost.NewMeter()
	metered := env.With(meter.Policy())
	key := newKey(b, "bench")
	encryptedLog := func(cfg crypt.Config) func(i int) error {
		ct := encrypted[Device](b, metered.Table(b), cfg)
		log, err := logtail.New(ct.Entity(), logtail.Config{})
		if err != nil {
			b.Fatal(err)
		}
		return func(i int) error {
			return log.Append(ctx, fmt.Sprintf("dev-%d", i%16), &Device{Name: "sensor", APIKey: "k-7f3a9c1e5b2d4f60a8c3e1d9b7f5a2c4"})
		}
	}
	plainTbl, err := entity.NewTable[DevicePlain](metered.Table(b))
	if err != nil {
		b.Fatal(err)
	}
	plainLog, err := logtail.New(plainTbl, logtail.Config{})
	if err != nil {
		b.Fatal(err)
	}
	paths := []struct {
		name   string
		append func(i int) error
	}{
		{"tablekit", encryptedLog(crypt.Config{Key: key})},
		{"raw", func(i int) error {
			return plainLog.Append(ctx, fmt.Sprintf("dev-%d", i%16), &DevicePlain{Name: "sensor", APIKey: "k-7f3a9c1e5b2d4f60a8c3e1d9b7f5a2c4"})
		}},
		{"tablekit-shared", encryptedLog(crypt.Config{Key: key, ContentKeyWrites: 1024})},
	}
	for _, p := range paths {
		b.Run(p.name, func(b *testing.B) {
			before, cpu := meter.Snapshot(), processCPU()
			i := 0
			for b.Loop() {
				if err := p.append(i); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(i), "cpu-µs/op")
			b.ReportMetric(float64(meter.Snapshot().Sub(before).Total())/float64(i), "storage-tx/op")
		})
	}
	b.Run("ratio", func(b *testing.B) {
		var cpu [3]time.Duration
		var tx [3]int64
		n := 0
		for b.Loop() {
			for k, p := range paths {
				before, start := meter.Snapshot(), processCPU()
				for i := range appendRound {
					if err := p.append(n + i); err != nil {
						b.Fatal(err)
					}
				}
				cpu[k] += processCPU() - start
				tx[k] += meter.Snapshot().Sub(before).Total()
			}
			n += appendRound
		}
		b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "tablekit/raw-cpu")
		b.ReportMetric(float64(cpu[2])/float64(cpu[1]), "shared/raw-cpu")
		b.ReportMetric(float64(tx[0])/float64(n), "tablekit-storage-tx/op")
		b.ReportMetric(float64(tx[1])/float64(n), "raw-storage-tx/op")
		b.ReportMetric(float64(cpu[0].Microseconds())/float64(n), "tablekit-cpu-µs/op")
		b.ReportMetric(float64(cpu[1].Microseconds())/float64(n), "raw-cpu-µs/op")
	})
}

// appendRound is the appends of each path in one round of
// BenchmarkEncryptedAppend/ratio.
const appendRound = 50

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
