package bloblog_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/bloblog"
)

// logLine is a storage-log line of the guide's kind, about 150 bytes.
func logLine(i int) []byte {
	return fmt.Appendf(nil, "1.0;%s;GetBlob;Success;200;%d;%d;authenticated;devstoreaccount1;queue;blob;\"/queue/msg%07d\";%d",
		"2014-07-31T18:00:00.0000000Z", 3+i%7, 2+i%5, i, 4096+i%1000)
}

// LogEntity is a log record stored as a table entity, the anti-pattern:
// the hour's records in one partition, ordered by time.
type LogEntity struct {
	PartitionKey string // service and hour
	RowKey       string // ticks and sequence number
	Time         time.Time
	Data         string
}

// BenchmarkLog writes log records, an operation being 1,000 records, so
// storage-tx/op is the transactions per 1,000 records:
//
//   - /tablekit: a Logger with the default configuration (4 MiB blocks),
//     closed at the end so that every record is in its blob;
//   - /raw: the same records as table entities, written with
//     entity.Table.BulkWrite in 100-entity transactions.
//
// For the README's figures, 100,000 records:
//
//	go test -run '^$' -bench Log -benchtime 100x ./patterns/bloblog/
func BenchmarkLog(b *testing.B) {
	const perOp = 1000
	start := time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return start.Add(time.Duration(i) * time.Millisecond) }

	b.Run("tablekit", func(b *testing.B) {
		ctx := context.Background()
		meter := cost.NewMeter()
		c, drop, err := env.With(meter.Policy()).ScratchContainer(ctx, "logbench")
		if err != nil {
			b.Fatal(err)
		}
		defer drop()
		before := meter.Snapshot()
		b.ResetTimer()
		l, err := bloblog.New(ctx, c, bloblog.Config{Service: "queue"})
		if err != nil {
			b.Fatal(err)
		}
		for i := range b.N * perOp {
			if err := l.Append(at(i), logLine(i)); err != nil {
				b.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		used := meter.Snapshot().Sub(before)
		b.ReportMetric(float64(used.Total())/float64(b.N), "storage-tx/op")
		b.ReportMetric(float64(b.N*perOp)/b.Elapsed().Seconds(), "records/s")
	})

	b.Run("raw", func(b *testing.B) {
		ctx := context.Background()
		meter := cost.NewMeter()
		client, drop, err := env.With(meter.Policy()).ScratchTable(ctx, "logbench")
		if err != nil {
			b.Fatal(err)
		}
		defer drop()
		tbl, err := entity.NewTable[LogEntity](client)
		if err != nil {
			b.Fatal(err)
		}
		before := meter.Snapshot()
		b.ResetTimer()
		for op := range b.N {
			batch := make([]LogEntity, perOp)
			for j := range batch {
				i := op*perOp + j
				batch[j] = LogEntity{PartitionKey: "queue " + at(i).Format("2006010215"), RowKey: keys.TicksKeySeq(at(i), uint32(i)), Time: at(i), Data: string(logLine(i))}
			}
			if _, err := tbl.BulkWrite(ctx, batch, entity.BulkOptions{Mode: entity.OpInsert}); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		used := meter.Snapshot().Sub(before)
		b.ReportMetric(float64(used.Total())/float64(b.N), "storage-tx/op")
		b.ReportMetric(float64(b.N*perOp)/b.Elapsed().Seconds(), "records/s")
	})
}
