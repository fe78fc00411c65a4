package resolver_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/resolver"
)

func newTable(t *testing.T, client *aztables.Client, s *resolver.Schema) *resolver.Table {
	t.Helper()
	tbl, err := resolver.NewTable(client, s)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func due() time.Time { return time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC) }

// seed writes a department, three employees, a project and a row of a type
// nobody registered into partition Sales, and returns the typed values.
func seed(t *testing.T, ctx context.Context, tbl *resolver.Table, ids func(kind, id string) string) []any {
	t.Helper()
	vals := []any{
		&Department{PartitionKey: "Sales", RowKey: "SALES", Name: "Sales", Manager: "Jones", EmployeeCount: 3},
		&Employee{PartitionKey: "Sales", RowKey: "000123", FirstName: "Jonathan", LastName: "Jones", Email: "jonesj@contoso.com", Age: 38, Salary: 72500.5, EmployeeID: 9000000123},
		&Employee{PartitionKey: "Sales", RowKey: "000124", FirstName: "Mary", LastName: "Smith", Salary: 70000, EmployeeID: 124},
		&Employee{PartitionKey: "Sales", RowKey: "000125", FirstName: "Ann", LastName: "Lee", Salary: 1, EmployeeID: 125},
		&Project{PartitionKey: "Sales", RowKey: "P1", Title: "Launch", Budget: 1 << 40, Due: due()},
	}
	b := tbl.NewBatch()
	for _, v := range vals {
		b.Insert(v)
	}
	if _, err := tbl.Submit(ctx, b); err != nil {
		t.Fatal(err)
	}
	// Another application's entity: a type this schema does not know.
	other := (&entity.DynamicEntity{PartitionKey: "Sales", RowKey: ids("INVOICE", "I1")}).
		Set("EntityType", "Invoice.v3").Set("Total", 12.5)
	if err := tbl.Bags().Insert(ctx, other); err != nil {
		t.Fatal(err)
	}
	return vals
}

// collect reads a query into a map by the value's type and RowKey.
func collect(t *testing.T, seq func(yield func(any, error) bool)) []any {
	t.Helper()
	var out []any
	for v, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func typeNames(vs []any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		switch e := v.(type) {
		case *Department:
			out[i] = "Department:" + e.RowKey
		case *Employee:
			out[i] = "Employee:" + e.RowKey
		case *Project:
			out[i] = "Project:" + e.RowKey
		case *entity.DynamicEntity:
			out[i] = "bag:" + e.RowKey
		default:
			out[i] = fmt.Sprintf("%T", v)
		}
	}
	return out
}

// sameEntity compares a read value with the written one, which has the
// ETag and Timestamp the write returned.
func sameEntity(t *testing.T, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back:\n got %#v\nwant %#v", got, want)
	}
}

