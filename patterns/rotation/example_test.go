package rotation_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/rotation"
)

// The guide's login attempts, a table per day: three days written, two of
// them read back for one user, the oldest deleted whole.
func Example() {
	ctx := context.Background()
	catalog, dropCatalog, err := env.ScratchTable(ctx, "logincatalog")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dropCatalog()
	logins, err := rotation.New(env.TableService, catalog, rotation.Config[Attempt]{
		Name:   "logins",
		Period: rotation.Day,
		Time:   func(a *Attempt) time.Time { return a.At },
		Ahead:  -1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	day := time.Date(2031, 7, 29, 0, 0, 0, 0, time.UTC)
	for d := range 3 {
		for _, user := range []string{"ann", "bob"} {
			at := day.AddDate(0, 0, d).Add(9 * time.Hour)
			a := Attempt{PartitionKey: user, RowKey: keys.TicksKeySeq(at, 0), At: at, Success: d != 1}
			if err := logins.Insert(ctx, &a); err != nil {
				fmt.Println(err)
				return
			}
		}
	}
	periods, _ := logins.Periods(ctx, day, day.AddDate(0, 0, 3))
	fmt.Println("tables:", len(periods))

	for a, err := range logins.Query(ctx, day.AddDate(0, 0, 1), day.AddDate(0, 0, 3), entity.Query{Filter: filter.PK("ann")}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(a.PartitionKey, a.At.Format("2006-01-02 15:04"), "success:", a.Success)
	}

	expired, err := logins.Expire(ctx, day.AddDate(0, 0, 1))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("expired:", expired[0].Start.Format("2006-01-02"), "- one table deleted")
	late := Attempt{PartitionKey: "ann", RowKey: "late", At: day.Add(time.Hour)}
	fmt.Println("late write:", logins.Insert(ctx, &late))

	// Clean up the rest.
	if _, err := logins.Expire(ctx, day.AddDate(0, 0, 3)); err != nil {
		fmt.Println(err)
	}
	// Output:
	// tables: 3
	// ann 2031-07-30 09:00 success: false
	// ann 2031-07-31 09:00 success: true
	// expired: 2031-07-29 - one table deleted
	// late write: rotation: write, period 2031-07-29T00:00:00Z: period expired
}
