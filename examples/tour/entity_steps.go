package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
)

// Employee is the guide's running example, as a typed entity.
type Employee struct {
	Department string    `table:"PartitionKey,pk"`
	ID         string    `table:"RowKey,rk"`
	ETag       string    `table:",etag"`
	Updated    time.Time `table:",timestamp"`
	FirstName  string
	LastName   string
	Email      string    `table:",omitempty"`
	Age        int32     `table:",omitempty"`
	Salary     float64   `table:",omitempty"`
	Hired      time.Time `table:",omitempty"`
	BadgeID    uuid.UUID
	Address    *Address `table:",flatten"`
}

// Address is stored flattened, as Address_Street and Address_City.
type Address struct{ Street, City string }

func employee(dept string, id int64, first, last string) *Employee {
	return &Employee{
		Department: dept, ID: keys.Pad(id, 6), FirstName: first, LastName: last,
		Email: first + "." + last + "@contoso.com", Age: int32(25 + id%40), Salary: 50000,
		Hired:   time.Date(2012, 3, 4, 9, 0, 0, 0, time.FixedZone("PST", -8*3600)),
		BadgeID: uuid.NewSHA1(uuid.NameSpaceOID, []byte(first+last)),
		Address: &Address{Street: "1 Microsoft Way", City: "Redmond"},
	}
}

func typedRoundTrip(ctx context.Context, env *tourEnv, w io.Writer) error {
	emps, drop, err := newTypedTable[Employee](ctx, env, "tourtyped")
	if err != nil {
		return err
	}
	defer drop()
	e := employee("Sales", 123, "Lisa", "O'Brien")
	body, err := entity.Marshal(e)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "entity.Marshal writes the annotated JSON the service takes (%d bytes):\n  %s\n", len(body), body)
	if err := emps.Insert(ctx, e); err != nil {
		return err
	}
	fmt.Fprintf(w, "Insert wrote back ETag %s and Timestamp %s.\n", e.ETag, e.Updated.Format(time.RFC3339Nano))
	got, err := emps.Get(ctx, "Sales", keys.Pad(123, 6))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Get returns the same values: %s %s, hired %s (stored in UTC), salary %v (still a Double), badge %s, city %s.\n",
		got.FirstName, got.LastName, got.Hired.Format(time.RFC3339), got.Salary, got.BadgeID, got.Address.City)
	bad := employee("Sales/West", 1, "Bad", "Key")
	if err := emps.Insert(ctx, bad); errors.Is(err, entity.ErrInvalid) {
		fmt.Fprintf(w, "An invalid key never reaches the service:\n  %v\n", err)
	} else {
		return fmt.Errorf("an invalid key was accepted: %v", err)
	}
	return nil
}

func typedCRUD(ctx context.Context, env *tourEnv, w io.Writer) error {
	emps, drop, err := newTypedTable[Employee](ctx, env, "tourcrud")
	if err != nil {
		return err
	}
	defer drop()
	e := employee("Sales", 1, "Ana", "Lee")
	if err := emps.Insert(ctx, e); err != nil {
		return err
	}
	if err := emps.Insert(ctx, employee("Sales", 1, "Ana", "Lee")); errors.Is(err, entity.ErrAlreadyExists) {
		fmt.Fprintln(w, "Inserting the same keys again: ErrAlreadyExists.")
	}
	first, _ := emps.Get(ctx, "Sales", e.ID)
	second, _ := emps.Get(ctx, "Sales", e.ID)
	first.Salary = 60000
	if err := emps.Update(ctx, &first, entity.Merge); err != nil {
		return err
	}
	second.Salary = 55000
	err = emps.Update(ctx, &second, entity.Merge)
	fmt.Fprintf(w, "Two readers, two writers: the first update wins, the second gets ErrPreconditionFailed = %v.\n", errors.Is(err, entity.ErrPreconditionFailed))
	final, err := emps.Modify(ctx, "Sales", e.ID, func(e *Employee) error {
		e.Salary += 1000
		return nil
	}, entity.ModifyOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Modify re-reads and retries on conflict: salary is now %v.\n", final.Salary)
	if _, err := emps.Get(ctx, "Sales", "999999"); errors.Is(err, entity.ErrNotFound) {
		fmt.Fprintln(w, "A missing entity is ErrNotFound, with the *azcore.ResponseError behind it.")
	}
	deleted, _ := emps.DeleteIfExists(ctx, "Sales", e.ID)
	again, _ := emps.DeleteIfExists(ctx, "Sales", e.ID)
	fmt.Fprintf(w, "DeleteIfExists is idempotent: deleted=%v, then deleted=%v.\n", deleted, again)
	return nil
}

func queryKinds(ctx context.Context, env *tourEnv, w io.Writer) error {
	queries := []struct {
		what string
		f    filter.Expr
	}{
		{"one employee", filter.And(filter.PK("Sales"), filter.RK("000123"))},
		{"employees 100 to 199", filter.And(filter.PK("Sales"), filter.RowKeyRange("000100", "000200"))},
		{"emails starting with a", filter.And(filter.PK("Sales"), filter.RowKeyPrefix("email_a"))},
		{"over 40 in Sales", filter.And(filter.PK("Sales"), filter.Gt("Age", int32(40)))},
		{"two RowKeys with or", filter.And(filter.PK("Sales"), filter.Or(filter.RK("000001"), filter.RK("000002")))},
		{"everyone named Jones", filter.Eq("LastName", "Jones")},
		{"an injection attempt", filter.And(filter.PK("Sales"), filter.Eq("LastName", "x' or 1 eq 1 or 'x"))},
	}
	for _, q := range queries {
		s, err := q.f.Build()
		if err != nil {
			return err
		}
		plan := q.f.Plan()
		fmt.Fprintf(w, "%-24s %-15s %s\n", q.what, plan.Kind, s)
		for _, warn := range plan.Warnings {
			fmt.Fprintf(w, "%-24s   warning: %s\n", "", warn.Message)
		}
	}
	return nil
}

func paging(ctx context.Context, env *tourEnv, w io.Writer) error {
	emps, drop, err := newTypedTable[Employee](ctx, env, "tourpaging")
	if err != nil {
		return err
	}
	defer drop()
	var all []Employee
	for i := int64(0); i < 2500; i++ {
		all = append(all, *employee("Sales", i, "First", fmt.Sprint("Last", i)))
	}
	if _, err := emps.BulkWrite(ctx, all, entity.BulkOptions{}); err != nil {
		return err
	}
	n := 0
	for _, err := range emps.Query(ctx, entity.Query{Filter: filter.PK("Sales")}) {
		if err != nil {
			return err
		}
		n++
	}
	fmt.Fprintf(w, "Query follows continuation tokens: %d entities over three service pages of at most 1,000.\n", n)
	q := entity.Query{Filter: filter.PK("Sales"), PageSize: 1000, Select: []string{"LastName"}}
	page, err := emps.QueryPage(ctx, q, "")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "QueryPage: %d entities and a token of %d characters to store anywhere.\n", len(page.Items), len(page.Next))
	resumed, err := emps.QueryPage(ctx, q, page.Next)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Resumed later from that token: the next page starts at %s (only LastName was read: %q).\n", resumed.Items[0].ID, resumed.Items[0].LastName)
	limited := 0
	for _, err := range emps.Query(ctx, entity.Query{Filter: filter.PK("Sales"), PageSize: 100, Limit: 250}) {
		if err != nil {
			return err
		}
		limited++
	}
	fmt.Fprintf(w, "Limit 250 with pages of 100: %d entities.\n", limited)
	return nil
}

