package filter_test

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity/filter"
)

func Example() {
	f := filter.PK("Sales").And(filter.RowKeyPrefix("empid_"), filter.Ge("Age", 30))
	s, err := f.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s)
	fmt.Println(f.Plan().Kind)
	// Output:
	// PartitionKey eq 'Sales' and RowKey ge 'empid_' and RowKey lt 'empid`' and Age ge 30L
	// range
}

// Every value is a typed literal; user input cannot leave its quotes.
func ExampleEq() {
	for _, v := range []any{
		"O'Brien",
		"' or 1 eq 1 or '",
		int32(7),
		int64(7),
		2.0,
		true,
		time.Date(2024, 1, 2, 3, 4, 5, 123456789, time.FixedZone("CET", 3600)),
		uuid.MustParse("6f9619ff-8b86-d011-b42d-00c04fc964ff"),
		[]byte{0x0a, 0xff},
	} {
		s, _ := filter.Eq("P", v).Build()
		fmt.Println(s)
	}
	// Output:
	// P eq 'O''Brien'
	// P eq ''' or 1 eq 1 or '''
	// P eq 7
	// P eq 7L
	// P eq 2.0
	// P eq true
	// P eq datetime'2024-01-02T02:04:05.1234567Z'
	// P eq guid'6f9619ff-8b86-d011-b42d-00c04fc964ff'
	// P eq X'0aff'
}

func ExampleExpr_Build_errors() {
	_, err := filter.PK("a").And(filter.Eq("Price", math.NaN())).Build()
	fmt.Println(err)
	_, err = filter.Eq("Name eq 'x' or RowKey", "y").Build()
	var fe *filter.Error
	fmt.Println(errors.Is(err, filter.ErrInvalidFilter), errors.As(err, &fe), fe.Reason)
	// The service stores a property named "and"; a filter cannot name it.
	_, err = filter.Eq("and", 1).Build()
	fmt.Println(err)
	// Output:
	// filter: invalid filter: property "Price": NaN and infinite doubles have no filter literal
	// true true character ' ' is not allowed in a property name (a C# identifier)
	// filter: invalid filter: property "and": property name "and" is an OData keyword, which a filter cannot reference (the service stores it; filter on the client)
}

func ExampleExpr_Plan() {
	for _, f := range []filter.Expr{
		filter.PK("Sales").And(filter.RK("2")),
		filter.PK("Sales").And(filter.RowKeyRange("S", "T")),
		filter.PK("Sales").And(filter.RK("1").Or(filter.RK("2"))),
		filter.PK("Sales").And(filter.RK("1")).Or(filter.PK("HR").And(filter.RK("2"))),
	} {
		s, _ := f.Build()
		p := f.Plan()
		fmt.Printf("%s\n  %s", s, p.Kind)
		for _, w := range p.Warnings {
			fmt.Printf("; %s", w)
		}
		fmt.Println()
	}
	// Output:
	// PartitionKey eq 'Sales' and RowKey eq '2'
	//   point
	// PartitionKey eq 'Sales' and RowKey ge 'S' and RowKey lt 'T'
	//   range
	// PartitionKey eq 'Sales' and (RowKey eq '1' or RowKey eq '2')
	//   partition scan; an or over RowKey conditions reads the whole partition: run the point or range queries in parallel instead
	// (PartitionKey eq 'Sales' and RowKey eq '1') or (PartitionKey eq 'HR' and RowKey eq '2')
	//   table scan; no PartitionKey equality constrains the whole filter: the query scans the whole table; the or names 2 entities in different partitions: run them as point queries in parallel
}

func ExampleRowKeyPrefix() {
	for _, p := range []string{"email_", "", "a\uffff", "a\U0010FFFF"} {
		s, _ := filter.RowKeyPrefix(p).Build()
		fmt.Printf("%+q\n", s)
	}
	// Output:
	// "RowKey ge 'email_' and RowKey lt 'email`'"
	// "RowKey ge ''"
	// "RowKey ge 'a\uffff' and RowKey lt 'b'"
	// "RowKey ge 'a\U0010ffff' and RowKey lt 'a\ue000'"
}

func ExampleNot() {
	s, _ := filter.PK("a").And(filter.Not(filter.Eq("Deleted", true).Or(filter.Lt("Age", 18)))).Build()
	fmt.Println(s)
	// Output:
	// PartitionKey eq 'a' and not (Deleted eq true or Age lt 18L)
}
