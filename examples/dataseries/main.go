// Command dataseries counts the messages an employee sends per hour: 24
// counters in one entity, incremented by concurrent servers and read with
// one point query — the design guide's data series pattern (§6.9), package
// patterns/dataseries.
//
// It runs on the storage account the environment names, creates the table
// MessageCounts if it does not exist, and leaves what it wrote there:
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/dataseries
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/patterns/dataseries"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Counts string // table
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{Counts: "MessageCounts"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "dataseries example:", err)
		os.Exit(1)
	}
}

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
	// A series entity holds any properties: the table is of property bags.
	counts, err := entity.NewTableFromService[entity.DynamicEntity](tables, names.Counts)
	if err != nil {
		return err
	}
	// Eight writers on one entity lose many rounds of the read-and-merge
	// loop to each other: a hot counter needs more rounds than Modify's
	// default ten, or some increments end in entity.ErrContention.
	messages, err := dataseries.New(counts, dataseries.Config{Prefix: "H", Retry: entity.RetryPolicy{Attempts: 100}})
	if err != nil {
		return err
	}
	if err := messages.Provision(ctx); err != nil { // the table, unless it exists
		return err
	}
	fmt.Fprintln(out, "== dataseries: 24 hourly counters in one entity (design guide §6.9)")

	// 1. Eight chat servers count the messages employee 000123 sends, 25
	// each, all at once, into the hours 08 to 17.
	const servers, each = 8, 25
	before := meter.Snapshot()
	var wg sync.WaitGroup
	errs := make([]error, servers)
	for s := range servers {
		wg.Go(func() {
			for i := range each {
				hour := 8 + (s*each+i)%10
				if _, err := messages.Add(ctx, "emp000123", "2024-05-01", hour, 1); err != nil {
					errs[s] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	used := meter.Snapshot().Sub(before)
	fmt.Fprintf(out, "%d servers added %d messages at once, each an ETag-guarded merge of one counter:\n", servers, servers*each)
	fmt.Fprintf(out, "   %d storage transactions, 2 per increment plus a read and a write for every race lost and retried.\n", used.Total())

	// 2. The chart of the day: one point query.
	before = meter.Snapshot()
	day, err := messages.Get(ctx, "emp000123", "2024-05-01")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "The day's 24 counters, read with one point query (%d storage transaction):\n   ", meter.Snapshot().Sub(before).Total())
	total := int64(0)
	var cells []string
	for h, n := range day {
		total += n
		if n > 0 {
			cells = append(cells, fmt.Sprintf("%s=%d", messages.Property(h), n))
		}
	}
	fmt.Fprintln(out, strings.Join(cells, " "))
	fmt.Fprintf(out, "   total %d: every increment counted once.\n", total)

	// 3. A longer series rolls over: a day of minute counters, 1,440 slots,
	// in entities of 240.
	minutes, err := dataseries.New(counts, dataseries.Config{Slots: 24 * 60, Prefix: "M"})
	if err != nil {
		return err
	}
	if err := minutes.AddMany(ctx, "emp000123", "2024-05-01-minutes", map[int]int64{0: 1, 9*60 + 30: 2, 17*60 + 59: 3, 23*60 + 59: 4}); err != nil {
		return err
	}
	before = meter.Snapshot()
	perMinute, err := minutes.Get(ctx, "emp000123", "2024-05-01-minutes")
	if err != nil {
		return err
	}
	read := meter.Snapshot().Sub(before)
	rows := 0
	for _, err := range counts.Query(ctx, entity.Query{Filter: filter.PK("emp000123"), Select: []string{"RowKey"}}) {
		if err != nil {
			return err
		}
		rows++
	}
	fmt.Fprintf(out, "A day of 1,440 minute counters spans 6 entities of 240 slots; the %d that were written\n", rows-1)
	fmt.Fprintf(out, "   are read back with one range query (%d storage transaction): 00:00=%d, 09:30=%d, 17:59=%d, 23:59=%d.\n",
		read.Total(), perMinute[0], perMinute[9*60+30], perMinute[17*60+59], perMinute[23*60+59])
	return nil
}
