package main

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program's story as main does, on the test account with
// tables and queues of its own, and checks what it says and what it
// leaves.
func TestRun(t *testing.T) {
	names := Names{Departments: env.TableName(t), Directory: env.TableName(t), CopyQueue: env.QueueName(t)}
	t.Cleanup(func() {
		_, _ = env.QueueService.DeleteQueue(context.Background(), names.CopyQueue, nil)
		_, _ = env.QueueService.DeleteQueue(context.Background(), names.CopyQueue+"-poison", nil)
	})
	var out strings.Builder
	if err := run(t.Context(), env.Account(), names, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"Sales is managed by Jones, Jeff, phone 425-555-0101: 1 point query",
		"reached the department in the same transaction: 425-555-0199 (2 reads and 1 transaction)",
		"the department now shows Smith, Sue, 425-555-0102",
		"Check: 0 copies disagree",
		"before the worker runs, employees: CC-100 CC-100",
		"After the worker: directory manager Jones, Jeffrey; employees: CC-200 CC-200",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}

	// The copies as stored, read with clients of their own: each equals
	// its source.
	raw := func(table string) *entity.Table[entity.DynamicEntity] {
		tbl, err := entity.NewTableFromService[entity.DynamicEntity](env.TableService, table)
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	get := func(table, pk, rk, prop string) string {
		e, err := raw(table).Get(t.Context(), pk, rk)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := entity.Prop[string](&e, prop)
		return v
	}
	if got := get(names.Departments, "Sales", "department", "ManagerID"); got != "empid 000124" {
		t.Errorf("the department's manager is %q", got)
	}
	if got := get(names.Directory, "departments", "Sales", "ManagerName"); got != get(names.Departments, "Sales", "empid 000123", "Name") {
		t.Errorf("the directory's copy of the manager's name is %q", got)
	}
	for _, id := range []string{"empid 000123", "empid 000125"} {
		if got := get(names.Departments, "Sales", id, "CostCenter"); got != get(names.Directory, "departments", "Sales", "CostCenter") {
			t.Errorf("%s's copy of the cost center is %q", id, got)
		}
	}
}
