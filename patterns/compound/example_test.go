package compound_test

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/compound"
)

// The guide's yearly reviews of employee 000123, under RowKeys made of the
// employee id and the year: all of them with one range query.
func Example() {
	ctx := context.Background()
	client, drop, err := env.ScratchTable(ctx, "reviews")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer drop()
	table, _ := entity.NewTable[Review](client)
	reviews, err := compound.New(table, compound.Config[int64, int64]{
		Prefix: "empid", Parent: compound.Int(6), Child: compound.Int(4),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	b := table.NewBatch()
	for _, year := range []int64{2012, 2013} {
		r := Review{ManagerRating: int32(year - 2009), Comments: "good year"}
		if err := reviews.Stamp(&r, "Sales", 123, year); err != nil {
			fmt.Println(err)
			return
		}
		b.Insert(&r)
	}
	if _, err := table.Submit(ctx, b); err != nil {
		fmt.Println(err)
		return
	}
	from, to, _ := reviews.Range(123)
	fmt.Printf("RowKey ge %q and RowKey lt %q\n", from, to)
	for r, err := range reviews.Children(ctx, "Sales", 123, entity.Query{Select: []string{"ManagerRating"}}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		_, year, _ := reviews.Parse(r.RowKey)
		fmt.Println(r.RowKey, year, r.ManagerRating)
	}
	// Output:
	// RowKey ge "empid 000123 " and RowKey lt "empid 000123!"
	// empid 000123 2012 2012 3
	// empid 000123 2013 2013 4
}
