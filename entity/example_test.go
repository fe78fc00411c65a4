package entity_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/entity"
)

func ExampleMarshal() {
	type Employee struct {
		Department string `table:"PartitionKey,pk"`
		ID         string `table:"RowKey,rk"`
		Name       string
		Salary     float64
		Badge      int64
		Hired      time.Time
	}
	body, err := entity.Marshal(Employee{
		Department: "Sales", ID: "000123", Name: "Lisa O'Brien", Salary: 50000, Badge: 9000000123,
		Hired: time.Date(2012, 3, 4, 9, 0, 0, 0, time.FixedZone("PST", -8*3600)),
	})
	fmt.Println(string(body), err)
	// Output:
	// {"PartitionKey":"Sales","RowKey":"000123","Name":"Lisa O'Brien","Salary@odata.type":"Edm.Double","Salary":50000.0,"Badge@odata.type":"Edm.Int64","Badge":"9000000123","Hired@odata.type":"Edm.DateTime","Hired":"2012-03-04T17:00:00.0000000Z"} <nil>
}

func ExampleUnmarshal() {
	type Employee struct {
		PartitionKey, RowKey string
		ETag                 string
		Name                 string
		Badge                int64
	}
	body := `{"odata.etag":"W/\"datetime'2024-05-01T10%3A00%3A00.1234567Z'\"","PartitionKey":"Sales","RowKey":"000123",` +
		`"Name":"Lisa","Badge@odata.type":"Edm.Int64","Badge":"9000000123","Unknown":"ignored"}`
	var e Employee
	err := entity.Unmarshal([]byte(body), &e)
	fmt.Printf("%+v %v\n", e, err)
	// Output:
	// {PartitionKey:Sales RowKey:000123 ETag:W/"datetime'2024-05-01T10%3A00%3A00.1234567Z'" Name:Lisa Badge:9000000123} <nil>
}

func ExampleValidationError() {
	type Note struct {
		PartitionKey, RowKey string
		Text                 string
	}
	_, err := entity.Marshal(Note{PartitionKey: "notes", RowKey: "a/b", Text: "hello"})
	var ve *entity.ValidationError
	fmt.Println(errors.Is(err, entity.ErrInvalid), errors.As(err, &ve), ve.Property, ve.Rule)
	// Output:
	// true true RowKey key
}

func ExampleDynamicEntity() {
	var d entity.DynamicEntity
	_ = entity.Unmarshal([]byte(`{"PartitionKey":"Sales","RowKey":"DEPARTMENT","EmployeeCount":7,"Budget@odata.type":"Edm.Int64","Budget":"1000000"}`), &d)
	n, _ := entity.Prop[int32](&d, "EmployeeCount")
	budget, _ := entity.Prop[int64](&d, "Budget")
	d.Set("EmployeeCount", n+1)
	body, _ := entity.Marshal(&d)
	fmt.Println(budget)
	fmt.Println(string(body))
	// Output:
	// 1000000
	// {"PartitionKey":"Sales","RowKey":"DEPARTMENT","Budget@odata.type":"Edm.Int64","Budget":"1000000","EmployeeCount":8}
}
