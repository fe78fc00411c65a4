package main

import (
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program's story as main does, on the test account with
// a table of its own, and checks what it says and what it leaves.
func TestRun(t *testing.T) {
	names := Names{HR: env.TableName(t)}
	var out strings.Builder
	if err := run(t.Context(), env.Account(), names, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		`the stored entity has EntityType = "Employee.v2"`,
		"   *Employee   000001  Ann Lee\n",
		"   *Employee   000123  Jonathan Jones\n",
		"   property bag INV-7  of unknown type Invoice.v3, Total 1200.5\n",
		"   *Department SALES   Sales, managed by Jonathan Jones, 3 employees\n",
		`she is now stored as "Employee.v2"`,
		"Hired 000125: EmployeeCount 4",
		"failed at operation 1 (EntityAlreadyExists): the whole transaction was refused, EmployeeCount is still 4.",
		"   attempt 1: read EmployeeCount = 4\n",
		"   attempt 2: read EmployeeCount = 5\n",
		"the retry merged EmployeeCount = 6 after 2 attempts",
		"stored RowKeys: DEPARTMENT_MARKETING, EMPLOYEE_000200, EMPLOYEE_000201",
		"employees only, a range: PartitionKey eq 'Marketing' and RowKey ge 'EMPLOYEE_' and RowKey lt 'EMPLOYEE`'",
		"   *Employee 000200 Bo Chen\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}

	// The table as stored: every row with the type it was written as, Ann
	// upgraded, the department counting 6.
	raw, err := entity.NewTableFromService[entity.DynamicEntity](env.TableService, names.HR)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for e, err := range raw.Query(t.Context(), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		typ, _ := entity.Prop[string](&e, "EntityType")
		rows = append(rows, e.PartitionKey+"/"+e.RowKey+" "+typ)
		if e.RowKey == "SALES" {
			if n, _ := entity.Prop[int32](&e, "EmployeeCount"); n != 6 {
				t.Errorf("Sales counts %d employees, want 6", n)
			}
		}
	}
	want := "Marketing/DEPARTMENT_MARKETING DEPARTMENT.v1,Marketing/EMPLOYEE_000200 EMPLOYEE.v2,Marketing/EMPLOYEE_000201 EMPLOYEE.v2," +
		"Sales/000001 Employee.v2,Sales/000123 Employee.v2,Sales/000124 Employee.v2,Sales/000125 Employee.v2,Sales/INV-7 Invoice.v3,Sales/SALES Department.v1"
	if got := strings.Join(rows, ","); got != want {
		t.Errorf("stored rows\n%s\nwant\n%s", got, want)
	}
}
