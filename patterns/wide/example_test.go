package wide_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/wide"
)

// Employee keeps a rating for each of a thousand skills: more properties
// than one entity of the service may have.
type Employee struct {
	Dept   string `table:"PartitionKey,pk"`
	ID     string `table:"RowKey,rk"`
	ETag   string `table:",etag"`
	Name   string
	Skills map[string]any `table:",extra"` // "Skill0001": int32(4), …
}

// The example runs against the test environment (a private Azurite started
// by TestMain); in an application the client comes from the account.
func ExampleTable() {
	ctx := context.Background()
	client, drop, err := env.ScratchTable(ctx, "wideexample")
	if err != nil {
		panic(err) // an example has no *testing.T; the test fails with the panic
	}
	defer func() { _ = drop() }()
	tbl, err := entity.NewTable[Employee](client)
	if err != nil {
		panic(err)
	}
	emps, err := wide.New(tbl, wide.Config{})
	if err != nil {
		panic(err)
	}

	e := Employee{Dept: "Sales", ID: "000123", Name: "Jonathan Jones", Skills: map[string]any{}}
	for i := range 1000 {
		e.Skills[fmt.Sprintf("Skill%04d", i)] = int32(i%5 + 1)
	}
	if err := emps.Insert(ctx, &e); err != nil { // one transaction
		fmt.Println(err)
		return
	}
	got, err := emps.Get(ctx, "Sales", "000123") // one range query
	fmt.Println(got.Name, len(got.Skills), got.Skills["Skill0042"], err)

	// A change of one rating rewrites the head and the row that holds it.
	_, err = emps.Modify(ctx, "Sales", "000123", func(e *Employee) error {
		e.Skills["Skill0042"] = int32(5)
		return nil
	}, entity.ModifyOptions{})
	fmt.Println(err)

	// got was read before that change: replacing from it is refused.
	got.Skills["Skill0007"] = int32(1)
	err = emps.Replace(ctx, &got)
	fmt.Println(errors.Is(err, entity.ErrPreconditionFailed))

	now, _ := emps.Get(ctx, "Sales", "000123")
	fmt.Println(now.Skills["Skill0042"], now.Skills["Skill0007"])
	fmt.Println(emps.Delete(ctx, "Sales", "000123", now.ETag))
	// Output:
	// Jonathan Jones 1000 3 <nil>
	// <nil>
	// true
	// 5 3
	// <nil>
}