func transactions(ctx context.Context, env *tourEnv, w io.Writer) error {
	emps, drop, err := newTypedTable[Employee](ctx, env, "tourbatch")
	if err != nil {
		return err
	}
	defer drop()
	a, b := employee("Sales", 1, "Ana", "Lee"), employee("Sales", 2, "Bo", "Chen")
	// A department summary of another Go type, in the same partition.
	dept := (&entity.DynamicEntity{PartitionKey: "Sales", RowKey: "DEPARTMENT"}).Set("EmployeeCount", int32(2))
	etags, err := emps.Submit(ctx, emps.NewBatch().Insert(a).Insert(b).Insert(dept))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "One transaction wrote two employees and their department; each got its ETag: %d ETags.\n", len(etags))
	c := employee("Sales", 3, "Cy", "Diaz")
	dup := employee("Sales", 1, "Ana", "Again")
	dept.Set("EmployeeCount", int32(4))
	_, err = emps.Submit(ctx, emps.NewBatch().Insert(c).Insert(dup).Update(dept, entity.Merge))
	var te *entity.TransactionError
	if errors.As(err, &te) {
		fmt.Fprintf(w, "A failing transaction names its operation: index %d (%s), %s.\n", te.Index, te.Kind, te.Code)
	}
	if _, err := emps.Get(ctx, "Sales", c.ID); errors.Is(err, entity.ErrNotFound) {
		fmt.Fprintln(w, "…and wrote nothing: the employee of operation 0 is not there.")
	}
	bad := emps.NewBatch().Insert(employee("Sales", 5, "E", "F")).Insert(employee("Marketing", 6, "G", "H"))
	fmt.Fprintf(w, "Rules are checked before sending: %v\n", bad.Validate())
	return nil
}

func bulkLoad(ctx context.Context, env *tourEnv, w io.Writer) error {
	emps, drop, err := newTypedTable[Employee](ctx, env, "tourbulk")
	if err != nil {
		return err
	}
	defer drop()
	var all []Employee
	for i := int64(0); i < 3000; i++ {
		all = append(all, *employee(fmt.Sprintf("Dept%02d", i%10), i, "First", "Last"))
	}
	all = append(all, *employee("Dept#", 1, "Bad", "Key"))
	start := time.Now()
	outcomes, err := emps.BulkWrite(ctx, all, entity.BulkOptions{Concurrency: 4})
	elapsed := time.Since(start)
	written := 0
	for _, o := range outcomes {
		if o.Err == nil {
			written++
		}
	}
	fmt.Fprintf(w, "BulkWrite: %d of %d entities written in %v over 10 partitions, 4 at a time.\n", written, len(all), elapsed.Round(time.Millisecond))
	var be *entity.BulkError
	if errors.As(err, &be) {
		fmt.Fprintf(w, "The one it could not write is reported, not dropped: %v\n", outcomes[len(outcomes)-1].Err)
	}
	return nil
}
