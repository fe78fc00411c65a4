// Command rotation keeps login attempts in a table per day, reads a range of
// days back merged in order, and expires the oldest day by deleting its
// table: the design guide's high-volume delete pattern (§6.8), package
// patterns/rotation.
//
// It runs on the storage account the environment names, creates the
// catalog table LoginDays if it does not exist (the rotation creates a
// table per day, named logins<date><random>), and leaves what it wrote
// there:
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/rotation
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/rotation"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Catalog  string // table listing the period tables
	Rotation string // start of every period table's name (letters and digits)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{Catalog: "LoginDays", Rotation: "logins"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "rotation example:", err)
		os.Exit(1)
	}
}

// Attempt is one login attempt. Attempts are kept for a number of days and
// then deleted together, the guide's example of a high-volume delete.
type Attempt struct {
	PartitionKey string // the user
	RowKey       string // the attempt's time, oldest first
	At           time.Time
	Success      bool
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
	catalog, err := entity.NewTableFromService[entity.DynamicEntity](tables, names.Catalog)
	if err != nil {
		return err
	}
	logins, err := rotation.New(tables, catalog.Client(), rotation.Config[Attempt]{
		Name:   names.Rotation,
		Period: rotation.Day,
		Time:   func(a *Attempt) time.Time { return a.At },
	})
	if err != nil {
		return err
	}
	if err := logins.Provision(ctx); err != nil { // the catalog, unless it exists
		return err
	}
	fmt.Fprintln(out, "== rotation: login attempts in a table per day (design guide §6.8)")

	day := time.Date(2031, 7, 29, 0, 0, 0, 0, time.UTC)
	users := []string{"ann", "bob", "cho", "dev"}
	var all []Attempt
	for d := range 3 {
		for u, user := range users {
			for i := range 50 {
				at := day.AddDate(0, 0, d).Add(time.Duration(i*25+u) * time.Minute)
				all = append(all, Attempt{PartitionKey: user, RowKey: keys.TicksKeySeq(at, 0), At: at, Success: (i+d+u)%4 != 0})
			}
		}
	}
	if _, err := logins.BulkWrite(ctx, all, entity.BulkOptions{}); err != nil {
		return err
	}
	fmt.Fprintf(out, "Wrote %d attempts of %d users over 3 days; each write went to its day's table:\n", len(all), len(users))
	periods, err := logins.Periods(ctx, day, day.AddDate(0, 0, 4))
	if err != nil {
		return err
	}
	for _, p := range periods {
		fmt.Fprintf(out, "   %s  table %s\n", p.Start.Format("2006-01-02"), p.Table)
	}
	fmt.Fprintln(out, "(the fourth day's table was created ahead of time: new tables start cold.)")

	from, to := day.AddDate(0, 0, 1).Add(20*time.Hour), day.AddDate(0, 0, 2).Add(2*time.Hour)
	fmt.Fprintf(out, "ann's attempts from %s to %s, across two tables, merged in order:\n", from.Format("Jan 2 15:04"), to.Format("Jan 2 15:04"))
	for a, err := range logins.Query(ctx, from, to, entity.Query{Filter: filter.PK("ann")}) {
		if err != nil {
			return err
		}
		ok := "failed"
		if a.Success {
			ok = "ok"
		}
		fmt.Fprintf(out, "   %s %s\n", a.At.Format("Jan 2 15:04"), ok)
	}

	before := meter.Snapshot()
	expired, err := logins.Expire(ctx, day.AddDate(0, 0, 1))
	if err != nil {
		return err
	}
	used := meter.Snapshot().Sub(before)
	perDay := len(all) / 3
	for _, p := range expired {
		fmt.Fprintf(out, "Expired %s: %d attempts gone with table %s, in %d storage transactions (%d table deletion, %d for the catalog).\n",
			p.Start.Format("2006-01-02"), perDay, p.Table, used.Total(), used.Count(cost.Table, cost.OpDeleteTable), used.Total()-used.Count(cost.Table, cost.OpDeleteTable))
	}
	fmt.Fprintf(out, "Deleting them entity by entity takes %d transactions, in 100-entity batches at least %d (one partition per batch).\n", perDay, len(users)*((perDay/len(users)+99)/100))

	late := Attempt{PartitionKey: "ann", RowKey: "late", At: day.Add(23 * time.Hour)}
	err = logins.Insert(ctx, &late)
	if !errors.Is(err, rotation.ErrExpired) {
		return fmt.Errorf("late write: %v, want ErrExpired", err)
	}
	fmt.Fprintf(out, "A late write to the expired day: %v (errors.Is ErrExpired: %v)\n", err, errors.Is(err, rotation.ErrExpired))
	return nil
}
