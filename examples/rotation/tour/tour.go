// Package tour is the rotation step of tablekit's tour: the design guide's
// login attempts in a table per day (§6.8, high-volume delete), written,
// read over a range of days, and expired a whole day at a time.
package tour

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/rotation"
)

// Attempt is one login attempt. Attempts are kept for a number of days and
// then deleted together, the guide's example of a high-volume delete.
type Attempt struct {
	PartitionKey string // the user
	RowKey       string // the attempt's time, oldest first, unique per user
	At           time.Time
	Success      bool
}

// Tour writes three days of login attempts to a table per day, reads two of
// the days back, expires the oldest day by deleting its table, and deletes
// the rest, printing what happens to out.
func Tour(ctx context.Context, env *demo.Env, out io.Writer) (err error) {
	meter := cost.NewMeter()
	metered := env.With(meter.Policy())
	catalog, dropCatalog, err := metered.ScratchTable(ctx, "logincatalog")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, dropCatalog()) }()
	logins, err := rotation.New(metered.TableService, catalog, rotation.Config[Attempt]{
		Name:   "logins",
		Period: rotation.Day,
		Time:   func(a *Attempt) time.Time { return a.At },
	})
	if err != nil {
		return err
	}
	// Whatever happens, leave no table behind.
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if _, derr := logins.Expire(dctx, time.Date(2031, 8, 10, 0, 0, 0, 0, time.UTC)); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
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
	fmt.Fprintf(out, "Expired %s: %d attempts gone with table %s, in %d storage transactions (%d table deletion, %d for the catalog).\n",
		expired[0].Start.Format("2006-01-02"), perDay, expired[0].Table, used.Total(), used.Count(cost.Table, cost.OpDeleteTable), used.Total()-used.Count(cost.Table, cost.OpDeleteTable))
	fmt.Fprintf(out, "Deleting them entity by entity takes %d transactions, in 100-entity batches at least %d (one partition per batch).\n", perDay, len(users)*((perDay/len(users)+99)/100))

	late := Attempt{PartitionKey: "ann", RowKey: "late", At: day.Add(23 * time.Hour)}
	err = logins.Insert(ctx, &late)
	fmt.Fprintf(out, "A late write to the expired day: %v (errors.Is ErrExpired: %v)\n", err, errors.Is(err, rotation.ErrExpired))
	if !errors.Is(err, rotation.ErrExpired) {
		return fmt.Errorf("late write: %v, want ErrExpired", err)
	}
	return nil
}
