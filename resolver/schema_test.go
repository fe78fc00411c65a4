package resolver_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/resolver"
)

func upgradeV1(old *EmployeeV1) (*Employee, error) {
	first, last, _ := strings.Cut(old.Name, " ")
	return &Employee{FirstName: first, LastName: last, Email: old.Email}, nil
}

func propertySchema(t testing.TB, cfg ...resolver.Config) *resolver.Schema {
	t.Helper()
	s, err := resolver.NewSchema(one(cfg),
		resolver.Register[Department]("Department.v1"),
		resolver.Register[Employee]("Employee.v2"),
		resolver.Upgrade("Employee.v1", upgradeV1),
		resolver.Register[Project]("Project.v1"),
	)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func prefixSchema(t testing.TB, cfg ...resolver.Config) *resolver.Schema {
	t.Helper()
	c := one(cfg)
	c.Discriminator = resolver.ByRowKeyPrefix("_")
	s, err := resolver.NewSchema(c,
		resolver.Register[Department]("DEPARTMENT.v1"),
		resolver.Register[Employee]("EMPLOYEE.v2"),
		resolver.Upgrade("EMPLOYEE.v1", upgradeV1),
		resolver.Register[Project]("PROJECT.v1"),
	)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// one is the Config a test helper was given, if any.
func one(cfg []resolver.Config) resolver.Config {
	if len(cfg) > 0 {
		return cfg[0]
	}
	return resolver.Config{}
}

// body returns what the service would send for the stamped value v.
func body(t testing.TB, s *resolver.Schema, v any) []byte {
	t.Helper()
	bag, err := s.Stamp(v)
	if err != nil {
		t.Fatal(err)
	}
	b, err := entity.Marshal(bag)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type noKeys struct{ Name string }

type badTag struct {
	PartitionKey, RowKey string
	X                    string `table:",nosuchoption"`
}

type notStruct int

// System fields inside embedded structs.
type Keys struct {
	PartitionKey string
	RowKey       string
}

type Meta struct {
	Version string    `table:",etag"`
	Changed time.Time `table:",timestamp"`
}

type Embedded struct {
	Keys
	Meta
	Label string
}

func TestNewSchemaErrors(t *testing.T) {
	reg := resolver.Register[Employee]("Employee.v2")
	for _, tc := range []struct {
		name string
		cfg  resolver.Config
		regs []resolver.Registration
		is   error
		msg  string
	}{
		{"duplicate name", resolver.Config{}, []resolver.Registration{reg, resolver.Register[Department]("Employee.v2")}, resolver.ErrSchema, "registered twice"},
		{"type under two names", resolver.Config{}, []resolver.Registration{reg, resolver.Register[Employee]("Employee.v3")}, resolver.ErrSchema, "two names"},
		{"upgrade to nothing", resolver.Config{}, []resolver.Registration{resolver.Upgrade("Employee.v1", upgradeV1)}, resolver.ErrSchema, "neither registered"},
		{"upgrade cycle", resolver.Config{}, []resolver.Registration{
			resolver.Upgrade("A.v1", func(*EmployeeV1) (*Project, error) { return nil, nil }),
			resolver.Upgrade("A.v2", func(*Project) (*EmployeeV1, error) { return nil, nil }),
		}, resolver.ErrSchema, "circle"},
		{"ambiguous chain", resolver.Config{}, []resolver.Registration{reg,
			resolver.Upgrade("A.v1", func(*Department) (*EmployeeV1, error) { return nil, nil }),
			resolver.Upgrade("B.v1", func(*EmployeeV1) (*Employee, error) { return nil, nil }),
			resolver.Upgrade("C.v1", func(*EmployeeV1) (*Employee, error) { return nil, nil }),
		}, resolver.ErrSchema, "both start from"},
		{"nil upgrade", resolver.Config{}, []resolver.Registration{reg, resolver.Upgrade[EmployeeV1, Employee]("Employee.v1", nil)}, resolver.ErrSchema, "nil upgrade"},
		{"zero registration", resolver.Config{}, []resolver.Registration{{}}, resolver.ErrSchema, "zero Registration"},
		{"empty name", resolver.Config{}, []resolver.Registration{resolver.Register[Employee]("")}, resolver.ErrSchema, "empty type name"},
		{"control character", resolver.Config{}, []resolver.Registration{resolver.Register[Employee]("Emp\x01.v1")}, resolver.ErrSchema, "control"},
		{"long name", resolver.Config{}, []resolver.Registration{resolver.Register[Employee](strings.Repeat("x", 256))}, resolver.ErrSchema, "longer"},
		{"invalid UTF-8", resolver.Config{}, []resolver.Registration{resolver.Register[Employee]("\xff")}, resolver.ErrSchema, "UTF-8"},
		{"not a struct", resolver.Config{}, []resolver.Registration{resolver.Register[notStruct]("N.v1")}, resolver.ErrSchema, "not a struct"},
		{"pointer type", resolver.Config{}, []resolver.Registration{resolver.Register[*Employee]("E.v1")}, resolver.ErrSchema, "not a struct"},
		{"property bag", resolver.Config{}, []resolver.Registration{resolver.Register[entity.DynamicEntity]("D.v1")}, resolver.ErrSchema, "DynamicEntity"},
		{"no keys", resolver.Config{}, []resolver.Registration{resolver.Register[noKeys]("N.v1")}, entity.ErrInvalidType, "PartitionKey or RowKey"},
		{"bad tag", resolver.Config{}, []resolver.Registration{resolver.Register[badTag]("B.v1")}, entity.ErrInvalidType, "nosuchoption"},
		{"property without discriminator", resolver.Config{Discriminator: resolver.Discriminator{}.WithProperty("Kind")}, []resolver.Registration{reg}, resolver.ErrSchema, "zero Discriminator"},
		{"empty property", resolver.Config{Discriminator: resolver.ByProperty("")}, []resolver.Registration{reg}, resolver.ErrSchema, "empty property"},
		{"bad property", resolver.Config{Discriminator: resolver.ByProperty("Entity Type")}, []resolver.Registration{reg}, entity.ErrInvalid, "property name"},
		{"reserved property", resolver.Config{Discriminator: resolver.ByProperty("RowKey")}, []resolver.Registration{reg}, resolver.ErrSchema, "RowKey"},
		{"empty separator", resolver.Config{Discriminator: resolver.ByRowKeyPrefix("")}, []resolver.Registration{reg}, resolver.ErrSchema, "empty separator"},
		{"separator with #", resolver.Config{Discriminator: resolver.ByRowKeyPrefix("#")}, []resolver.Registration{reg}, resolver.ErrSchema, "separator"},
		{"kind with separator", resolver.Config{Discriminator: resolver.ByRowKeyPrefix(".")}, []resolver.Registration{resolver.Register[Employee]("EMP.X.v1")}, resolver.ErrSchema, "contains, or runs into, the separator"},
		{"kind running into the separator", resolver.Config{Discriminator: resolver.ByRowKeyPrefix("--")}, []resolver.Registration{resolver.Register[Employee]("A-.v1")}, resolver.ErrSchema, "runs into"},
		{"kind with slash", resolver.Config{Discriminator: resolver.ByRowKeyPrefix("_")}, []resolver.Registration{resolver.Register[Employee]("EMP/X.v1")}, resolver.ErrSchema, "not a valid RowKey prefix"},
		{"versions without property", resolver.Config{Discriminator: resolver.ByRowKeyPrefix("_").WithProperty("")}, []resolver.Registration{reg, resolver.Upgrade("Employee.v1", upgradeV1)}, resolver.ErrSchema, "cannot tell apart"},
		{"upgrade changes kind", resolver.Config{Discriminator: resolver.ByRowKeyPrefix("_")}, []resolver.Registration{reg, resolver.Upgrade("Emp.v1", upgradeV1)}, resolver.ErrSchema, "another kind"},
		{"nil resolve", resolver.Config{Discriminator: resolver.ByFunc(nil, nil)}, []resolver.Registration{reg}, resolver.ErrSchema, "nil resolve"},
		{"WithProperty on ByFunc", resolver.Config{Discriminator: resolver.ByFunc(func(string, string, resolver.Props) string { return "" }, nil).WithProperty("X")}, []resolver.Registration{reg}, resolver.ErrSchema, "WithProperty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := resolver.NewSchema(tc.cfg, tc.regs...)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.msg) || s != nil {
				t.Fatalf("NewSchema = %v, %v; want an error matching %v containing %q", s, err, tc.is, tc.msg)
			}
		})
	}
}

func TestSchemaAccessors(t *testing.T) {
	s := propertySchema(t)
	if got := fmt.Sprint(s.TypeNames()); got != "[Department.v1 Employee.v1 Employee.v2 Project.v1]" {
		t.Errorf("TypeNames = %s", got)
	}
	if n, ok := s.TypeName(&Employee{}); !ok || n != "Employee.v2" {
		t.Errorf("TypeName(*Employee) = %q, %v", n, ok)
	}
	if n, ok := s.TypeName(Department{}); !ok || n != "Department.v1" {
		t.Errorf("TypeName(Department) = %q, %v", n, ok)
	}
	if _, ok := s.TypeName(&EmployeeV1{}); ok {
		t.Error("an old version has a write name")
	}
	if _, ok := s.TypeName(nil); ok {
		t.Error("nil has a type name")
	}
	if d := s.Discriminator(); d.Property() != "EntityType" || d.Separator() != "" || d.String() != "property EntityType" {
		t.Errorf("default discriminator = %v", d)
	}
	p := prefixSchema(t).Discriminator()
	if p.Separator() != "_" || p.Property() != "EntityType" || p.String() != "RowKey prefix KIND_ and property EntityType" {
		t.Errorf("prefix discriminator = %v", p)
	}
}

func TestStamp(t *testing.T) {
	emp := &Employee{PartitionKey: "Sales", RowKey: "000123", ETag: "W/\"x\"", FirstName: "Jo", EmployeeID: 1 << 40, Salary: 2}

	bag, err := propertySchema(t).Stamp(emp)
	if err != nil {
		t.Fatal(err)
	}
	if bag.RowKey != "000123" || bag.Properties["EntityType"] != "Employee.v2" || bag.ETag != `W/"x"` ||
		bag.Properties["EmployeeID"] != int64(1<<40) || bag.Properties["Salary"] != 2.0 || bag.Properties["FirstName"] != "Jo" {
		t.Errorf("property stamp: %+v", bag)
	}

	bag, err = prefixSchema(t).Stamp(emp)
	if err != nil {
		t.Fatal(err)
	}
	if bag.RowKey != "EMPLOYEE_000123" || bag.Properties["EntityType"] != "EMPLOYEE.v2" || emp.RowKey != "000123" {
		t.Errorf("prefix stamp: %+v (value %q)", bag, emp.RowKey)
	}

	s, err := resolver.NewSchema(resolver.Config{Discriminator: resolver.ByRowKeyPrefix("-").WithProperty("")}, resolver.Register[Employee]("EMP"))
	if err != nil {
		t.Fatal(err)
	}
	if bag, err = s.Stamp(emp); err != nil || bag.RowKey != "EMP-000123" || bag.Properties["EntityType"] != nil {
		t.Errorf("prefix-only stamp: %+v, %v", bag, err)
	}

	// A user field of the discriminator's name is overwritten.
	type Tagged struct {
		PartitionKey, RowKey string
		EntityType           string
	}
	s, err = resolver.NewSchema(resolver.Config{}, resolver.Register[Tagged]("Tagged.v1"))
	if err != nil {
		t.Fatal(err)
	}
	if bag, err = s.Stamp(&Tagged{EntityType: "Wrong"}); err != nil || bag.Properties["EntityType"] != "Tagged.v1" {
		t.Errorf("stamp over a field: %+v, %v", bag, err)
	}

	// Property bags are written as they stand.
	raw := (&entity.DynamicEntity{PartitionKey: "p", RowKey: "r"}).Set("EntityType", "Other.v9")
	if got, err := propertySchema(t).Stamp(raw); err != nil || got != raw {
		t.Errorf("Stamp(bag) = %p, %v; want the bag itself", got, err)
	}
}

func TestStampErrors(t *testing.T) {
	s := propertySchema(t)
	for _, tc := range []struct {
		v  any
		is error
	}{
		{&EmployeeV1{}, resolver.ErrUnregistered},
		{&Embedded{}, resolver.ErrUnregistered},
		{Employee{}, entity.ErrInvalidType},
		{(*Employee)(nil), entity.ErrInvalidType},
		{(*entity.DynamicEntity)(nil), entity.ErrInvalidType},
		{nil, entity.ErrInvalidType},
		{42, entity.ErrInvalidType},
		{&Employee{PartitionKey: "a/b"}, entity.ErrInvalid},
		{&Project{Title: "x"}, entity.ErrInvalid}, // zero time.Time is before 1601
	} {
		if _, err := s.Stamp(tc.v); !errors.Is(err, tc.is) {
			t.Errorf("Stamp(%T) = %v, want %v", tc.v, err, tc.is)
		}
	}
	_, err := s.Stamp(&EmployeeV1{})
	if !strings.Contains(err.Error(), `only to read "Employee.v1"`) {
		t.Errorf("legacy write error does not say why: %v", err)
	}

	// 252 user properties plus the type property is one too many.
	bag := &entity.DynamicEntity{}
	for i := range 252 {
		bag.Set(fmt.Sprintf("P%d", i), int32(i))
	}
	type Wide struct {
		PartitionKey, RowKey string
		Extra                map[string]any `table:",extra"`
	}
	ws, err := resolver.NewSchema(resolver.Config{}, resolver.Register[Wide]("Wide.v1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := entity.Marshal(&Wide{Extra: bag.Properties}); err != nil {
		t.Fatalf("252 properties before stamping: %v", err)
	}
	var ve *entity.ValidationError
	if _, err := ws.Stamp(&Wide{Extra: bag.Properties}); !errors.As(err, &ve) || ve.Rule != entity.RulePropertyCount {
		t.Errorf("252 properties + EntityType: %v", err)
	}
}

func TestFuncStamp(t *testing.T) {
	s, err := resolver.NewSchema(
		resolver.Config{Discriminator: resolver.ByFunc(func(pk, rk string, props resolver.Props) string {
			kind, _, _ := strings.Cut(rk, ":")
			return map[string]string{"d": "Department.v1", "e": "Employee.v2"}[kind]
		}, func(name string, e *entity.DynamicEntity) error {
			if name == "Department.v1" {
				e.RowKey = "d:" + e.RowKey
			} else {
				e.RowKey = "e:" + e.RowKey
			}
			return nil
		})},
		resolver.Register[Department]("Department.v1"),
		resolver.Register[Employee]("Employee.v2"),
	)
	if err != nil {
		t.Fatal(err)
	}
	bag, err := s.Stamp(&Employee{PartitionKey: "Sales", RowKey: "7"})
	if err != nil || bag.RowKey != "e:7" || len(bag.Properties) != 4 || bag.Properties["EntityType"] != nil {
		t.Fatalf("func stamp: %+v, %v", bag, err)
	}
	if rk, err := resolver.RowKeyOf[Department](s, "Sales"); err != nil || rk != "d:Sales" {
		t.Errorf("RowKeyOf = %q, %v", rk, err)
	}
	v, err := s.Decode(body(t, s, &Employee{PartitionKey: "Sales", RowKey: "7", FirstName: "Jo"}))
	if e, ok := v.(*Employee); err != nil || !ok || e.FirstName != "Jo" || e.RowKey != "e:7" {
		t.Errorf("func decode: %#v, %v", v, err)
	}
	if _, err := resolver.OfType[Employee](s); err == nil {
		t.Error("OfType with a function discriminator has a filter")
	}

	failing, err := resolver.NewSchema(
		resolver.Config{Discriminator: resolver.ByFunc(func(string, string, resolver.Props) string { return "" }, func(string, *entity.DynamicEntity) error { return errors.New("no") })},
		resolver.Register[Employee]("Employee.v2"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := failing.Stamp(&Employee{}); err == nil || !strings.Contains(err.Error(), "no") {
		t.Errorf("failing stamp: %v", err)
	}
}

func TestEmbeddedSystemFields(t *testing.T) {
	s, err := resolver.NewSchema(resolver.Config{Discriminator: resolver.ByRowKeyPrefix("_")}, resolver.Register[Embedded]("EMB.v1"))
	if err != nil {
		t.Fatal(err)
	}
	b := []byte(`{"odata.etag":"W/\"datetime'2024-05-01T10%3A00%3A00.1234567Z'\"","PartitionKey":"p","RowKey":"EMB_42","Label":"x","EntityType":"EMB.v1","Timestamp":"2024-05-01T10:00:00.1234567Z"}`)
	v, err := s.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	e := v.(*Embedded)
	if e.PartitionKey != "p" || e.RowKey != "42" || e.Version == "" || e.Changed.IsZero() || e.Label != "x" {
		t.Fatalf("decoded %+v", e)
	}
	bag, err := s.Stamp(e)
	if err != nil || bag.RowKey != "EMB_42" || bag.ETag != e.Version {
		t.Fatalf("stamped %+v, %v", bag, err)
	}
}

func TestDecode(t *testing.T) {
	s := propertySchema(t)
	hired := time.Date(2012, 3, 4, 5, 6, 7, 0, time.UTC)
	rows := []any{
		&Department{PartitionKey: "Sales", RowKey: "DEPT", Name: "Sales", EmployeeCount: 2},
		&Employee{PartitionKey: "Sales", RowKey: "000123", FirstName: "Jo", LastName: "Jones", Salary: 1.5, EmployeeID: 1 << 33},
		&Project{PartitionKey: "Sales", RowKey: "P1", Title: "Launch", Budget: 5, Due: hired},
	}
	for _, want := range rows {
		got, err := s.Decode(body(t, s, want))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Decode:\n got %#v\nwant %#v", got, want)
		}
	}

	// Unknown and missing type names: a bag, or an error when strict.
	for _, b := range []string{
		`{"PartitionKey":"Sales","RowKey":"X","EntityType":"Invoice.v1","Total":3}`,
		`{"PartitionKey":"Sales","RowKey":"X","Total":3}`,
		`{"PartitionKey":"Sales","RowKey":"X","EntityType":7,"Total":3}`,
	} {
		v, err := s.Decode([]byte(b))
		bag, ok := v.(*entity.DynamicEntity)
		if err != nil || !ok || bag.RowKey != "X" || bag.Properties["Total"] != int32(3) {
			t.Errorf("lenient Decode(%s) = %#v, %v", b, v, err)
		}
		_, err = propertySchema(t, resolver.Config{Strict: true}).Decode([]byte(b))
		var re *resolver.RowError
		if !errors.Is(err, resolver.ErrUnknownType) || !errors.As(err, &re) || re.PartitionKey != "Sales" || re.RowKey != "X" {
			t.Errorf("strict Decode(%s) = %v", b, err)
		}
	}

	// An escaped type name is read like any other.
	v, err := s.Decode([]byte(`{"PartitionKey":"Sales","RowKey":"Q","EntityType":"Department\u002ev1","Name":"Q\"uote"}`))
	if d, ok := v.(*Department); err != nil || !ok || d.Name != `Q"uote` {
		t.Errorf("escaped name: %#v, %v", v, err)
	}

	// A registered type whose row does not fit is an error naming the row.
	_, err = s.Decode([]byte(`{"PartitionKey":"Sales","RowKey":"E","EntityType":"Employee.v2","Age":"old"}`))
	var re *resolver.RowError
	if !errors.Is(err, entity.ErrDecode) || !errors.As(err, &re) || re.TypeName != "Employee.v2" || re.RowKey != "E" {
		t.Errorf("mismatched row: %v", err)
	}
}

func TestDecodePrefix(t *testing.T) {
	s := prefixSchema(t)
	want := &Employee{PartitionKey: "Sales", RowKey: "000123", FirstName: "Jo", LastName: "Jones"}
	b := body(t, s, want)
	if !strings.Contains(string(b), `"RowKey":"EMPLOYEE_000123"`) {
		t.Fatalf("stored body %s", b)
	}
	got, err := s.Decode(b)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode = %#v, %v", got, err)
	}
	for _, tc := range []struct {
		body string
		want any
	}{
		// A row of the kind without the version property: the oldest version.
		{`{"PartitionKey":"Sales","RowKey":"EMPLOYEE_7","Name":"Ann Lee"}`, &Employee{PartitionKey: "Sales", RowKey: "7", FirstName: "Ann", LastName: "Lee"}},
		// The property chooses among the versions.
		{`{"PartitionKey":"Sales","RowKey":"EMPLOYEE_7","EntityType":"EMPLOYEE.v1","Name":"Ann Lee"}`, &Employee{PartitionKey: "Sales", RowKey: "7", FirstName: "Ann", LastName: "Lee"}},
		{`{"PartitionKey":"Sales","RowKey":"EMPLOYEE_7","EntityType":"EMPLOYEE.v2","FirstName":"Ann"}`, &Employee{PartitionKey: "Sales", RowKey: "7", FirstName: "Ann"}},
		// Ids may hold the separator: only the first one ends the kind.
		{`{"PartitionKey":"Sales","RowKey":"DEPARTMENT_SALES_EAST","Name":"East"}`, &Department{PartitionKey: "Sales", RowKey: "SALES_EAST", Name: "East"}},
		{`{"PartitionKey":"Sales","RowKey":"DEPARTMENT\u005fSALES","Name":"Esc"}`, &Department{PartitionKey: "Sales", RowKey: "SALES", Name: "Esc"}},
	} {
		got, err := s.Decode([]byte(tc.body))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Decode(%s):\n got %#v, %v\nwant %#v", tc.body, got, err, tc.want)
		}
	}
	for _, b := range []string{
		`{"PartitionKey":"Sales","RowKey":"INVOICE_1"}`,                             // unknown kind
		`{"PartitionKey":"Sales","RowKey":"EMPLOYEE"}`,                              // no separator
		`{"PartitionKey":"Sales","RowKey":"EMPLOYEE_1","EntityType":"EMPLOYEE.v9"}`, // unknown version
		`{"PartitionKey":"Sales","RowKey":"EMPLOYEE_1","EntityType":"PROJECT.v1"}`,  // the key and the property disagree
		`{"PartitionKey":"Sales","RowKey":"EMPLOYEE_1","EntityType":1}`,
		`{"PartitionKey":"Sales","RowKey":5}`,
	} {
		v, err := s.Decode([]byte(b))
		if _, ok := v.(*entity.DynamicEntity); err != nil && !errors.Is(err, entity.ErrDecode) || err == nil && !ok {
			t.Errorf("Decode(%s) = %#v, %v; want a bag", b, v, err)
		}
	}
}

func TestUpgradeChain(t *testing.T) {
	type V1 struct {
		PartitionKey, RowKey string
		N                    int32
	}
	type V2 struct {
		PartitionKey, RowKey string
		N                    int64
	}
	type V3 struct {
		PartitionKey, RowKey string
		ETag                 string
		Timestamp            time.Time
		N                    string
	}
	var calls []string
	s, err := resolver.NewSchema(
		resolver.Config{},
		resolver.Register[V3]("C.v3"),
		resolver.Upgrade("C.v2", func(o *V2) (*V3, error) {
			calls = append(calls, "v2")
			return &V3{N: fmt.Sprint(o.N), PartitionKey: "ignored"}, nil
		}),
		resolver.Upgrade("C.v1", func(o *V1) (*V2, error) {
			calls = append(calls, "v1")
			if o.N < 0 {
				return nil, errors.New("negative")
			}
			if o.N == 0 {
				return nil, nil
			}
			return &V2{N: int64(o.N) * 10}, nil
		}),
		resolver.Upgrade("C.v0", func(o *V3) (*V3, error) { o.N = "zero:" + o.N; return o, nil }),
	)
	if err != nil {
		t.Fatal(err)
	}
	b := `{"odata.etag":"W/\"datetime'2024-05-01T10%3A00%3A00.1234567Z'\"","PartitionKey":"p","RowKey":"r","EntityType":"C.v1","N":4,"Timestamp":"2024-05-01T10:00:00.1234567Z"}`
	v, err := s.Decode([]byte(b))
	want := &V3{PartitionKey: "p", RowKey: "r", ETag: `W/"datetime'2024-05-01T10%3A00%3A00.1234567Z'"`, Timestamp: time.Date(2024, 5, 1, 10, 0, 0, 123456700, time.UTC), N: "40"}
	if err != nil || !reflect.DeepEqual(v, want) || fmt.Sprint(calls) != "[v1 v2]" {
		t.Fatalf("chain: %#v, %v, calls %v", v, err, calls)
	}
	v, err = s.Decode([]byte(`{"PartitionKey":"p","RowKey":"r","EntityType":"C.v0","N":"x"}`))
	if err != nil || v.(*V3).N != "zero:x" {
		t.Errorf("same-type upgrade: %#v, %v", v, err)
	}
	for _, n := range []string{"-1", "0"} {
		_, err = s.Decode([]byte(`{"PartitionKey":"p","RowKey":"r","EntityType":"C.v1","N":` + n + `}`))
		var re *resolver.RowError
		if !errors.Is(err, resolver.ErrUpgrade) || !errors.As(err, &re) || re.TypeName != "C.v1" {
			t.Errorf("failing upgrade (N=%s): %v", n, err)
		}
	}
}

func TestSplitVersionKinds(t *testing.T) {
	// Kinds come from the names: only a well-formed .vN suffix is a version.
	for _, tc := range []struct{ name, rk string }{
		{"EMP.v2", "EMP_1"},
		{"EMP", "EMP_1"},
		{"EMP.v", "EMP.v_1"},
		{"EMP.v02", "EMP.v02_1"},
		{"EMP.v-1", "EMP.v-1_1"},
		{"EMP.vx", "EMP.vx_1"},
		{"A.v1.v2", "A.v1_1"},
	} {
		s, err := resolver.NewSchema(resolver.Config{Discriminator: resolver.ByRowKeyPrefix("_")}, resolver.Register[Employee](tc.name))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if rk, err := resolver.RowKeyOf[Employee](s, "1"); err != nil || rk != tc.rk {
			t.Errorf("%s: RowKeyOf = %q, %v; want %q", tc.name, rk, err, tc.rk)
		}
	}
}

func TestOfType(t *testing.T) {
	f, err := resolver.OfType[Employee](propertySchema(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Build(); got != "EntityType eq 'Employee.v1' or EntityType eq 'Employee.v2'" {
		t.Errorf("property filter: %s", got)
	}
	f, err = resolver.OfType[Department](prefixSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Build(); got != "RowKey ge 'DEPARTMENT_' and RowKey lt 'DEPARTMENT`'" {
		t.Errorf("prefix filter: %s", got)
	}
	if _, err := resolver.OfType[EmployeeV1](propertySchema(t)); !errors.Is(err, resolver.ErrUnregistered) {
		t.Errorf("OfType of an old version: %v", err)
	}
}

// TestStampValidatesTheStoredKey: the prefix is checked with the id, so a
// key that only the prefix makes too long is refused before any request.
func TestStampValidatesTheStoredKey(t *testing.T) {
	s, err := resolver.NewSchema(resolver.Config{Discriminator: resolver.ByRowKeyPrefix("_")}, resolver.Register[Employee]("EMPLOYEE.v1"))
	if err != nil {
		t.Fatal(err)
	}
	id := strings.Repeat("9", keys.MaxKeyLength-3) // fits alone, not after "EMPLOYEE_"
	if _, err := s.Stamp(&Employee{PartitionKey: "Sales", RowKey: id}); !errors.Is(err, entity.ErrInvalid) {
		t.Fatalf("Stamp of an over-long stored key: %v", err)
	}
	if _, err := s.Stamp(&entity.DynamicEntity{PartitionKey: "a#b", RowKey: "r"}); !errors.Is(err, entity.ErrInvalid) {
		t.Fatalf("Stamp of an invalid bag: %v", err)
	}
}
