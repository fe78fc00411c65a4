package indexentity_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestMoveLostDeleteBesideWriter runs patterntest.MoveLostDelete on a Set
// of a SamePartition lastname index: a MoveTo whose delete's outcome is
// unknown after a lost reply (another writer inserted the employee again
// in the retry window) reads again and finishes the move.
func TestMoveLostDeleteBesideWriter(t *testing.T) {
	t.Parallel()
	set := func(t testing.TB, e *integration.Env, emps *entity.Table[Employee]) *indexentity.Set[Employee] {
		s, err := indexentity.New(patterntest.View[Employee](t, e, emps), indexentity.Config{}, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	insert := func(t testing.TB, emps *entity.Table[Employee], value string) error {
		return set(t, env, emps).Insert(context.Background(), &Employee{PartitionKey: "Sales", RowKey: "000001", LastName: value})
	}
	patterntest.MoveLostDelete(t, patterntest.MoveAdapter[Employee, *entity.Table[Employee]]{
		Env: env,
		Setup: func(t testing.TB) *entity.Table[Employee] {
			emps := patterntest.Table[Employee](t, env)
			if err := insert(t, emps, "Orig"); err != nil {
				t.Fatal(err)
			}
			return emps
		},
		Open: func(t testing.TB, e *integration.Env, emps *entity.Table[Employee]) func(context.Context, string, string, *entity.Table[Employee]) error {
			return set(t, e, emps).MoveTo
		},
		PK: "Sales", RK: "000001",
		Insert: insert,
		Raw: func(t testing.TB, table, pk, rk string) (string, bool) {
			m := rawGet(t, table, pk, rk)
			v, _ := m["LastName"].(string)
			return v, m != nil
		},
		Primaries: func(emps *entity.Table[Employee]) string { return emps.Name() },
		Derived: func(t testing.TB, emps *entity.Table[Employee]) {
			t.Helper()
			s := set(t, env, emps)
			for _, v := range []string{"Orig", "Theirs"} {
				if rks := lookup(t, s, "lastname", "Sales", v); len(rks) != 0 {
					t.Errorf("%s lists %v after the move", v, rks)
				}
			}
			noDrift(t, s)
		},
	})
}