func TestMixedPartitionByProperty(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, env.Table(t), propertySchema(t))
	vals := seed(t, ctx, tbl, func(_, id string) string { return id })
	for _, v := range vals {
		if pk, _, etag := keysOf(v); etag == "" || pk != "Sales" {
			t.Fatalf("the transaction did not write the ETag back into %#v", v)
		}
	}

	q := entity.Query{Filter: filter.PK("Sales")}
	got := collect(t, tbl.Query(ctx, q))
	want := []string{"Employee:000123", "Employee:000124", "Employee:000125", "bag:I1", "Project:P1", "Department:SALES"}
	if fmt.Sprint(typeNames(got)) != fmt.Sprint(want) {
		t.Fatalf("query yielded %v, want %v", typeNames(got), want)
	}
	sameEntity(t, got[0], vals[1])
	sameEntity(t, got[4], vals[4])
	sameEntity(t, got[5], vals[0])
	bag := got[3].(*entity.DynamicEntity)
	if bag.Properties["EntityType"] != "Invoice.v3" || bag.Properties["Total"] != 12.5 || bag.ETag == "" {
		t.Errorf("unknown row: %+v", bag)
	}

	// The stored rows carry the type property the caller never set.
	stored, err := tbl.Bags().Get(ctx, "Sales", "000123")
	if err != nil || stored.Properties["EntityType"] != "Employee.v2" {
		t.Fatalf("stored employee: %+v, %v", stored, err)
	}

	// Pages of two, each resumed from its token by a fresh call, give the
	// same rows.
	var paged []any
	token := ""
	pages := 0
	for {
		p, err := tbl.QueryPage(ctx, entity.Query{Filter: filter.PK("Sales"), PageSize: 2}, token)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		paged = append(paged, p.Items...)
		if token = p.Next; token == "" {
			break
		}
	}
	if pages != 3 || !reflect.DeepEqual(paged, got) {
		t.Errorf("%d pages: %v", pages, typeNames(paged))
	}
	// Query follows continuations by itself.
	if small := collect(t, tbl.Query(ctx, entity.Query{Filter: filter.PK("Sales"), PageSize: 2})); !reflect.DeepEqual(small, got) {
		t.Errorf("continuations: %v", typeNames(small))
	}
	if lim := collect(t, tbl.Query(ctx, entity.Query{Filter: filter.PK("Sales"), PageSize: 2, Limit: 3})); len(lim) != 3 {
		t.Errorf("Limit 3 gave %d rows", len(lim))
	}

	// A projection still resolves types: the type property is added to it.
	proj := collect(t, tbl.Query(ctx, entity.Query{Filter: filter.PK("Sales"), Select: []string{"FirstName", "Name"}}))
	if fmt.Sprint(typeNames(proj)) != fmt.Sprint(want) {
		t.Fatalf("projection yielded %v", typeNames(proj))
	}
	if e := proj[0].(*Employee); e.FirstName != "Jonathan" || e.LastName != "" || e.Salary != 0 || e.ETag == "" {
		t.Errorf("projected employee: %+v", e)
	}
	if d := proj[5].(*Department); d.Name != "Sales" || d.EmployeeCount != 0 {
		t.Errorf("projected department: %+v", d)
	}

	// One type: Get[T] and Query[T].
	e, err := resolver.Get[Employee](ctx, tbl, "Sales", "000124")
	if err != nil {
		t.Fatal(err)
	}
	sameEntity(t, e, vals[2])
	var emps []string
	for e, err := range resolver.Query[Employee](ctx, tbl, entity.Query{Filter: filter.PK("Sales"), Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		emps = append(emps, e.RowKey)
	}
	if fmt.Sprint(emps) != "[000123 000124]" {
		t.Errorf("Query[Employee] = %v", emps)
	}
	if _, err := resolver.Get[Employee](ctx, tbl, "Sales", "SALES"); !errors.Is(err, resolver.ErrWrongType) {
		t.Errorf("Get[Employee] of the department: %v", err)
	}
	if _, err := resolver.Get[Employee](ctx, tbl, "Sales", "I1"); !errors.Is(err, resolver.ErrUnknownType) {
		t.Errorf("Get[Employee] of the invoice: %v", err)
	}
	if _, err := resolver.Get[Employee](ctx, tbl, "Sales", "nobody"); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("Get[Employee] of nobody: %v", err)
	}
	if _, err := resolver.Get[EmployeeV1](ctx, tbl, "Sales", "000123"); !errors.Is(err, resolver.ErrUnregistered) {
		t.Errorf("Get[EmployeeV1]: %v", err)
	}
}

func keysOf(v any) (pk, rk, etag string) {
	switch e := v.(type) {
	case *Department:
		return e.PartitionKey, e.RowKey, e.ETag
	case *Employee:
		return e.PartitionKey, e.RowKey, e.ETag
	case *Project:
		return e.PartitionKey, e.RowKey, e.ETag
	case *entity.DynamicEntity:
		return e.PartitionKey, e.RowKey, e.ETag
	}
	return "", "", ""
}

