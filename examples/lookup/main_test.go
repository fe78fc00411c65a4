package main

import (
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program's story as main does, on the test account with
// a table of its own, and checks what it says and what it leaves.
func TestRun(t *testing.T) {
	names := Names{Company: env.TableName(t)}
	var out strings.Builder
	if err := run(t.Context(), env.Account(), names, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"Joined 200 employees with their departments: 40 employees in CC-100, 1 storage transaction",
		`within the TTL the cache still says "Research"`,
		`After Refresh: "Research & Development"; the revalidation asked only for entities changed since`,
		"of 5, in 1 query",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}

	// The table: five departments, d02 renamed, and 200 employees.
	raw, err := entity.NewTableFromService[entity.DynamicEntity](env.TableService, names.Company)
	if err != nil {
		t.Fatal(err)
	}
	d, err := raw.Get(t.Context(), "departments", "d02")
	if err != nil || d.Properties["Name"] != "Research & Development" {
		t.Errorf("d02 is %v, %v", d.Properties, err)
	}
	n := 0
	for _, err := range raw.Query(t.Context(), entity.Query{Filter: filter.RowKeyPrefix("empid ")}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 200 {
		t.Errorf("%d employees stored, want 200", n)
	}
}
