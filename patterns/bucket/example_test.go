package bucket_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/bucket"
)

// Reading is one request per bucket of a day, written as 4 buckets.
func Example() {
	ctx := context.Background()
	name := "bucket" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	_, _ = env.TableService.CreateTable(ctx, name, nil)
	defer func() { _, _ = env.TableService.DeleteTable(ctx, name, nil) }()
	events, _ := entity.NewTableFromService[Event](env.TableService, name)

	spread, err := bucket.New(events, bucket.Config{Buckets: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	start := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	var batch []*Event
	for i := range 10 { // one event a minute, newest first by inverted ticks
		batch = append(batch, &Event{RowKey: keys.InvertedTicks(start.Add(time.Duration(i) * time.Minute)), N: int32(i)})
	}
	if err := spread.Write(ctx, "2024-05-01", batch...); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(spread.Partitions("2024-05-01"))

	newest, err := spread.Tail(ctx, "2024-05-01", 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range newest {
		at, _ := keys.ParseInvertedTicks(e.RowKey)
		fmt.Println(at.Format("15:04"), e.N, e.PartitionKey == spread.Partition("2024-05-01", e.RowKey))
	}
	// Output:
	// [2024-05-01 0 2024-05-01 1 2024-05-01 2 2024-05-01 3]
	// 09:09 9 true
	// 09:08 8 true
	// 09:07 7 true
}
