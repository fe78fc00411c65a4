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
// tables of its own, and checks what it says and what it leaves.
func TestRun(t *testing.T) {
	names := Names{Orders: env.TableName(t), Restored: env.TableName(t)}
	var out strings.Builder
	if err := run(t.Context(), env.Account(), names, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"Stored 1000 orders of 10 customers as Order.v1.",
		"   export:  1000 entities,",
		"Exported 1000 entities in two ranges read in parallel",
		"   import:  1000 entities\n",
		"Restored 1000 entities into another table; its export is byte-identical: true.",
		"header PartitionKey,RowKey,Timestamp,Customer,Customer@type,EntityType,EntityType@type,Placed,Placed@type,Total,Total@type",
		"Migrated Order.v1 to Order.v2 in place: 1000 upgraded, 0 already current.",
		"Run again: 0 upgraded, 1000 already current.",
		`Order 000450 now reads First "Ann4", Last "O'Brien", Total 50.5.`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}

	// The tables: every order upgraded in place, its copy restored as it
	// was exported, before the migration.
	count := func(name, entityType string) int {
		raw, err := entity.NewTableFromService[entity.DynamicEntity](env.TableService, name)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for e, err := range raw.Query(t.Context(), entity.Query{}) {
			if err != nil {
				t.Fatal(err)
			}
			if typ, _ := entity.Prop[string](&e, "EntityType"); typ == entityType {
				n++
			}
		}
		return n
	}
	if n := count(names.Orders, "Order.v2"); n != 1000 {
		t.Errorf("%d orders of %s are Order.v2, want 1000", n, names.Orders)
	}
	if n := count(names.Restored, "Order.v1"); n != 1000 {
		t.Errorf("%d orders of %s are Order.v1, want 1000", n, names.Restored)
	}
}