func TestMixedPartitionByPrefix(t *testing.T) {
	ctx := context.Background()
	s := prefixSchema(t)
	tbl := newTable(t, env.TableWith(t, env.NoRetryClientOptions()), s)
	vals := seed(t, ctx, tbl, func(kind, id string) string { return kind + "_" + id })

	// Ids stay ids in the Go values; the stored keys carry the kind.
	if rk := vals[1].(*Employee).RowKey; rk != "000123" {
		t.Fatalf("the write changed the value's RowKey to %q", rk)
	}
	var stored []string
	for b, err := range tbl.Bags().Query(ctx, entity.Query{Filter: filter.PK("Sales")}) {
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, b.RowKey+"="+fmt.Sprint(b.Properties["EntityType"]))
	}
	wantStored := "[DEPARTMENT_SALES=DEPARTMENT.v1 EMPLOYEE_000123=EMPLOYEE.v2 EMPLOYEE_000124=EMPLOYEE.v2 EMPLOYEE_000125=EMPLOYEE.v2 INVOICE_I1=Invoice.v3 PROJECT_P1=PROJECT.v1]"
	if fmt.Sprint(stored) != wantStored {
		t.Fatalf("stored %v\nwant   %s", stored, wantStored)
	}

	got := collect(t, tbl.Query(ctx, entity.Query{Filter: filter.PK("Sales")}))
	want := []string{"Department:SALES", "Employee:000123", "Employee:000124", "Employee:000125", "bag:INVOICE_I1", "Project:P1"}
	if fmt.Sprint(typeNames(got)) != fmt.Sprint(want) {
		t.Fatalf("query yielded %v, want %v", typeNames(got), want)
	}
	sameEntity(t, got[0], vals[0])
	sameEntity(t, got[1], vals[1])

	// Kinds share ids: an employee whose id is SALES beside the department.
	same := &Employee{PartitionKey: "Sales", RowKey: "SALES", FirstName: "Sal"}
	if err := tbl.Insert(ctx, same); err != nil {
		t.Fatal(err)
	}
	d, err := resolver.Get[Department](ctx, tbl, "Sales", "SALES")
	if err != nil || d.Name != "Sales" || d.RowKey != "SALES" {
		t.Fatalf("Get[Department] = %+v, %v", d, err)
	}
	e, err := resolver.Get[Employee](ctx, tbl, "Sales", "SALES")
	if err != nil || e.FirstName != "Sal" {
		t.Fatalf("Get[Employee] = %+v, %v", e, err)
	}

	// OfType is a RowKey range: a range query over one kind.
	f, err := resolver.OfType[Employee](s)
	if err != nil {
		t.Fatal(err)
	}
	q := entity.Query{Filter: filter.And(filter.PK("Sales"), f)}
	if k := q.Plan().Kind; k != filter.Range {
		t.Errorf("OfType query is a %v", k)
	}
	var ids []string
	for e, err := range resolver.Query[Employee](ctx, tbl, entity.Query{Filter: filter.PK("Sales")}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.RowKey)
	}
	if fmt.Sprint(ids) != "[000123 000124 000125 SALES]" {
		t.Errorf("Query[Employee] = %v", ids)
	}

	// Updates and deletes address the stored key from the id.
	e.Age = 50
	if err := tbl.Update(ctx, e, entity.Merge); err != nil {
		t.Fatal(err)
	}
	if err := tbl.DeleteEntity(ctx, e); err != nil {
		t.Fatal(err)
	}
	if _, err := resolver.Get[Employee](ctx, tbl, "Sales", "SALES"); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("deleted employee: %v", err)
	}
	if _, err := resolver.Get[Department](ctx, tbl, "Sales", "SALES"); err != nil {
		t.Errorf("the department went with the employee: %v", err)
	}
	if ok, err := tbl.DeleteIfExists(ctx, "Sales", "INVOICE_I1"); !ok || err != nil {
		t.Errorf("DeleteIfExists = %v, %v", ok, err)
	}
}

