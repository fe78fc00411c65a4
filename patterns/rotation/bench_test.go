package rotation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/rotation"
)

// BenchmarkExpire deletes one period of login attempts, 20,000 entities over
// 100 users (2,000 with -short):
//
//   - /tablekit: Rotation.Expire, which deletes the period's table;
//   - /raw: aztables, reading the keys and deleting them in 100-entity
//     transactions, one partition each;
//   - /naive: aztables, reading the keys and deleting them one by one.
//
// Loading the entities is part of every iteration, so even the default
// -benchtime runs each variant about once; ns/op is replaced by the time of
// the deletion alone, and storage-tx/op counts the deletion's transactions
// (for /tablekit including the catalog's). 20,000 entities take about 3 s to
// load on Azurite; /naive then takes about 20 s:
//
//	go test -run '^$' -bench Expire -benchtime 1x ./patterns/rotation/
func BenchmarkExpire(b *testing.B) {
	users, perUser := 100, 200
	if testing.Short() {
		perUser = 20
	}
	load := func(b *testing.B, write func([]Attempt) error) {
		b.Helper()
		var batch []Attempt
		for u := range users {
			for i := range perUser {
				at := base.Add(time.Duration(i) * time.Second)
				batch = append(batch, Attempt{PartitionKey: fmt.Sprintf("user%03d", u), RowKey: keys.TicksKeySeq(at, uint32(u)), At: at})
			}
		}
		if err := write(batch); err != nil {
			b.Fatal(err)
		}
	}
	// run times the deletion of each iteration and reports its time and
	// transactions per deletion.
	run := func(b *testing.B, setup func(b *testing.B) (del func(ctx context.Context) error), meter *cost.Meter) {
		ctx := context.Background()
		var spent time.Duration
		var tx int64
		for range b.N {
			del := setup(b)
			before := meter.Snapshot()
			start := time.Now()
			if err := del(ctx); err != nil {
				b.Fatal(err)
			}
			spent += time.Since(start)
			tx += meter.Snapshot().Sub(before).Total()
		}
		b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "ns/op")
		b.ReportMetric(float64(tx)/float64(b.N), "storage-tx/op")
		b.ReportMetric(float64(users*perUser), "entities")
	}

	b.Run("tablekit", func(b *testing.B) {
		meter := cost.NewMeter()
		e := env.With(meter.Policy())
		run(b, func(b *testing.B) func(context.Context) error {
			catalog, drop, err := e.ScratchTable(context.Background(), "rotbench")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = drop() })
			r, err := rotation.New(e.TableService, catalog, rotation.Config[Attempt]{Name: uniqueName(b), Period: rotation.Day, Time: attemptTime, Ahead: -1})
			if err != nil {
				b.Fatal(err)
			}
			load(b, func(as []Attempt) error {
				_, err := r.BulkWrite(context.Background(), as, entity.BulkOptions{})
				return err
			})
			return func(ctx context.Context) error {
				done, err := r.Expire(ctx, base.AddDate(0, 0, 1))
				if err == nil && len(done) != 1 {
					err = fmt.Errorf("expired %d periods, want 1", len(done))
				}
				return err
			}
		}, meter)
	})

	rawSetup := func(e interface {
		ScratchTable(context.Context, string) (*aztables.Client, func() error, error)
	}) func(b *testing.B) *aztables.Client {
		return func(b *testing.B) *aztables.Client {
			client, drop, err := e.ScratchTable(context.Background(), "rawbench")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = drop() })
			tbl, err := entity.NewTable[Attempt](client)
			if err != nil {
				b.Fatal(err)
			}
			load(b, func(as []Attempt) error {
				_, err := tbl.BulkWrite(context.Background(), as, entity.BulkOptions{})
				return err
			})
			return client
		}
	}
	for _, v := range []struct {
		name    string
		batched bool
	}{{"raw", true}, {"naive", false}} {
		b.Run(v.name, func(b *testing.B) {
			meter := cost.NewMeter()
			setup := rawSetup(env.With(meter.Policy()))
			run(b, func(b *testing.B) func(context.Context) error {
				client := setup(b)
				return func(ctx context.Context) error { return rawDelete(ctx, client, v.batched) }
			}, meter)
		})
	}
}

// rawDelete deletes every entity of a table with aztables alone: it reads
// the keys, then deletes them in transactions of up to 100 entities of one
// partition, or one by one.
func rawDelete(ctx context.Context, client *aztables.Client, batched bool) error {
	byPK := map[string][]string{}
	var order []string
	pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Select: to.Ptr("PartitionKey,RowKey")})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, body := range page.Entities {
			var k aztables.Entity
			if err := json.Unmarshal(body, &k); err != nil {
				return err
			}
			if _, ok := byPK[k.PartitionKey]; !ok {
				order = append(order, k.PartitionKey)
			}
			byPK[k.PartitionKey] = append(byPK[k.PartitionKey], k.RowKey)
		}
	}
	for _, pk := range order {
		rks := byPK[pk]
		if !batched {
			for _, rk := range rks {
				if _, err := client.DeleteEntity(ctx, pk, rk, nil); err != nil {
					return err
				}
			}
			continue
		}
		for len(rks) > 0 {
			n := min(len(rks), 100)
			actions := make([]aztables.TransactionAction, n)
			for i, rk := range rks[:n] {
				body, err := json.Marshal(aztables.Entity{PartitionKey: pk, RowKey: rk})
				if err != nil {
					return err
				}
				actions[i] = aztables.TransactionAction{ActionType: aztables.TransactionTypeDelete, Entity: body}
			}
			if _, err := client.SubmitTransaction(ctx, actions, nil); err != nil {
				return err
			}
			rks = rks[n:]
		}
	}
	return nil
}
