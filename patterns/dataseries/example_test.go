package dataseries_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/dataseries"
)

func exampleTable() (*entity.Table[entity.DynamicEntity], func()) {
	ctx := context.Background()
	name := "series" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	_, _ = env.TableService.CreateTable(ctx, name, nil)
	tbl, _ := entity.NewTableFromService[entity.DynamicEntity](env.TableService, name)
	return tbl, func() { _, _ = env.TableService.DeleteTable(ctx, name, nil) }
}

// The guide's example: how many instant messages an employee sends per
// hour, 24 counters in one entity per employee and day.
func Example() {
	ctx := context.Background()
	stats, drop := exampleTable()
	defer drop()

	messages, err := dataseries.New(stats, dataseries.Config{Prefix: "H"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, hour := range []int{9, 9, 10, 14, 9} {
		if _, err := messages.Add(ctx, "emp000123", "2024-05-01", hour, 1); err != nil {
			fmt.Println(err)
			return
		}
	}
	day, err := messages.Get(ctx, "emp000123", "2024-05-01") // one point query
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(day[8:16])

	e, _ := stats.Get(ctx, "emp000123", "2024-05-01")
	fmt.Println(messages.Property(9), e.Properties[messages.Property(9)])
	// Output:
	// [0 3 1 0 0 0 1 0]
	// H09 3
}
