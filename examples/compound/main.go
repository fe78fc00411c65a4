// Command compound keeps a device's readings under the device, newest
// first, each keyed by the time the device measured it: the design guide's
// compound key pattern (§6.6), package patterns/compound, with the child id
// an instant (compound.NewestFirst, the guide's inverted ticks of §6.7).
//
// A reading's RowKey is made from what the reading says — its metric and
// its own timestamp — so a device that sends the same reading twice (its
// acknowledgement was lost) writes the same key again: stored once.
// Compare examples/logtail, whose keys come from the clock at the append.
//
// It runs on the storage account the environment names, creates the table
// Telemetry if it does not exist, and leaves what it wrote there:
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/compound
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/patterns/compound"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Telemetry string // table
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{Telemetry: "Telemetry"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "compound example:", err)
		os.Exit(1)
	}
}

// Device is a device's own row in its partition, RowKey "device".
type Device struct {
	PartitionKey string
	RowKey       string
	Firmware     string
	LastUpload   time.Time
}

// Reading is one measurement, RowKey "reading <metric> <inverted ticks>".
type Reading struct {
	PartitionKey string // the device
	RowKey       string
	Value        float64
	Unit         string
}

// readingKeys are the RowKeys of a device's readings: the metric is the
// parent, the instant the child, newest first.
var readingKeys = compound.Config[string, time.Time]{Prefix: "reading", Parent: compound.Text(), Child: compound.NewestFirst()}

// at is the device's clock: the story's readings are from May 1, 2024.
func at(hhmm string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", "2024-05-01 "+hhmm)
	if err != nil {
		panic(err)
	}
	return t
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
	readings, err := entity.NewTableFromService[Reading](tables, names.Telemetry)
	if err != nil {
		return err
	}
	byMetric, err := compound.New(readings, readingKeys)
	if err != nil {
		return err
	}
	if err := byMetric.Provision(ctx); err != nil { // the table, unless it exists
		return err
	}
	fmt.Fprintln(out, "== compound: a device's readings under compound RowKeys, newest first (design guide §6.6, §6.7)")

	// 1. sensor-7 uploads what it buffered: an hour of temperature and
	// humidity readings, and its own row, in one transaction.
	upload := func() error {
		b := readings.NewBatch()
		for i := range 6 {
			t := at("09:00").Add(time.Duration(i) * 10 * time.Minute)
			temp := Reading{Value: 20 + float64(i)/4, Unit: "°C"}
			hum := Reading{Value: float64(40 + i), Unit: "%"}
			if err := byMetric.Stamp(&temp, "sensor-7", "temp", t); err != nil {
				return err
			}
			if err := byMetric.Stamp(&hum, "sensor-7", "humidity", t); err != nil {
				return err
			}
			b.Upsert(&temp, entity.Replace).Upsert(&hum, entity.Replace)
		}
		b.Upsert(&Device{PartitionKey: "sensor-7", RowKey: "device", Firmware: "2.4.1", LastUpload: at("09:55")}, entity.Merge)
		_, err := readings.Submit(ctx, b)
		return err
	}
	before := meter.Snapshot()
	if err := upload(); err != nil {
		return err
	}
	key, err := byMetric.Key("temp", at("09:50"))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "sensor-7 uploaded 12 readings and its device row in %d storage transaction; the 09:50 temperature is RowKey %q.\n",
		meter.Snapshot().Sub(before).Total(), key)

	// 2. The acknowledgement is lost; the device uploads the same buffer
	// again. Same keys, same values: nothing is duplicated.
	if err := upload(); err != nil {
		return err
	}
	rows := 0
	for _, err := range readings.Query(ctx, entity.Query{Filter: filter.PK("sensor-7"), Select: []string{"RowKey"}}) {
		if err != nil {
			return err
		}
		rows++
	}
	fmt.Fprintf(out, "It uploaded the same buffer again: partition sensor-7 still holds %d rows.\n", rows)

	// 3. The newest three temperatures: one range query with $top=3.
	before = meter.Snapshot()
	fmt.Fprint(out, "Newest three temperatures:")
	for r, err := range byMetric.Children(ctx, "sensor-7", "temp", entity.Query{Limit: 3}) {
		if err != nil {
			return err
		}
		_, t, err := byMetric.Parse(r.RowKey)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, " %s %.2f%s", t.Format("15:04"), r.Value, r.Unit)
	}
	fmt.Fprintf(out, " (%d storage transaction).\n", meter.Snapshot().Sub(before).Total())

	// 4. One reading by its time: a point query.
	before = meter.Snapshot()
	r, err := byMetric.Get(ctx, "sensor-7", "humidity", at("09:20"))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Humidity at 09:20: %.0f%s (%d point query).\n", r.Value, r.Unit, meter.Snapshot().Sub(before).Total())

	// 5. A window, newest first: from 09:40 back to, not including, 09:10.
	fmt.Fprint(out, "Temperatures from 09:40 back to 09:10:")
	for r, err := range byMetric.ChildrenBetween(ctx, "sensor-7", "temp", at("09:40"), at("09:10"), entity.Query{}) {
		if err != nil {
			return err
		}
		_, t, err := byMetric.Parse(r.RowKey)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, " %s", t.Format("15:04"))
	}
	fmt.Fprintln(out, ".")
	if _, err := byMetric.Key("temp", time.Time{}.Add(-time.Hour)); err != nil {
		fmt.Fprintf(out, "An instant before year 1 is refused before any request: %v\n", err)
	}
	return nil
}
