// Command bucket spreads a day's page views, which a date PartitionKey
// would send to one hot partition, over 8 bucket partitions by a hash of
// the RowKey, and reads them back merged as if they were one partition:
// the design guide's prepend/append anti-pattern (§6.12) and its fix,
// package patterns/bucket.
//
// It runs on the storage account the environment names, creates the table
// PageViews if it does not exist, and leaves what it wrote there:
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/bucket
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/bucket"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Views string // table
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{Views: "PageViews"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bucket example:", err)
		os.Exit(1)
	}
}

// PageView is one page view. Its RowKey is the view's own time, newest
// first, and its id, keys.Compound(keys.InvertedTicks(at), id), so that two
// views of one instant are two rows and a resent view is one; bucket.Table
// sets its PartitionKey.
type PageView struct {
	PartitionKey string
	RowKey       string
	Page         string
}

// viewKey is the RowKey of view number n, at at.
func viewKey(at time.Time, n int) string {
	return keys.Compound(keys.InvertedTicks(at), fmt.Sprintf("v%06d", n))
}

// viewTime reads a view's time back from its RowKey.
func viewTime(rowKey string) (time.Time, error) {
	parts, err := keys.SplitCompound(rowKey)
	if err != nil {
		return time.Time{}, err
	}
	return keys.ParseInvertedTicks(parts[0])
}

// start is when the story's views begin.
var start = time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)

// run tells the story on acct, in the resources names gives, to out.
func run(ctx context.Context, acct *account.Account, names Names, out io.Writer) error {
	// The meter counts what each step costs; a service gives one to
	// account in main, or none.
	meter := cost.NewMeter()
	acct, err := acct.WithOptions(func(o *account.Options) { o.Meter = meter })
	if err != nil {
		return err
	}
	tables, err := acct.TableService()
	if err != nil {
		return err
	}
	views, err := entity.NewTableFromService[PageView](tables, names.Views)
	if err != nil {
		return err
	}
	spread, err := bucket.New(views, bucket.Config{Buckets: 8})
	if err != nil {
		return err
	}
	if err := spread.Provision(ctx); err != nil { // the table, unless it exists
		return err
	}
	fmt.Fprintln(out, "== bucket: a day's page views spread over 8 partitions (design guide §6.12)")

	// 1. Four web servers log 400 views of the day, one a second, each
	// server every fourth, in calls of 20; the same views also go to one
	// partition, the anti-pattern, to compare.
	const servers, total = 4, 400
	var wg sync.WaitGroup
	errs := make([]error, servers)
	for s := range servers {
		wg.Go(func() {
			var batch []*PageView
			var single []PageView
			for i := s; i < total; i += servers {
				rk := viewKey(start.Add(time.Duration(i)*time.Second), i)
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
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	counts := map[string]int{}
	for v, err := range views.Query(ctx, entity.Query{Select: []string{"RowKey"}}) {
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
		at, err := viewTime(v.RowKey)
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
	rk := viewKey(start.Add(123*time.Second), 123)
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
