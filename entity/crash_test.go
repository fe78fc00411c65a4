package entity_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration/crashtest"
)

// A BulkWrite killed before each of its requests, or once the service
// executed it and before its reply is read, leaves only whole transactions
// (each partition holds a prefix of its 100-entity chunks, in input
// order), and a fresh BulkWrite of the same load (the default upsert mode)
// completes it: every entity once, as written.
func TestBulkWriteCrashAtEveryRequest(t *testing.T) {
	const partitions, per = 2, 201 // 3 transactions per partition: 100, 100, 1
	load := make([]Person, 0, partitions*per)
	for p := range partitions {
		for i := range per {
			load = append(load, Person{Dept: fmt.Sprintf("d%d", p), ID: fmt.Sprintf("%04d", i), Name: "n", Age: int32(i)})
		}
	}
	requests := partitions * 3
	for k := range requests {
		for _, executed := range []bool{false, true} {
			t.Run(fmt.Sprintf("k=%d executed=%v", k, executed), func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				fresh, err := entity.NewTable[Person](env.Table(t))
				if err != nil {
					t.Fatal(err)
				}
				name := fresh.Name()
				killer := crashtest.NewKiller(k)
				if executed {
					killer = crashtest.NewExecutedKiller(k)
				}
				dying, err := entity.NewTableFromService[Person](env.With(killer).TableService, name)
				if err != nil {
					t.Fatal(err)
				}
				_, err = dying.BulkWrite(ctx, load, entity.BulkOptions{Concurrency: 1})
				var be *entity.BulkError
				if !errors.As(err, &be) || be.Failed == 0 {
					t.Fatalf("the killed BulkWrite: %v, want a BulkError", err)
				}
				// Whole transactions only: per partition, a prefix of chunks.
				for p := range partitions {
					n := 0
					var ids []string
					for row, err := range fresh.Query(ctx, entity.Query{Filter: filter.PK(fmt.Sprintf("d%d", p))}) {
						if err != nil {
							t.Fatal(err)
						}
						ids = append(ids, row.ID)
					}
					for _, id := range inServiceOrder(ids, strings.Compare) {
						if id != fmt.Sprintf("%04d", n) {
							t.Fatalf("partition d%d: row %d is %s: not a prefix", p, n, id)
						}
						n++
					}
					if n != 0 && n != 100 && n != 200 && n != per {
						t.Fatalf("partition d%d holds %d entities: a torn transaction", p, n)
					}
				}
				if _, err := fresh.BulkWrite(ctx, load, entity.BulkOptions{}); err != nil {
					t.Fatalf("the fresh BulkWrite: %v", err)
				}
				n := 0
				for row, err := range fresh.Query(ctx, entity.Query{}) {
					if err != nil {
						t.Fatal(err)
					}
					if want, _ := strconv.Atoi(row.ID); row.Age != int32(want) {
						t.Fatalf("row %s/%s Age %d", row.Dept, row.ID, row.Age)
					}
					n++
				}
				if n != len(load) {
					t.Fatalf("%d entities after recovery, want %d", n, len(load))
				}
			})
		}
	}
}
