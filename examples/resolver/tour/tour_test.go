package tour_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/resolver/tour"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

func TestTour(t *testing.T) {
	ctx := context.Background()
	var out strings.Builder
	if err := tour.Tour(ctx, demo.New(env.Account(), env.ConnectionString), &out); err != nil {
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
		"Deleted the table.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}
	// The tour leaves no table behind.
	for p := env.TableService.NewListTablesPager(nil); p.More(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range page.Tables {
			if strings.HasPrefix(*tb.Name, "tkresolvertour") {
				t.Errorf("table %s left behind", *tb.Name)
			}
		}
	}
}
