// Package tour is the bucket step of tablekit's tour: a day's page views,
// which a date PartitionKey would send to one hot partition, spread over
// bucket partitions by a hash of the RowKey and read back merged as if they
// were one partition (design guide §6.12, the prepend/append anti-pattern).
package tour

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/bucket"
)

// PageView is one page view; its RowKey is inverted ticks, newest first.
type PageView struct {
	PartitionKey string
	RowKey       string
	Page         string
}

var start = time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)

// Tour creates its own uniquely named table, runs the page-view story
// against it, printing what happens to out, and deletes the table.
func Tour(ctx context.Context, env *demo.Env, out io.Writer) (err error) {
	meter := cost.NewMeter()
	client, drop, err := env.With(meter.Policy()).ScratchTable(ctx, "buckettour")
	if err != nil {
		return err
	}
	defer func() {
		if derr := drop(); derr != nil {
			err = errors.Join(err, derr)
		} else {
			fmt.Fprintln(out, "Deleted the table.")
		}
	}()
	views, err := entity.NewTable[PageView](client)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "== bucket: a day's page views spread over 8 partitions (design guide §6.12)")

	spread, err := bucket.New(views, bucket.Config{Buckets: 8})
	if err != nil {
		return err
	}
	// 1. Four web servers log 400 views of the day, one a second, each
	// server every fourth, in calls of 20; the same views also go to one
	// partition, the anti-pattern, to compare.
	const servers, total = 4, 400
	var wg sync.WaitGroup
	errs := make([]error, servers)
	for s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var batch []*PageView
			var single []PageView
			for i := s; i < total; i += servers {
				rk := keys.InvertedTicks(start.Add(time.Duration(i) * time.Second))
				page := fmt.Sprintf("/products/%d", i%7)
				batch = append(batch, &PageView{RowKey: rk, Page: page})
				single = append(single, PageView{PartitionKey: "2024-05-01", RowKey: rk, Page: page})
				if len(batch) == 20 {
					if errs[s] = spread.Write(ctx, "2024-05-01", batch...); errs[s] != nil {
						return
					}
					if _, errs[s] = views.BulkWrite(ctx, single, entity.BulkOptions{}); errs[s] != nil {
						return
					}
					batch, single = batch[:0], single[:0]
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	counts := map[string]int{}
	for v, err := range views.Query(ctx, entity.Query{}) {
		if err != nil {
			return err
		}
		counts[v.PartitionKey]++
	}
	fmt.Fprintf(out, "%d servers logged %d views of 2024-05-01. Per partition:\n", servers, total)
	var cells []string
	for _, pk := range spread.Partitions("2024-05-01") {
		cells = append(cells, fmt.Sprintf("%q=%d", pk, counts[pk]))
	}
	fmt.Fprintf(out, "   spread: %s\n", strings.Join(cells, " "))
	fmt.Fprintf(out, "   one partition (the hot one): \"2024-05-01\"=%d\n", counts["2024-05-01"])

	// 2. The five newest views: one $top query per bucket, merged by RowKey.
	before := meter.Snapshot()
	tail, err := spread.Tail(ctx, "2024-05-01", 5)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Tail(5) across the buckets took %d storage transactions (one $top=5 query per bucket):\n", meter.Snapshot().Sub(before).Total())
	for _, v := range tail {
		at, err := keys.ParseInvertedTicks(v.RowKey)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "   %s  %-12s in %q\n", at.Format("15:04:05"), v.Page, v.PartitionKey)
	}
	var one []PageView
	for v, err := range views.Query(ctx, entity.Query{Filter: filter.PK("2024-05-01"), PageSize: 5, Limit: 5}) {
		if err != nil {
			return err
		}
		one = append(one, v)
	}
	same := slices.EqualFunc(tail, one, func(a, b PageView) bool { return a.RowKey == b.RowKey && a.Page == b.Page })
	fmt.Fprintf(out, "The same query on the one partition (1 storage transaction) gives the same five: %v.\n", same)

	// 3. A point read needs no fan-out: the bucket follows from the RowKey.
	rk := keys.InvertedTicks(start.Add(123 * time.Second))
	before = meter.Snapshot()
	v, err := spread.Get(ctx, "2024-05-01", rk)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "The view of 09:02:03 (%s) is in %q: found with %d point query.\n", v.Page, v.PartitionKey, meter.Snapshot().Sub(before).Total())
	fmt.Fprintln(out, "Choosing the number of buckets: a partition takes about 2,000 entities/s, an account 20,000;")
	fmt.Fprintln(out, "   N = peak writes/s ÷ 2,000, with headroom, and no more: every merged read costs N queries.")
	return nil
}
