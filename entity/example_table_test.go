package entity_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
)

// The examples below run against the test environment (a private Azurite
// started by TestMain); in an application the client comes from
// NewTableFromConnectionString or NewTableWithCredential.

type Order struct {
	Customer string `table:"PartitionKey,pk"`
	ID       string `table:"RowKey,rk"`
	ETag     string `table:",etag"`
	Total    float64
	Status   string
}

func ordersTable() (*entity.Table[Order], func()) {
	client, drop, err := env.ScratchTable(context.Background(), "examples")
	if err != nil {
		panic(err) // an example has no *testing.T; the test fails with the panic
	}
	tbl, err := entity.NewTable[Order](client)
	if err != nil {
		panic(err)
	}
	return tbl, func() { _ = drop() }
}

func ExampleTable() {
	ctx := context.Background()
	orders, drop := ordersTable()
	defer drop()

	o := &Order{Customer: "contoso", ID: keys.Pad(1, 6), Total: 99.5, Status: "new"}
	if err := orders.Insert(ctx, o); err != nil {
		fmt.Println(err)
		return
	}
	got, err := orders.Get(ctx, "contoso", "000001")
	fmt.Println(got.Total, got.Status, got.ETag == o.ETag, err)

	// Someone else ships it; our copy is now stale.
	shipped := got
	shipped.Status = "shipped"
	_ = orders.Update(ctx, &shipped, entity.Merge)
	got.Status = "cancelled"
	err = orders.Update(ctx, &got, entity.Merge)
	fmt.Println(errors.Is(err, entity.ErrPreconditionFailed))

	_, err = orders.Get(ctx, "contoso", "999999")
	fmt.Println(errors.Is(err, entity.ErrNotFound))
	// Output:
	// 99.5 new true <nil>
	// true
	// true
}

func ExampleTable_Query() {
	ctx := context.Background()
	orders, drop := ordersTable()
	defer drop()
	batch := orders.NewBatch()
	for i := range 5 {
		batch.Insert(&Order{Customer: "contoso", ID: keys.Pad(int64(i), 6), Total: float64(10 * i)})
	}
	if _, err := orders.Submit(ctx, batch); err != nil {
		fmt.Println(err)
		return
	}
	q := entity.Query{Filter: filter.And(filter.PK("contoso"), filter.RowKeyRange("000001", "000004"))}
	fmt.Println(q.Plan().Kind)
	for o, err := range orders.Query(ctx, q) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(o.ID, o.Total)
	}
	// Output:
	// range
	// 000001 10
	// 000002 20
	// 000003 30
}

func ExampleBatch() {
	ctx := context.Background()
	orders, drop := ordersTable()
	defer drop()
	first := &Order{Customer: "fabrikam", ID: "1"}
	b := orders.NewBatch().Insert(first).Insert(&Order{Customer: "fabrikam", ID: "2"})
	etags, err := orders.Submit(ctx, b)
	fmt.Println(len(etags), first.ETag == etags[0], err)

	// The second transaction fails at its second operation, and writes nothing.
	_, err = orders.Submit(ctx, orders.NewBatch().Insert(&Order{Customer: "fabrikam", ID: "3"}).Insert(&Order{Customer: "fabrikam", ID: "1"}))
	var te *entity.TransactionError
	if errors.As(err, &te) {
		fmt.Println(te.Index, te.Code)
	}
	_, err = orders.Get(ctx, "fabrikam", "3")
	fmt.Println(errors.Is(err, entity.ErrNotFound))
	// Output:
	// 2 true <nil>
	// 1 EntityAlreadyExists
	// true
}
