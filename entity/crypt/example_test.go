package crypt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/entity/filter"
)

type Employee struct {
	Department string `table:"PartitionKey,pk"`
	ID         string `table:"RowKey,rk"`
	ETag       string `table:",etag"`
	Email      string `table:",encrypt"`
	Salary     int64  `table:",encrypt"`
	Grade      int32  `table:",sign"`
	Office     string
}

// exampleTable creates a table on the examples' Azurite and returns its
// name, with a function that drops it.
func exampleTable() (string, func()) {
	name := fmt.Sprintf("cryptexample%d%x", exampleSeq.Add(1), rand.Uint32())
	if _, err := env.TableService.CreateTable(context.Background(), name, nil); err != nil {
		panic(err)
	}
	return name, func() { _, _ = env.TableService.DeleteTable(context.Background(), name, nil) }
}

func Example() {
	ctx := context.Background()
	name, drop := exampleTable()
	defer drop()

	kek, err := crypt.NewLocalKey("employees-2026-01", bytes.Repeat([]byte{0x42}, 32)) // from a secret store
	if err != nil {
		panic(err)
	}
	tbl, _ := entity.NewTableFromService[Employee](env.TableService, name)
	emps, err := crypt.New(tbl, crypt.Config{Key: kek})
	if err != nil {
		panic(err)
	}

	e := Employee{Department: "Sales", ID: "000123", Email: "jonesj@contoso.com", Salary: 72500, Grade: 7, Office: "B12"}
	if err := emps.Insert(ctx, &e); err != nil {
		panic(err)
	}
	got, err := emps.Get(ctx, "Sales", "000123")
	fmt.Println(got.Email, got.Salary, got.Grade, got.Office, err)

	// What the service stores: ciphertext for Email and Salary.
	raw, _ := env.TableService.NewClient(name).GetEntity(ctx, "Sales", "000123", nil)
	fmt.Println("stored in clear:", bytes.Contains(raw.Value, []byte("jonesj")))

	// A filter on an encrypted property could only match ciphertext.
	for _, err := range emps.Query(ctx, entity.Query{Filter: filter.PK("Sales").And(filter.Eq("Email", "jonesj@contoso.com"))}) {
		fmt.Println(errors.Is(err, crypt.ErrEncryptedFilter))
	}
	// Merge cannot keep one content key and one signature: refused.
	fmt.Println(errors.Is(emps.Update(ctx, &got, entity.Merge), crypt.ErrMerge))
	// Output:
	// jonesj@contoso.com 72500 7 B12 <nil>
	// stored in clear: false
	// true
	// true
}

// A beacon lets eq and ne run on an encrypted property, at the price of
// showing which entities hold equal values.
func ExampleConfig_beacons() {
	ctx := context.Background()
	name, drop := exampleTable()
	defer drop()

	kek, _ := crypt.NewLocalKey("employees-2026-01", bytes.Repeat([]byte{0x42}, 32))
	tbl, _ := entity.NewTableFromService[Employee](env.TableService, name)
	emps, _ := crypt.New(tbl, crypt.Config{Key: kek, Beacons: []string{"Email"}, BeaconKey: bytes.Repeat([]byte{0x17}, 32)})
	for i, email := range []string{"a@contoso.com", "b@contoso.com", "a@contoso.com"} {
		e := Employee{Department: "Sales", ID: fmt.Sprint(i), Email: email}
		if err := emps.Insert(ctx, &e); err != nil {
			panic(err)
		}
	}
	for e, err := range emps.Query(ctx, entity.Query{Filter: filter.PK("Sales").And(filter.Eq("Email", "a@contoso.com"))}) {
		fmt.Println(e.ID, e.Email, err)
	}
	// Output:
	// 0 a@contoso.com <nil>
	// 2 a@contoso.com <nil>
}

// Rotate moves every entity to a new key-encryption key, rewriting only
// the wrapped content keys; readers with both keys work throughout.
func ExampleTable_Rotate() {
	ctx := context.Background()
	name, drop := exampleTable()
	defer drop()

	old, _ := crypt.NewLocalKey("employees-2026-01", bytes.Repeat([]byte{0x42}, 32))
	next, _ := crypt.NewLocalKey("employees-2026-07", bytes.Repeat([]byte{0x43}, 32))
	tbl, _ := entity.NewTableFromService[Employee](env.TableService, name)
	before, _ := crypt.New(tbl, crypt.Config{Key: old})
	for i := range 3 {
		e := Employee{Department: "Sales", ID: fmt.Sprint(i), Email: "x@contoso.com"}
		_ = before.Insert(ctx, &e)
	}
	during, _ := crypt.New(tbl, crypt.Config{Key: crypt.Keyring(next, old)})
	res, err := during.Rotate(ctx, crypt.RotateOptions{})
	fmt.Println(res.Rewrapped, res.Next == "", err)

	after, _ := crypt.New(tbl, crypt.Config{Key: next})
	e, err := after.Get(ctx, "Sales", "1")
	fmt.Println(e.Email, err)
	// Output:
	// 3 true <nil>
	// x@contoso.com <nil>
}
