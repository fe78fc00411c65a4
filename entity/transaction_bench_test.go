package entity_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
)

// BenchmarkTransaction submits 100-entity transactions one after another
// (InsertOrReplace, so that each round may reuse the keys): tablekit's own
// $batch through Table.Submit against aztables' SubmitTransaction, on the
// same Azurite. One op is one transaction of 100 entities.
//
//	go test -run '^$' -bench Transaction -benchtime 200x ./entity/
func BenchmarkTransaction(b *testing.B) {
	ctx := context.Background()
	const size = 100
	people := func(round int) []BenchPerson {
		out := make([]BenchPerson, size)
		for i := range out {
			out[i] = benchPerson(fmt.Sprint("p", round%10), i)
		}
		return out
	}
	report := func(b *testing.B, m *cost.Meter, before cost.Snapshot, cpu cpuMeter) {
		cpu.report(b, b.N*size)
		b.ReportMetric(float64(m.Snapshot().Sub(before).Total())/float64(b.N), "storage-tx/op")
	}
	b.Run("raw", func(b *testing.B) {
		m := cost.NewMeter()
		client := env.With(m.Policy()).Table(b)
		before, cpu := m.Snapshot(), startCPU()
		round := 0
		for b.Loop() {
			actions := make([]aztables.TransactionAction, size)
			for i, p := range people(round) {
				body, err := benchEDM(p).MarshalJSON()
				if err != nil {
					b.Fatal(err)
				}
				actions[i] = aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace, Entity: body}
			}
			if _, err := client.SubmitTransaction(ctx, actions, nil); err != nil {
				b.Fatal(err)
			}
			round++
		}
		report(b, m, before, cpu)
	})
	b.Run("tablekit", func(b *testing.B) {
		m := cost.NewMeter()
		tbl, err := entity.NewTable[BenchPerson](env.With(m.Policy()).TableWith(b, entity.ClientOptions(env.ClientOptions())))
		if err != nil {
			b.Fatal(err)
		}
		before, cpu := m.Snapshot(), startCPU()
		round := 0
		for b.Loop() {
			batch := tbl.NewBatch()
			ps := people(round)
			for i := range ps {
				batch.Upsert(&ps[i], entity.Replace)
			}
			if _, err := tbl.Submit(ctx, batch); err != nil {
				b.Fatal(err)
			}
			round++
		}
		report(b, m, before, cpu)
	})
}
