package resolver_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/resolver"
)

// FuzzDecode: no body makes Decode panic, and whatever it returns is a
// registered type or a property bag, or an error of a documented kind.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"odata.etag":"W/\"datetime'2024-05-01T10%3A00%3A00.1234567Z'\"","PartitionKey":"Sales","RowKey":"EMPLOYEE_000123","EntityType":"Employee.v2","FirstName":"Jo","EmployeeID@odata.type":"Edm.Int64","EmployeeID":"5","Salary":2.0,"Timestamp":"2024-05-01T10:00:00.1234567Z"}`,
		`{"PartitionKey":"Sales","RowKey":"DEPARTMENT_SALES","EntityType":"Department.v1","EmployeeCount":3}`,
		`{"PartitionKey":"Sales","RowKey":"EMPLOYEE_7","Name":"Ann Lee","EntityType":"Employee.v1"}`,
		`{"PartitionKey":"Sales","RowKey":"X","EntityType":"Nope.v1","N":{"a":[1,2]}}`,
		`{"PartitionKey":"S","RowKey":"e:1","EntityType":"Employee\u002ev2"}`,
		`{"RowKey":"\"_\\"}`,
		`{`,
	} {
		f.Add([]byte(seed))
	}
	schemas := []*resolver.Schema{propertySchema(f), prefixSchema(f), propertySchema(f, resolver.Config{Strict: true})}
	fs, err := resolver.NewSchema(
		resolver.Config{Discriminator: resolver.ByFunc(func(pk, rk string, props resolver.Props) string { return props.String("EntityType") }, nil)},
		resolver.Register[Employee]("Employee.v2"), resolver.Register[Department]("Department.v1"),
	)
	if err != nil {
		f.Fatal(err)
	}
	schemas = append(schemas, fs)
	known := map[reflect.Type]bool{
		reflect.TypeFor[*Employee](): true, reflect.TypeFor[*Department](): true,
		reflect.TypeFor[*Project](): true, reflect.TypeFor[*entity.DynamicEntity](): true,
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, s := range schemas {
			v, err := s.Decode(body)
			if err != nil {
				if !errors.Is(err, entity.ErrDecode) && !errors.Is(err, resolver.ErrUnknownType) && !errors.Is(err, resolver.ErrUpgrade) {
					t.Fatalf("Decode(%q): undocumented error %v", body, err)
				}
				continue
			}
			if v == nil || !known[reflect.TypeOf(v)] {
				t.Fatalf("Decode(%q) = %T", body, v)
			}
		}
	})
}
