package entity_test

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
)

// Benchmarks of Table[T] beside raw aztables on the same Azurite, in the
// same run. Each reports entities/s and the client's CPU time per entity
// (getrusage: Azurite runs in another process, so only the client counts).
//
//	go test -run '^$' -bench 'Table' -benchtime 2000x ./entity/

// cpuMeter measures this process's user+system CPU time.
type cpuMeter struct{ start time.Duration }

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuMeter { return cpuMeter{cpuNow()} }

// report adds entities/s and CPU µs per entity to the benchmark.
func (m cpuMeter) report(b *testing.B, entities int) {
	cpu := cpuNow() - m.start
	b.ReportMetric(float64(entities)/b.Elapsed().Seconds(), "entities/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(entities), "cpu-µs/entity")
}

// BenchPerson has no ETag field, so reads ask for no metadata.
type BenchPerson struct {
	PartitionKey, RowKey string
	Name, Email          string
	Age                  int32
	Score                float64
	Joined               time.Time
}

func benchPerson(pk string, i int) BenchPerson {
	return BenchPerson{PartitionKey: pk, RowKey: keys.Pad(int64(i), 6), Name: fmt.Sprint("name", i), Email: fmt.Sprint("e", i, "@contoso.com"), Age: int32(i % 90), Score: float64(i) / 3, Joined: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)}
}

func benchEDM(p BenchPerson) aztables.EDMEntity {
	return aztables.EDMEntity{
		Entity:     aztables.Entity{PartitionKey: p.PartitionKey, RowKey: p.RowKey},
		Properties: map[string]any{"Name": p.Name, "Email": p.Email, "Age": p.Age, "Score": p.Score, "Joined": aztables.EDMDateTime(p.Joined)},
	}
}

func benchTable(b *testing.B) *aztables.Client {
	b.Helper()
	return env.Table(b)
}

func BenchmarkTableInsert(b *testing.B) {
	ctx := context.Background()
	b.Run("raw-aztables", func(b *testing.B) {
		client := benchTable(b)
		cpu := startCPU()
		i := 0
		for b.Loop() {
			body, err := (benchEDM(benchPerson("p", i))).MarshalJSON()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := client.AddEntity(ctx, body, nil); err != nil {
				b.Fatal(err)
			}
			i++
		}
		cpu.report(b, b.N)
	})
	b.Run("tablekit", func(b *testing.B) {
		tbl, _ := entity.NewTable[BenchPerson](benchTable(b))
		cpu := startCPU()
		i := 0
		for b.Loop() {
			p := benchPerson("p", i)
			if err := tbl.Insert(ctx, &p); err != nil {
				b.Fatal(err)
			}
			i++
		}
		cpu.report(b, b.N)
	})
}

// BenchmarkTableUpdate replaces one entity on condition of its ETag, over
// and over: aztables' UpdateEntity beside Table.Update, which sends
// tablekit's own request.
func BenchmarkTableUpdate(b *testing.B) {
	ctx := context.Background()
	type withETag struct {
		BenchPerson
		ETag string
	}
	b.Run("raw-aztables", func(b *testing.B) {
		client := benchTable(b)
		body, _ := benchEDM(benchPerson("p", 0)).MarshalJSON()
		resp, err := client.AddEntity(ctx, body, nil)
		if err != nil {
			b.Fatal(err)
		}
		etag := resp.ETag
		cpu := startCPU()
		i := 0
		for b.Loop() {
			p := benchPerson("p", 0)
			p.Age = int32(i % 90)
			body, err := benchEDM(p).MarshalJSON()
			if err != nil {
				b.Fatal(err)
			}
			resp, err := client.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace})
			if err != nil {
				b.Fatal(err)
			}
			etag = resp.ETag
			i++
		}
		cpu.report(b, b.N)
	})
	b.Run("tablekit", func(b *testing.B) {
		tbl, _ := entity.NewTable[withETag](benchTable(b))
		e := withETag{BenchPerson: benchPerson("p", 0)}
		if err := tbl.Insert(ctx, &e); err != nil {
			b.Fatal(err)
		}
		cpu := startCPU()
		i := 0
		for b.Loop() {
			e.BenchPerson = benchPerson("p", 0)
			e.Age = int32(i % 90)
			if err := tbl.Update(ctx, &e, entity.Replace); err != nil {
				b.Fatal(err)
			}
			i++
		}
		cpu.report(b, b.N)
	})
}

func BenchmarkTableGet(b *testing.B) {
	ctx := context.Background()
	client := benchTable(b)
	loadBench(b, client, []string{"p"}, 1000)
	b.Run("raw-aztables", func(b *testing.B) {
		cpu := startCPU()
		i := 0
		for b.Loop() {
			resp, err := client.GetEntity(ctx, "p", keys.Pad(int64(i%1000), 6), nil)
			if err != nil {
				b.Fatal(err)
			}
			var e aztables.EDMEntity
			if err := e.UnmarshalJSON(resp.Value); err != nil {
				b.Fatal(err)
			}
			i++
		}
		cpu.report(b, b.N)
	})
	b.Run("tablekit", func(b *testing.B) {
		tbl, _ := entity.NewTable[BenchPerson](client)
		cpu := startCPU()
		i := 0
		for b.Loop() {
			if _, err := tbl.Get(ctx, "p", keys.Pad(int64(i%1000), 6)); err != nil {
				b.Fatal(err)
			}
			i++
		}
		cpu.report(b, b.N)
	})
}