func TestFuncDiscriminator(t *testing.T) {
	ctx := context.Background()
	// Types told apart by the RowKey's shape and, for projects, a property.
	s, err := resolver.NewSchema(
		resolver.Config{Discriminator: resolver.ByFunc(func(pk, rk string, props resolver.Props) string {
			switch {
			case rk == pk:
				return "Department.v1"
			case len(rk) == 6 && rk[0] == '0':
				return "Employee.v2"
			case props.String("Title") != "":
				return "Project.v1"
			}
			return ""
		}, nil)},
		resolver.Register[Department]("Department.v1"),
		resolver.Register[Employee]("Employee.v2"),
		resolver.Register[Project]("Project.v1"),
	)
	if err != nil {
		t.Fatal(err)
	}
	tbl := newTable(t, env.Table(t), s)
	b := tbl.NewBatch().
		Insert(&Department{PartitionKey: "Sales", RowKey: "Sales", Name: "Sales"}).
		Insert(&Employee{PartitionKey: "Sales", RowKey: "000123", FirstName: "Jo"}).
		Insert(&Project{PartitionKey: "Sales", RowKey: "launch", Title: "Launch", Due: due()}).
		Insert((&entity.DynamicEntity{PartitionKey: "Sales", RowKey: "zzz"}).Set("Other", true))
	if _, err := tbl.Submit(ctx, b); err != nil {
		t.Fatal(err)
	}
	got := collect(t, tbl.Query(ctx, entity.Query{Filter: filter.PK("Sales")}))
	if fmt.Sprint(typeNames(got)) != "[Employee:000123 Department:Sales Project:launch bag:zzz]" {
		t.Fatalf("query yielded %v", typeNames(got))
	}
	// Nothing was stamped.
	stored, err := tbl.Bags().Get(ctx, "Sales", "000123")
	if err != nil || len(stored.Properties) != 4 || stored.Properties["EntityType"] != nil {
		t.Errorf("stored %+v, %v", stored, err)
	}
	var n int
	for p, err := range resolver.Query[Project](ctx, tbl, entity.Query{Filter: filter.PK("Sales")}) {
		if err != nil || p.Title != "Launch" {
			t.Fatalf("Query[Project]: %+v, %v", p, err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("Query[Project] yielded %d", n)
	}
}

func TestUnknownTypesLenientAndStrict(t *testing.T) {
	ctx := context.Background()
	client := env.TableWith(t, env.NoRetryClientOptions())
	lenient := newTable(t, client, propertySchema(t))
	strict := newTable(t, client, propertySchema(t, resolver.Config{Strict: true}))
	seed(t, ctx, lenient, func(_, id string) string { return id })
	// A row with no type at all.
	if err := lenient.Bags().Insert(ctx, (&entity.DynamicEntity{PartitionKey: "Sales", RowKey: "000124a"}).Set("Note", "untyped")); err != nil {
		t.Fatal(err)
	}
	q := entity.Query{Filter: filter.PK("Sales")}
	all := collect(t, lenient.Query(ctx, q))
	if got := fmt.Sprint(typeNames(all)); got != "[Employee:000123 Employee:000124 bag:000124a Employee:000125 bag:I1 Project:P1 Department:SALES]" {
		t.Fatalf("lenient query: %s", got)
	}

	// Strict: the rows before the first unknown one, then an error naming it.
	var before []any
	var stop error
	for v, err := range strict.Query(ctx, q) {
		if err != nil {
			stop = err
			break
		}
		before = append(before, v)
	}
	var re *resolver.RowError
	if len(before) != 2 || !errors.Is(stop, resolver.ErrUnknownType) || !errors.As(stop, &re) || re.RowKey != "000124a" || re.TypeName != "" {
		t.Fatalf("strict query: %v then %v", typeNames(before), stop)
	}
	_, err := strict.Get(ctx, "Sales", "I1")
	if !errors.As(err, &re) || re.TypeName != "Invoice.v3" || !errors.Is(err, resolver.ErrUnknownType) {
		t.Errorf("strict Get of the invoice: %v", err)
	}
	if _, err := strict.QueryPage(ctx, q, ""); !errors.Is(err, resolver.ErrUnknownType) {
		t.Errorf("strict QueryPage: %v", err)
	}
	// A strict read of known rows only is fine.
	if _, err := strict.Get(ctx, "Sales", "SALES"); err != nil {
		t.Errorf("strict Get of the department: %v", err)
	}
}

// writeV1 stores old employees the way the previous release did.
func writeV1(t *testing.T, ctx context.Context, client *aztables.Client) []*EmployeeV1 {
	t.Helper()
	old, err := resolver.NewSchema(resolver.Config{}, resolver.Register[EmployeeV1]("Employee.v1"))
	if err != nil {
		t.Fatal(err)
	}
	tbl := newTable(t, client, old)
	rows := []*EmployeeV1{
		{PartitionKey: "Sales", RowKey: "000001", Name: "Ann Lee", Email: "ann@contoso.com"},
		{PartitionKey: "Sales", RowKey: "000002", Name: "Bo Chen"},
	}
	for _, r := range rows {
		if err := tbl.Insert(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	return rows
}

func TestVersionUpgrade(t *testing.T) {
	ctx := context.Background()
	client := env.Table(t)
	writeV1(t, ctx, client)

	tbl := newTable(t, client, propertySchema(t))
	got := collect(t, tbl.Query(ctx, entity.Query{Filter: filter.PK("Sales")}))
	if len(got) != 2 {
		t.Fatalf("read %d rows", len(got))
	}
	ann, ok := got[0].(*Employee)
	if !ok || ann.FirstName != "Ann" || ann.LastName != "Lee" || ann.Email != "ann@contoso.com" || ann.RowKey != "000001" || ann.PartitionKey != "Sales" || ann.ETag == "" || ann.Timestamp.IsZero() {
		t.Fatalf("upgraded %#v", got[0])
	}
	// Without write-back the stored row stays as it was.
	stored, _ := tbl.Bags().Get(ctx, "Sales", "000001")
	if stored.Properties["EntityType"] != "Employee.v1" || stored.ETag != ann.ETag {
		t.Fatalf("a plain read changed the row: %+v", stored)
	}
	// The upgraded value carries the row's ETag: writing it is conditional.
	ann.Age = 30
	if err := tbl.Update(ctx, ann, entity.Replace); err != nil {
		t.Fatal(err)
	}
	stored, _ = tbl.Bags().Get(ctx, "Sales", "000001")
	if stored.Properties["EntityType"] != "Employee.v2" || stored.Properties["FirstName"] != "Ann" || stored.Properties["Name"] != nil || stored.ETag != ann.ETag {
		t.Fatalf("replaced row: %+v (value ETag %s)", stored, ann.ETag)
	}

	// With WriteBackUpgrades a read stores the new version.
	wb := newTable(t, client, propertySchema(t, resolver.Config{WriteBackUpgrades: true}))
	bo, err := resolver.Get[Employee](ctx, wb, "Sales", "000002")
	if err != nil || bo.FirstName != "Bo" {
		t.Fatalf("Get = %+v, %v", bo, err)
	}
	stored, _ = tbl.Bags().Get(ctx, "Sales", "000002")
	if stored.Properties["EntityType"] != "Employee.v2" || stored.Properties["LastName"] != "Chen" || stored.Properties["Name"] != nil || stored.ETag != bo.ETag {
		t.Fatalf("written back: %+v (value ETag %s)", stored, bo.ETag)
	}
}

// beforeConditionalWrite runs hook once, just before the first request that
// carries an If-Match other than * — to inject a second writer between a
// read and the write it guards.
type beforeConditionalWrite struct {
	hook func()
	done atomic.Bool
}

func (p *beforeConditionalWrite) Do(req *policy.Request) (*http.Response, error) {
	r := req.Raw()
	if m := r.Header.Get("If-Match"); m != "" && m != "*" && r.Method != http.MethodGet && p.done.CompareAndSwap(false, true) {
		p.hook()
	}
	return req.Next()
}

func TestUpgradeWriteBackRacesAWriter(t *testing.T) {
	ctx := context.Background()
	name := env.TableName(t)
	plain, err := env.NewTableService(env.NoRetryClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.CreateTable(ctx, name, nil); err != nil {
		t.Fatal(err)
	}
	writeV1(t, ctx, plain.NewClient(name))

	// The second writer, an old client, renames Ann between our read and
	// our write-back.
	oldSchema, _ := resolver.NewSchema(resolver.Config{}, resolver.Register[EmployeeV1]("Employee.v1"))
	oldClient := newTable(t, plain.NewClient(name), oldSchema)
	inject := &beforeConditionalWrite{hook: func() {
		e, err := resolver.Get[EmployeeV1](ctx, oldClient, "Sales", "000001")
		if err != nil {
			t.Error(err)
			return
		}
		e.Name = "Ann Lee-Park"
		if err := oldClient.UpdateAny(ctx, e, entity.Replace); err != nil {
			t.Error(err)
		}
	}}
	opts := env.NoRetryClientOptions()
	opts.PerRetryPolicies = append(opts.PerRetryPolicies, inject)
	svc, err := aztables.NewServiceClientFromConnectionString(env.ConnectionString, opts)
	if env.ConnectionString == "" {
		svc, err = aztables.NewServiceClient(env.TableEndpoint, env.Credential, opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	wb := newTable(t, svc.NewClient(name), propertySchema(t, resolver.Config{WriteBackUpgrades: true}))

	got := collect(t, wb.Query(ctx, entity.Query{Filter: filter.PK("Sales")}))
	if !inject.done.Load() {
		t.Fatal("no conditional write-back was attempted")
	}
	// The read returns the upgrade of what it read...
	if ann := got[0].(*Employee); ann.LastName != "Lee" {
		t.Errorf("read %+v", ann)
	}
	// ...but the second writer's change is not overwritten: the row is
	// still the renamed v1, to be upgraded on its next read.
	stored, err := wb.Bags().Get(ctx, "Sales", "000001")
	if err != nil || stored.Properties["EntityType"] != "Employee.v1" || stored.Properties["Name"] != "Ann Lee-Park" {
		t.Fatalf("after the race: %+v, %v", stored, err)
	}
	// The other row had no race and was written back.
	stored, err = wb.Bags().Get(ctx, "Sales", "000002")
	if err != nil || stored.Properties["EntityType"] != "Employee.v2" {
		t.Fatalf("row without a race: %+v, %v", stored, err)
	}
	// The next read upgrades the renamed row.
	ann, err := resolver.Get[Employee](ctx, wb, "Sales", "000001")
	if err != nil || ann.LastName != "Lee-Park" {
		t.Fatalf("second read: %+v, %v", ann, err)
	}
	stored, _ = wb.Bags().Get(ctx, "Sales", "000001")
	if stored.Properties["EntityType"] != "Employee.v2" || stored.Properties["LastName"] != "Lee-Park" {
		t.Fatalf("second write-back: %+v", stored)
	}

	// A projected read upgrades but never writes back (it is incomplete).
	writeV1Into := newTable(t, plain.NewClient(name), oldSchema)
	if err := writeV1Into.Insert(ctx, &EmployeeV1{PartitionKey: "Sales", RowKey: "000003", Name: "Cy Dee", Email: "cy@contoso.com"}); err != nil {
		t.Fatal(err)
	}
	proj := collect(t, wb.Query(ctx, entity.Query{Filter: filter.And(filter.PK("Sales"), filter.RK("000003")), Select: []string{"Name"}}))
	if e := proj[0].(*Employee); e.FirstName != "Cy" || e.Email != "" {
		t.Errorf("projected upgrade: %+v", e)
	}
	stored, _ = wb.Bags().Get(ctx, "Sales", "000003")
	if stored.Properties["EntityType"] != "Employee.v1" || stored.Properties["Email"] != "cy@contoso.com" {
		t.Errorf("a projected read wrote back: %+v", stored)
	}
}

// deptCount reads the department as a bag, as a program that does not know
// the Department type would.
func deptCount(t *testing.T, ctx context.Context, tbl *resolver.Table) int32 {
	t.Helper()
	v, err := tbl.Get(ctx, "Sales", "SALES")
	if err != nil {
		t.Fatal(err)
	}
	bag, ok := v.(*entity.DynamicEntity)
	if !ok {
		t.Fatalf("read %T, want a bag", v)
	}
	n, ok := entity.Prop[int32](bag, "EmployeeCount")
	if !ok {
		t.Fatalf("no EmployeeCount in %+v", bag)
	}
	return n
}

func TestBagUpdateRacesASecondWriter(t *testing.T) {
	ctx := context.Background()
	client := env.TableWith(t, env.NoRetryClientOptions())
	owner := newTable(t, client, propertySchema(t))
	dept := &Department{PartitionKey: "Sales", RowKey: "SALES", Name: "Sales", EmployeeCount: 10}
	if err := owner.Insert(ctx, dept); err != nil {
		t.Fatal(err)
	}
	// This program knows employees but not departments.
	s, err := resolver.NewSchema(resolver.Config{}, resolver.Register[Employee]("Employee.v2"))
	if err != nil {
		t.Fatal(err)
	}
	tbl := newTable(t, client, s)

	// The plain read-change-merge, with a second writer in between: the
	// merge fails on the ETag and changes nothing.
	v, err := tbl.Get(ctx, "Sales", "SALES")
	if err != nil {
		t.Fatal(err)
	}
	bag := v.(*entity.DynamicEntity)
	n, _ := entity.Prop[int32](bag, "EmployeeCount")
	dept.EmployeeCount = 20 // the second writer: the owner, with its typed value
	if err := owner.Update(ctx, dept, entity.Replace); err != nil {
		t.Fatal(err)
	}
	patch := &entity.DynamicEntity{PartitionKey: bag.PartitionKey, RowKey: bag.RowKey, ETag: bag.ETag}
	patch.Set("EmployeeCount", n+1)
	if err := tbl.Update(ctx, patch, entity.Merge); !errors.Is(err, entity.ErrPreconditionFailed) {
		t.Fatalf("stale merge: %v", err)
	}
	if got := deptCount(t, ctx, tbl); got != 20 {
		t.Fatalf("after the failed merge EmployeeCount = %d, want the second writer's 20", got)
	}

	// Modify retries from a fresh read: both increments count.
	attempts := 0
	out, err := tbl.Modify(ctx, "Sales", "SALES", func(v any) error {
		attempts++
		bag := v.(*entity.DynamicEntity)
		n, _ := entity.Prop[int32](bag, "EmployeeCount")
		if attempts == 1 {
			// The second writer increments between this read and its merge.
			_, err := owner.Modify(ctx, "Sales", "SALES", func(v any) error {
				v.(*Department).EmployeeCount++
				return nil
			}, entity.ModifyOptions{Mode: entity.Replace})
			if err != nil {
				return err
			}
		}
		bag.Set("EmployeeCount", n+1)
		return nil
	}, entity.ModifyOptions{Retry: entity.RetryPolicy{BaseDelay: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if attempts != 2 {
		t.Errorf("Modify ran change %d times, want 2", attempts)
	}
	if got := deptCount(t, ctx, tbl); got != 22 {
		t.Fatalf("EmployeeCount = %d, want 22 (20 + the second writer + ours)", got)
	}
	if wb := out.(*entity.DynamicEntity); wb.ETag == "" || wb.Properties["Name"] != "Sales" {
		t.Errorf("Modify returned %+v", wb)
	}
	// The typed owner still reads its department, name and all.
	d, err := resolver.Get[Department](ctx, owner, "Sales", "SALES")
	if err != nil || d.Name != "Sales" || d.EmployeeCount != 22 {
		t.Errorf("owner reads %+v, %v", d, err)
	}

	// Giving up returns the change's error and writes nothing.
	stop := errors.New("stop")
	if _, err := tbl.Modify(ctx, "Sales", "SALES", func(any) error { return stop }, entity.ModifyOptions{}); !errors.Is(err, stop) {
		t.Errorf("Modify giving up: %v", err)
	}
	if _, err := tbl.Modify(ctx, "Sales", "nobody", func(any) error { return nil }, entity.ModifyOptions{}); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("Modify of nobody: %v", err)
	}
}

func TestMixedTypeTransaction(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		schema func(testing.TB, ...resolver.Config) *resolver.Schema
	}{{"property", propertySchema}, {"prefix", prefixSchema}} {
		t.Run(tc.name, func(t *testing.T) {
			tbl := newTable(t, env.TableWith(t, env.NoRetryClientOptions()), tc.schema(t))
			dept := &Department{PartitionKey: "Sales", RowKey: "SALES", Name: "Sales", EmployeeCount: 2}
			jo := &Employee{PartitionKey: "Sales", RowKey: "000001", FirstName: "Jo"}
			al := &Employee{PartitionKey: "Sales", RowKey: "000002", FirstName: "Al"}
			etags, err := tbl.Submit(ctx, tbl.NewBatch().Insert(dept).Insert(jo).Insert(al))
			if err != nil {
				t.Fatal(err)
			}
			if etags[0] != dept.ETag || etags[1] != jo.ETag || dept.Timestamp.IsZero() {
				t.Fatalf("ETags %v not written back: %q %q", etags, dept.ETag, jo.ETag)
			}

			// Hire two, one of whom exists: the whole transaction fails.
			before := collect(t, tbl.Query(ctx, entity.Query{Filter: filter.PK("Sales")}))
			dept.EmployeeCount += 2
			b := tbl.NewBatch().
				Update(dept, entity.Merge).
				Insert(&Employee{PartitionKey: "Sales", RowKey: "000003", FirstName: "Cy"}).
				Insert(&Employee{PartitionKey: "Sales", RowKey: "000001", FirstName: "Jo again"}).
				Insert(&Project{PartitionKey: "Sales", RowKey: "P9", Title: "Hiring", Due: due()})
			_, err = tbl.Submit(ctx, b)
			var te *entity.TransactionError
			if !errors.As(err, &te) || te.Index != 2 || !errors.Is(err, entity.ErrAlreadyExists) {
				t.Fatalf("failing transaction: %v", err)
			}
			after := collect(t, tbl.Query(ctx, entity.Query{Filter: filter.PK("Sales")}))
			if !reflect.DeepEqual(before, after) {
				t.Fatalf("a failed transaction changed the partition:\nbefore %v\nafter  %v", typeNames(before), typeNames(after))
			}

			// A department changed by someone else fails the transaction on
			// its ETag, with the employees it would have added.
			other := *dept
			other.EmployeeCount = 2
			other.Manager = "Someone"
			if err := tbl.UpdateAny(ctx, &other, entity.Replace); err != nil {
				t.Fatal(err)
			}
			_, err = tbl.Submit(ctx, tbl.NewBatch().
				Insert(&Employee{PartitionKey: "Sales", RowKey: "000004", FirstName: "Di"}).
				Update(dept, entity.Merge))
			if !errors.As(err, &te) || te.Index != 1 || !errors.Is(err, entity.ErrPreconditionFailed) {
				t.Fatalf("stale department: %v", err)
			}
			if _, err := resolver.Get[Employee](ctx, tbl, "Sales", "000004"); !errors.Is(err, entity.ErrNotFound) {
				t.Errorf("employee of the failed transaction: %v", err)
			}

			// Fresh department, then the hire succeeds as a whole.
			dept, err = resolver.Get[Department](ctx, tbl, "Sales", "SALES")
			if err != nil {
				t.Fatal(err)
			}
			dept.EmployeeCount++
			cy := &Employee{PartitionKey: "Sales", RowKey: "000003", FirstName: "Cy"}
			if _, err := tbl.Submit(ctx, tbl.NewBatch().Update(dept, entity.Merge).Insert(cy).DeleteEntity(al)); err != nil {
				t.Fatal(err)
			}
			got := typeNames(collect(t, tbl.Query(ctx, entity.Query{Filter: filter.PK("Sales")})))
			slices.Sort(got)
			if fmt.Sprint(got) != "[Department:SALES Employee:000001 Employee:000003]" {
				t.Errorf("after the hire: %v", got)
			}
			d, _ := resolver.Get[Department](ctx, tbl, "Sales", "SALES")
			if d.EmployeeCount != 3 || d.Manager != "Someone" || d.ETag != dept.ETag {
				t.Errorf("department after the hire: %+v", d)
			}
		})
	}
}

func TestWriteErrors(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, env.TableWith(t, env.NoRetryClientOptions()), propertySchema(t))
	if err := tbl.Insert(ctx, &EmployeeV1{PartitionKey: "p", RowKey: "r"}); !errors.Is(err, resolver.ErrUnregistered) {
		t.Errorf("insert of an old version: %v", err)
	}
	if err := tbl.Insert(ctx, Employee{}); !errors.Is(err, entity.ErrInvalidType) {
		t.Errorf("insert of a struct value: %v", err)
	}
	e := &Employee{PartitionKey: "p", RowKey: "r"}
	if err := tbl.Update(ctx, e, entity.Merge); !errors.Is(err, entity.ErrNoETag) {
		t.Errorf("update without ETag: %v", err)
	}
	if err := tbl.DeleteEntity(ctx, e); !errors.Is(err, entity.ErrNoETag) {
		t.Errorf("delete without ETag: %v", err)
	}
	if err := tbl.UpdateAny(ctx, e, entity.Merge); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("update of nothing: %v", err)
	}
	if err := tbl.Upsert(ctx, e, entity.Merge); err != nil || e.ETag == "" {
		t.Fatalf("upsert: %v (ETag %q)", err, e.ETag)
	}
	if err := tbl.Insert(ctx, &Employee{PartitionKey: "p", RowKey: "r"}); !errors.Is(err, entity.ErrAlreadyExists) {
		t.Errorf("second insert: %v", err)
	}
	stale := *e
	e.Age = 3
	if err := tbl.Update(ctx, e, entity.Merge); err != nil {
		t.Fatal(err)
	}
	if err := tbl.DeleteEntity(ctx, &stale); !errors.Is(err, entity.ErrPreconditionFailed) {
		t.Errorf("stale delete: %v", err)
	}

	// Batch errors name the operation and send nothing.
	b := tbl.NewBatch().Insert(&Employee{PartitionKey: "p", RowKey: "x"}).Insert(&EmployeeV1{}).Insert(&Employee{PartitionKey: "p", RowKey: "y"})
	var be *entity.BatchError
	if _, err := tbl.Submit(ctx, b); !errors.As(err, &be) || be.Index != 1 || !errors.Is(err, resolver.ErrUnregistered) || b.Len() != 3 {
		t.Errorf("batch with an old version: %v (len %d)", err, b.Len())
	}
	if _, err := resolver.Get[Employee](ctx, tbl, "p", "x"); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("a refused batch wrote: %v", err)
	}
	b = tbl.NewBatch().Insert(&Employee{PartitionKey: "p", RowKey: "x"}).Insert(&Department{PartitionKey: "q", RowKey: "x"})
	if err := b.Validate(); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("two partitions: %v", err)
	}
	other := newTable(t, tbl.Client(), propertySchema(t))
	if _, err := other.Submit(ctx, tbl.NewBatch().Insert(&Employee{PartitionKey: "p", RowKey: "z"})); err == nil {
		t.Error("a batch of another schema was submitted")
	}
	if _, err := resolver.NewTable(tbl.Client(), nil); err == nil {
		t.Error("NewTable with a nil schema")
	}
	if _, err := resolver.NewTable(nil, propertySchema(t)); err == nil {
		t.Error("NewTable with a nil client")
	}
	// Batch deletes by stored keys, with Table.Delete's ETag rule.
	if _, err := tbl.Submit(ctx, tbl.NewBatch().Delete("p", "r", "")); !errors.Is(err, entity.ErrNoETag) {
		t.Errorf("Delete with no ETag: %v", err)
	}
	if _, err := tbl.Submit(ctx, tbl.NewBatch().Delete("p", "r", entity.AnyETag)); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Get(ctx, "p", "r"); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("after Delete: %v", err)
	}
}
