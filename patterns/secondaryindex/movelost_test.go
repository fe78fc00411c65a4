package secondaryindex_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestMoveLostDeleteBesideWriter runs patterntest.MoveLostDelete on a Set
// of the guide's two SamePartition indexes: a MoveTo whose delete's
// outcome is unknown after a lost reply (another writer inserted the
// employee again in the retry window) reads again and finishes the move,
// its entries gone with it.
func TestMoveLostDeleteBesideWriter(t *testing.T) {
	t.Parallel()
	insert := func(t testing.TB, tbl *entity.Table[Employee], value string) error {
		return localSet(t, tbl).Insert(context.Background(), &Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: value, Email: "j@contoso.com"})
	}
	patterntest.MoveLostDelete(t, patterntest.MoveAdapter[Employee, *entity.Table[Employee]]{
		Env: env,
		Setup: func(t testing.TB) *entity.Table[Employee] {
			tbl := employees(t, env)
			if err := insert(t, tbl, "Orig"); err != nil {
				t.Fatal(err)
			}
			return tbl
		},
		Open: func(t testing.TB, e *integration.Env, tbl *entity.Table[Employee]) func(context.Context, string, string, *entity.Table[Employee]) error {
			return localSet(t, patterntest.View[Employee](t, e, tbl)).MoveTo
		},
		PK: "Sales", RK: empid(1),
		Insert: insert,
		Raw: func(t testing.TB, table, pk, rk string) (string, bool) {
			m := rawGet(t, rawTable(t, table), pk, rk)
			v, _ := m["LastName"].(string)
			return v, m != nil
		},
		Primaries: func(tbl *entity.Table[Employee]) string { return tbl.Name() },
		Derived: func(t testing.TB, tbl *entity.Table[Employee]) {
			t.Helper()
			if left := rowKeys(t, tbl, ""); len(left) != 0 {
				t.Errorf("left after the move: %q", left)
			}
			if fs := findings(t, localSet(t, tbl), secondaryindex.CheckOptions{}); len(fs) != 0 {
				t.Errorf("drift: %v", fs)
			}
		},
	})
}