// loadBench fills partitions with n entities each, 4 transactions in flight.
func loadBench(b *testing.B, client *aztables.Client, partitions []string, n int) {
	b.Helper()
	tbl, _ := entity.NewTable[BenchPerson](client)
	var all []BenchPerson
	for _, pk := range partitions {
		for i := 0; i < n; i++ {
			all = append(all, benchPerson(pk, i))
		}
	}
	if _, err := tbl.BulkWrite(context.Background(), all, entity.BulkOptions{}); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkTableList10000(b *testing.B) {
	ctx := context.Background()
	client := benchTable(b)
	loadBench(b, client, []string{"p"}, 10000)
	pk := "PartitionKey eq 'p'"
	b.Run("raw-aztables", func(b *testing.B) {
		cpu := startCPU()
		for b.Loop() {
			n := 0
			pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &pk})
			for pager.More() {
				page, err := pager.NextPage(ctx)
				if err != nil {
					b.Fatal(err)
				}
				for _, raw := range page.Entities {
					var e aztables.EDMEntity
					if err := e.UnmarshalJSON(raw); err != nil {
						b.Fatal(err)
					}
					n++
				}
			}
			if n != 10000 {
				b.Fatalf("listed %d", n)
			}
		}
		cpu.report(b, b.N*10000)
	})
	listTyped := func(b *testing.B, list func() int) {
		cpu := startCPU()
		for b.Loop() {
			if n := list(); n != 10000 {
				b.Fatalf("listed %d", n)
			}
		}
		cpu.report(b, b.N*10000)
	}
	// A type without an ETag field reads no metadata; the same entities into
	// a type with one read minimal metadata.
	type withETag struct {
		BenchPerson
		ETag string
	}
	b.Run("tablekit-nometadata", func(b *testing.B) {
		tbl, _ := entity.NewTable[BenchPerson](client)
		listTyped(b, func() int { return countRows(b, tbl.Query(ctx, entity.Query{Filter: filter.PK("p")})) })
	})
	b.Run("tablekit-minimalmetadata", func(b *testing.B) {
		tbl, _ := entity.NewTable[withETag](client)
		listTyped(b, func() int { return countRows(b, tbl.Query(ctx, entity.Query{Filter: filter.PK("p")})) })
	})
}

// countRows drains a query and counts its rows.
func countRows[T any](b *testing.B, rows iter.Seq2[T, error]) int {
	n := 0
	for _, err := range rows {
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	return n
}

// BenchmarkTableBulk10000 loads 10,000 entities over 10 partitions: a naive
// AddEntity loop, hand-written 4-way parallel SubmitTransaction, and
// BulkWrite.
func BenchmarkTableBulk10000(b *testing.B) {
	ctx := context.Background()
	const perPartition, partitions = 1000, 10
	data := func(round int) [][]BenchPerson {
		out := make([][]BenchPerson, partitions)
		for p := range out {
			for i := 0; i < perPartition; i++ {
				out[p] = append(out[p], benchPerson(fmt.Sprintf("r%d-p%d", round, p), i))
			}
		}
		return out
	}
	b.Run("naive-AddEntity-loop", func(b *testing.B) {
		client := benchTable(b)
		cpu := startCPU()
		round := 0
		for b.Loop() {
			for _, part := range data(round) {
				for _, p := range part {
					body, _ := benchEDM(p).MarshalJSON()
					if _, err := client.AddEntity(ctx, body, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
			round++
		}
		cpu.report(b, b.N*perPartition*partitions)
	})
	b.Run("raw-parallel-4-SubmitTransaction", func(b *testing.B) {
		client := benchTable(b)
		cpu := startCPU()
		round := 0
		for b.Loop() {
			type chunk []aztables.TransactionAction
			work := make(chan chunk)
			var wg sync.WaitGroup
			for w := 0; w < 4; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for c := range work {
						if _, err := client.SubmitTransaction(ctx, c, nil); err != nil {
							b.Error(err)
						}
					}
				}()
			}
			for _, part := range data(round) {
				for start := 0; start < len(part); start += 100 {
					var c chunk
					for _, p := range part[start : start+100] {
						body, _ := benchEDM(p).MarshalJSON()
						c = append(c, aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace, Entity: body})
					}
					work <- c
				}
			}
			close(work)
			wg.Wait()
			round++
		}
		cpu.report(b, b.N*perPartition*partitions)
	})
	b.Run("tablekit-BulkWrite", func(b *testing.B) {
		tbl, _ := entity.NewTable[BenchPerson](benchTable(b))
		cpu := startCPU()
		round := 0
		for b.Loop() {
			var all []BenchPerson
			for _, part := range data(round) {
				all = append(all, part...)
			}
			if _, err := tbl.BulkWrite(ctx, all, entity.BulkOptions{Concurrency: 4}); err != nil {
				b.Fatal(err)
			}
			round++
		}
		cpu.report(b, b.N*perPartition*partitions)
	})
}
